"""A table's cells with their row and column headers, from its rows of cell texts (a leaf).

A table is plain data: `rows` (a list of rows, each a list of cell texts, all of one length) and
`header_rows`, how many of its leading rows are column headers. The rules here say what each cell
means; the PDF side (reader/ingest/tables.py) only finds where the cells are.

- A cell's number: the cell reduced to one number, its marks taken off ("85.1*", "**85.1**",
  "85.1†", "(85.1)", "85.1 ± 0.3", "85.1 (0.3)", "45%", "−2.3"). A cell with words is no number.
- Column headers: the leading rows until the first whose cells after the label columns are
  mostly data — numbers, or counts and ranges such as "14 of 14" (at least one header row when
  the table has two rows or more).
- Label columns: the leading columns whose body cells are mostly not numbers (at least the
  first); a cell's row header is its row's label cells joined, an empty label cell taking the
  one above it (a group name written once for the rows under it).
- A cell's column header is its column's header cells joined, top to bottom, repeats dropped.
"""

from __future__ import annotations

import re
from dataclasses import asdict, dataclass, field

# marks set beside a number in a table: significance, best result, footnotes; a footnote's raised
# digits after a number's mark go with it ("27.19†134")
_MARKS = re.compile(r"[*†‡§¶#♠♣♥♦✓✗^°]+|\\\w+")
_FOOTNOTE = re.compile(r"(?<=\d)[*†‡§¶#^]+\d+")
_CELL_NUMBER = re.compile(
    r"^\(?\s*(?P<sign>[+\-−–]?)\s*(?P<int>\d{1,3}(?:,\d{3})+|\d+)?(?:\.(?P<frac>\d+))?\s*(?P<pct>%)?\s*\)?"
    r"(?:\s*(?:±|\+/-|\+-)\s*[\d.]+%?|\s*\(\s*[±]?\s*[\d.]+%?\s*\)|\s*\[[\d., \-–]+\])?$"
)
_DATA = re.compile(r"^[\d.,]+%?\s*(?:of|to|/|–|-|—)\s*[\d.,]+%?$")
SEPARATOR = " / "


@dataclass
class Table:
    """A table of a paper as cells (reader/ingest/tables.py finds them in a PDF). Pages are 1-based;
    rectangles are [x0, y0, x1, y1] as fractions of the page's width and height."""

    label: str  # "Table 2"
    caption: str
    page: int
    rect: list[float]
    rows: list[list[str]]  # cell texts, every row as long as the others
    header_rows: int  # how many leading rows are column headers
    cell_rects: list[list[list[float] | None]] = field(default_factory=list)  # None: an empty cell
    method: str = "grid"  # grid (pymupdf's find_tables) | words (word positions)

    def cells(self) -> list[Cell]:
        return table_cells(self.rows, self.header_rows)

    def to_json(self) -> dict:
        return asdict(self)


@dataclass(frozen=True)
class CellNumber:
    value: float
    decimals: int  # digits after the point as printed: "85.10" has 2
    percent: bool


@dataclass(frozen=True)
class Cell:
    row: int
    col: int
    text: str
    number: CellNumber | None
    row_header: str
    col_header: str

    @property
    def value(self) -> float | None:
        return self.number.value if self.number else None


def cell_number(text: str) -> CellNumber | None:
    """The one number a cell holds, or None ("n/a", "BERT", "12 / 15", "")."""
    cleaned = (
        _MARKS.sub("", _FOOTNOTE.sub("", text or "")).replace("\u2009", "").replace("\u00a0", " ").strip()
    )
    if not cleaned or len(cleaned) > 40:
        return None
    m = _CELL_NUMBER.match(cleaned)
    if not m or not (m.group("int") or m.group("frac")):
        return None
    whole, frac = (m.group("int") or "0").replace(",", ""), m.group("frac") or ""
    value = float(whole + ("." + frac if frac else ""))
    if m.group("sign") in ("-", "−", "–"):
        value = -value
    return CellNumber(value, len(frac), bool(m.group("pct")))


def _numeric_share(cells: list[str], counts=cell_number) -> float:
    filled = [c for c in cells if c.strip()]
    if not filled:
        return 0.0
    return sum(1 for c in filled if counts(c)) / len(filled)


def data_cell(text: str) -> bool:
    """A cell that holds data rather than a name: one number, or a count or range of two
    ("14 of 14", "44 to 112", "3/5", "10–20%") — which no column header is."""
    return cell_number(text) is not None or bool(_DATA.match(" ".join(text.split())))


def guess_header_rows(rows: list[list[str]], label_cols: int = 1) -> int:
    """How many leading rows are column headers: those before the first row whose cells after
    the label columns are mostly numbers; 1 for a table of words (two rows or more)."""
    if len(rows) < 2:
        return 0
    for i, row in enumerate(rows):
        if _numeric_share(row[label_cols:], data_cell) >= 0.5:
            return max(1, i) if i else 0
    return 1


def label_columns(rows: list[list[str]], header_rows: int) -> int:
    """How many leading columns name the rows: those whose body cells are mostly not numbers
    (at least the first; at most all but one)."""
    body = rows[header_rows:] or rows
    width = max((len(r) for r in rows), default=0)
    n = 1
    while n < width - 1 and _numeric_share([r[n] for r in body if n < len(r)]) < 0.5:
        if not any(r[n].strip() for r in body if n < len(r)):
            break
        n += 1
    return n


def _joined(parts: list[str]) -> str:
    out: list[str] = []
    for p in parts:
        p = " ".join(p.split())
        if p and p not in out:
            out.append(p)
    return SEPARATOR.join(out)


def table_cells(rows: list[list[str]], header_rows: int | None = None) -> list[Cell]:
    """Every body cell outside the label columns, with its number and its row and column
    headers, row by row."""
    if not rows:
        return []
    width = max(len(r) for r in rows)
    rows = [list(r) + [""] * (width - len(r)) for r in rows]
    if header_rows is None:
        header_rows = guess_header_rows(rows)
    labels = label_columns(rows, header_rows)
    col_headers = [_joined([rows[i][j] for i in range(header_rows)]) for j in range(width)]
    above = [""] * labels
    cells: list[Cell] = []
    for i in range(header_rows, len(rows)):
        row = rows[i]
        names = []
        for j in range(labels):
            if row[j].strip():
                above[j] = row[j]
                # a new name in a column empties the ones to its right (a new group starts)
                for k in range(j + 1, labels):
                    if not row[k].strip():
                        above[k] = ""
            names.append(above[j] if j < labels - 1 or row[j].strip() else "")
        row_header = _joined(names)
        for j in range(labels, width):
            text = " ".join(row[j].split())
            if text:
                cells.append(Cell(i, j, text, cell_number(text), row_header, col_headers[j]))
    return cells
