"""The extraction table as plain data: a row per paper, a cell per column, each cell with the
passage it rests on (page and text) and the audit's verdict; as JSON and as CSV."""

from __future__ import annotations

import csv
import io
from dataclasses import dataclass, field

from reader.audit.loop import MARK, UNCHECKED, UNSUPPORTED
from reader.text.copied import joined_lines
from reader.text.pages import page_range

# (key, heading): the columns every table has, in the order the table, the page and the CSV show
# them; a table may add checklist items (reader.text.rigour ITEMS, by key) and questions of the
# user's own (keys q1, q2 …, the question as heading) after them
COLUMNS = [
    ("task", "Task"),
    ("datasets", "Datasets and sizes"),
    ("method", "Method"),
    ("baselines", "Baselines"),
    ("result", "Headline result"),
]
HEADINGS = dict(COLUMNS)
# a spreadsheet runs a cell that starts with one of these as a formula
_FORMULA_START = ("=", "+", "-", "@", "\t", "\r")


@dataclass
class Source:
    """The passage a cell rests on (chunk_id None: the paper's opening text, no passage)."""

    chunk_id: int | None
    page_start: int
    page_end: int
    text: str
    section: str = ""  # the heading the passage sits under, when known

    @property
    def pages(self) -> str:
        """The page or pages as a reader sees them: "p. 3" or "pp. 3–4"."""
        return page_range(self.page_start, self.page_end, prose=True)

    @property
    def page(self) -> int:
        return self.page_start

    def to_json(self) -> dict:
        return {
            "chunk_id": self.chunk_id,
            "pages": page_range(self.page_start, self.page_end),
            "text": self.text,
        }


@dataclass
class Cell:
    """One column of one paper. `value` is the claim the cell makes ("" when nothing was found:
    no claim, nothing audited); `origin` says where it came from (a synthesis heading or a rule
    over the passages); `sources` are the passages it was checked against, the nearest first."""

    column: str
    value: str = ""
    origin: str = ""
    sources: list[Source] = field(default_factory=list)
    verdict: str = ""  # supported | unsupported | unchecked; "" for an empty cell
    reasons: list[str] = field(default_factory=list)
    quote: str = ""  # the sentence of the first source nearest to the value

    @property
    def marked(self) -> bool:
        """Without support (or not checked): shown with [待验证], as an analysis's sentence is."""
        return self.verdict in (UNSUPPORTED, UNCHECKED)

    @property
    def shown(self) -> str:
        return (MARK + self.value) if self.value and self.marked else self.value

    @property
    def source(self) -> Source | None:
        return self.sources[0] if self.sources else None

    @property
    def pages(self) -> str:
        return self.source.pages if self.source else ""

    def to_json(self) -> dict:
        return {
            "column": self.column,
            "value": self.value,
            "shown": self.shown,
            "verdict": self.verdict,
            "origin": self.origin,
            "pages": self.pages,
            "quote": self.quote,
            "reasons": list(self.reasons),
            "sources": [s.to_json() for s in self.sources],
        }


@dataclass
class TableRow:
    paper_id: str
    title: str
    cells: dict[str, Cell]  # in the table's column order
    notes: list[str] = field(default_factory=list)  # what could not be filled, and why

    def to_json(self) -> dict:
        return {
            "paper_id": self.paper_id,
            "title": self.title,
            "cells": {key: cell.to_json() for key, cell in self.cells.items()},
            "notes": list(self.notes),
        }


@dataclass
class ExtractionTable:
    """`reader table`: one row per selected paper, in the order they were given."""

    rows: list[TableRow]
    llm_calls: int = 0
    # (key, heading) of each column, in order: COLUMNS, then the checklist's and the user's
    columns: list[tuple[str, str]] = field(default_factory=lambda: list(COLUMNS))

    @property
    def n_marked(self) -> int:
        return sum(1 for row in self.rows for cell in row.cells.values() if cell.marked)

    def to_json(self) -> dict:
        return {
            "columns": [{"key": key, "heading": heading} for key, heading in self.columns],
            "rows": [row.to_json() for row in self.rows],
            "llm_calls": self.llm_calls,
        }

    def to_csv(self) -> str:
        """One line per paper: its id and title, then for each column its value ([待验证] first
        when the audit found no support), verdict, page(s) and source: the sentence of the
        passage nearest to the value. Ligatures are written as their letters and a word broken
        at a line's end whole (reader.text.copied)."""
        out = io.StringIO()
        writer = csv.writer(out, lineterminator="\r\n")
        header = ["paper_id", "title"]
        for key, _ in self.columns:
            header += [key, f"{key}_verdict", f"{key}_pages", f"{key}_source"]
        writer.writerow(header)
        for row in self.rows:
            line = [row.paper_id, row.title]
            for key, _ in self.columns:
                cell = row.cells.get(key) or Cell(key)
                source = cell.source
                line += [
                    cell.shown,
                    cell.verdict,
                    page_range(source.page_start, source.page_end) if source else "",
                    cell.quote or (" ".join(source.text.split()) if source else ""),
                ]
            writer.writerow([_inert(joined_lines(v)) for v in line])
        return out.getvalue()


def _inert(value: str) -> str:
    """A value a spreadsheet shows as text: one that would start a formula gets a leading '."""
    return "'" + value if value.startswith(_FORMULA_START) else value
