"""The extraction table across papers (`reader table`, the web page's /table): for each chosen
paper its task, datasets and sizes, method, baselines and headline result, each cell with the
passage and page it rests on, audited like any sentence, exportable as CSV."""

from reader.table.build import MAX_PAPERS, build_table
from reader.table.model import COLUMNS, Cell, ExtractionTable, Source, TableRow

__all__ = ["COLUMNS", "MAX_PAPERS", "Cell", "ExtractionTable", "Source", "TableRow", "build_table"]
