"""A paper's tables beside its note: one CSV file per table, and the note's "Tables" section.

`<note stem>-table-2.csv` holds Table 2's rows as the parser read them (the header rows first,
every row as long as the others; UTF-8, comma-separated, quoted where needed), next to
`<note stem>.md`. The note lists each table with its page and caption, links its CSV file and
shows its first rows as a Markdown table.
"""

from __future__ import annotations

import csv
import io
import re
from pathlib import Path

from reader.export.markdown import escape_cell, escape_inline, quote
from reader.text.controls import clean_text
from reader.text.grid import Table

PREVIEW_ROWS = 12  # rows of a table shown in the note; the CSV file has them all
_NOT_NAME = re.compile(r"[^\w]+", re.UNICODE)


def table_csv(table: Table) -> str:
    """The table's rows as CSV text."""
    out = io.StringIO()
    writer = csv.writer(out, lineterminator="\n")
    for row in table.rows:
        writer.writerow([clean_text(cell) for cell in row])
    return out.getvalue()


def csv_file_name(note_file_name: str, table: Table, ordinal: int) -> str:
    """ "<note stem>-table-2.csv" ("-table-N" from the table's place where its label has no number)."""
    stem = note_file_name.removesuffix(".md")
    label = _NOT_NAME.sub("-", (table.label or "").lower()).strip("-") or f"table-{ordinal + 1}"
    return f"{stem}-{label}.csv"


def _markdown_rows(table: Table) -> list[str]:
    rows = table.rows[: max(PREVIEW_ROWS, table.header_rows + 1)]
    if not rows:
        return []
    width = max(len(r) for r in rows)
    head = max(1, table.header_rows)
    header = [
        " / ".join(p for p in dict.fromkeys(r[j] for r in rows[:head]) if p.strip()) for j in range(width)
    ]
    lines = ["| " + " | ".join(escape_cell(h) or " " for h in header) + " |", "|" + "---|" * width]
    for row in rows[head:]:
        cells = list(row) + [""] * (width - len(row))
        lines.append("| " + " | ".join(escape_cell(c) or " " for c in cells) + " |")
    if len(table.rows) > len(rows):
        lines.append(f"\n({len(table.rows) - len(rows)} more rows in the CSV file)")
    return lines


def tables_section(note_file_name: str, tables: list[Table]) -> str:
    """The note's "Tables" section ("" for a paper without tables)."""
    if not tables:
        return ""
    lines = ["", "## Tables", ""]
    for i, table in enumerate(tables):
        name = csv_file_name(note_file_name, table, i)
        caption = escape_inline(quote(table.caption or ""))
        lines += [
            f"**{escape_inline(table.label or f'Table {i + 1}')}** (p. {table.page}, [CSV]({name})): {caption}",
            "",
        ]
        lines += _markdown_rows(table) + [""]
    return "\n".join(lines)


def write_tables(out_dir: Path, note_file_name: str, tables: list[Table], write) -> list[Path]:
    """Write each table's CSV file beside the note with `write(path, text)`; the paths written."""
    paths = []
    for i, table in enumerate(tables):
        path = out_dir / csv_file_name(note_file_name, table, i)
        write(path, table_csv(table))
        paths.append(path)
    return paths
