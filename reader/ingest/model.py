"""Plain data produced by ingest: what a parsed paper and its chunks look like."""

from __future__ import annotations

from dataclasses import dataclass, field

from reader.text.figures import Figure as FigureData  # a figure and its picture: plain data
from reader.text.grid import Table as TableData  # a table as cells: plain data every layer reads


@dataclass
class Block:
    """A run of text in reading order. Pages are 1-based."""

    text: str
    page: int
    section: str = ""
    kind: str = "body"  # body | heading | caption | reference | title | abstract


@dataclass
class CaptionData:
    kind: str  # figure | table
    label: str  # "Figure 2", "Table 1"
    page: int
    text: str


def first_captions_by_page(captions: list[CaptionData], kind: str) -> dict[int, list[CaptionData]]:
    """The captions of one kind ("figure", "table") by page, the first of each label only (a
    label's later captions are references to it, or a "continued")."""
    by_page: dict[int, list[CaptionData]] = {}
    seen: set[str] = set()
    for c in captions:
        if c.kind == kind and c.label not in seen:
            seen.add(c.label)
            by_page.setdefault(c.page, []).append(c)
    return by_page


@dataclass
class ReferenceData:
    marker: str  # "[12]", "12." or "" (author-year)
    page: int
    text: str


@dataclass
class ParsedPaper:
    sha256: str
    source_path: str
    source_kind: str  # pdf | txt | md
    title: str
    authors: list[str]
    year: int | None
    abstract: str
    pages: int
    language: str  # en | zh
    blocks: list[Block]
    sections: list[dict] = field(default_factory=list)  # [{"title", "page"}]
    captions: list[CaptionData] = field(default_factory=list)
    references: list[ReferenceData] = field(default_factory=list)
    doi: str | None = None
    tables: list[TableData] = field(default_factory=list)
    figures: list[FigureData] = field(default_factory=list)


@dataclass
class ChunkData:
    ordinal: int
    section: str
    page_start: int
    page_end: int
    text: str
    n_tokens: int
    # [[page, x0, y0, x1, y1], ...] as fractions of the page (reader.ingest.pages); [] for text files
    rects: list = field(default_factory=list)
