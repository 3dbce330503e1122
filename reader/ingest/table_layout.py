"""Cells from words and rules: the geometry of a table, without pymupdf (plain data in and out).

Words become lines (by their vertical overlap), lines become phrases (cut where words stand
apart, between two plain numbers, and at a vertical rule), the fullest lines of numbers give the
columns, lines become rows, and every word goes to the row and column its centre falls in:

- columns: the phrases of the lines of numbers that have at least 0.8 of the most phrases two
  lines have (all such lines where fewer than two have numbers), merged where they overlap and never
  across a vertical rule; a centred "N/A" standing for four cells does not join two columns;
- rows: a line carries on the row above it (a wrapped cell) when it has no number, fills
  fewer columns than that row, all of them ones the row fills, and stands no further from it
  than twice the table's usual gap between lines (a footnote under the table does not); a name
  broken at a hyphen over two rows ("Un-" / "supervised") is made whole in the first; inside one ruled row of pymupdf's grid, lines join unless both
  carry numbers, or, above the first row of numbers, unless the line fills a column the row
  does not (a second level of column headers);
- a phrase in a header row above the last one spans the columns under the horizontal rule just
  beneath it (booktabs' \\cmidrule), else those between the vertical rules on either side of it,
  else those whose centre it covers ("Classification" over "MAG" and "MeSH").
"""

from __future__ import annotations

import re
import statistics
from dataclasses import dataclass, field

from reader.text.grid import cell_number, guess_header_rows

# a gap between two words wider than this share of the line's height separates two phrases
PHRASE_GAP = 0.55
# a number stands apart from the words before it from a narrower gap ("SPECTER  84.2")
NUMBER_GAP = 0.25
MAX_TABLE_ROWS = 200
MAX_TABLE_COLS = 40
_PLAIN = re.compile(r"^[+\-−–]?\d[\d,]*(?:\.\d+)?%?[*†‡]*$")

Rect = tuple[float, float, float, float]


@dataclass
class Word:
    x0: float
    y0: float
    x1: float
    y1: float
    text: str

    @property
    def cx(self) -> float:
        return (self.x0 + self.x1) / 2

    @property
    def cy(self) -> float:
        return (self.y0 + self.y1) / 2


@dataclass
class Rules:
    """Ruling lines near a table: horizontal (x0, x1, y) and vertical (x, y0, y1)."""

    horizontal: list[tuple[float, float, float]] = field(default_factory=list)
    vertical: list[tuple[float, float, float]] = field(default_factory=list)

    def between(self, a: float, b: float, y0: float, y1: float) -> bool:
        """A vertical rule between x = a and x = b along the line y0..y1."""
        return any(a < x < b and ry0 < y1 - 1 and ry1 > y0 + 1 for x, ry0, ry1 in self.vertical)


@dataclass
class Line:
    words: list[Word]
    rules: Rules = field(default_factory=Rules)

    @property
    def x0(self) -> float:
        return min(w.x0 for w in self.words)

    @property
    def x1(self) -> float:
        return max(w.x1 for w in self.words)

    @property
    def y0(self) -> float:
        return min(w.y0 for w in self.words)

    @property
    def y1(self) -> float:
        return max(w.y1 for w in self.words)

    @property
    def height(self) -> float:
        return statistics.median(w.y1 - w.y0 for w in self.words) or 1.0

    def phrases(self) -> list[list[Word]]:
        """The line cut where words stand apart, between two plain numbers ("83.4 84.0"), before
        a number a little apart from the words before it, and at a vertical rule."""
        out: list[list[Word]] = []
        gap = PHRASE_GAP * self.height
        for w in self.words:
            if out:
                last = out[-1][-1]
                space = w.x0 - last.x1
                apart = (
                    space > gap
                    or (_PLAIN.match(w.text) and _PLAIN.match(last.text))
                    or (
                        space > NUMBER_GAP * self.height
                        and _PLAIN.match(w.text)
                        and not _PLAIN.match(last.text)
                    )
                )
                if not apart and not self.rules.between(last.x1 - 0.5, w.x0 + 0.5, self.y0, self.y1):
                    out[-1].append(w)
                    continue
            out.append([w])
        return out


def lines_of(words: list[Word], rules: Rules | None = None) -> list[Line]:
    """Words grouped into lines by their vertical overlap, top to bottom, each left to right."""
    rules = rules or Rules()
    lines: list[Line] = []
    for w in sorted(words, key=lambda w: (w.cy, w.x0)):
        if lines:
            last = lines[-1]
            overlap = min(last.y1, w.y1) - max(last.y0, w.y0)
            if overlap >= 0.5 * min(w.y1 - w.y0, last.y1 - last.y0):
                last.words.append(w)
                continue
        lines.append(Line([w], rules))
    for line in lines:
        line.words.sort(key=lambda w: w.x0)
    return lines


def phrase_text(phrase: list[Word]) -> str:
    return " ".join(w.text for w in phrase)


def numeric_line(phrases: list[list[Word]]) -> bool:
    return sum(1 for p in phrases if cell_number(phrase_text(p)) is not None) * 2 >= len(phrases)


def columns_of(lines: list[Line], rules: Rules | None = None) -> list[tuple[float, float]]:
    """Column spans (see the module's docstring)."""
    rules = rules or Rules()
    phrased = [ln.phrases() for ln in lines]
    counts = sorted((len(p) for p in phrased), reverse=True)
    most = counts[1] if len(counts) > 1 else (counts[0] if counts else 0)  # reached by two lines
    full = [(ln, p) for ln, p in zip(lines, phrased) if len(p) >= max(2, 0.8 * most)]
    numeric = [(ln, p) for ln, p in full if numeric_line(p)]
    numeric = numeric if len(numeric) >= 2 else full
    spans = sorted((p[0].x0, p[-1].x1, ln.y0, ln.y1) for ln, ps in numeric for p in ps)
    columns: list[list[float]] = []
    for x0, x1, y0, y1 in spans:
        if columns and x0 <= columns[-1][1] and not rules.between(columns[-1][1] - 0.5, x0 + 0.5, y0, y1):
            columns[-1][1] = max(columns[-1][1], x1)
        else:
            columns.append([x0, x1])
    return [(c[0], c[1]) for c in columns]


def column_of(x0: float, x1: float, columns) -> int:
    """The column a span overlaps most (the nearest where it overlaps none)."""
    best, best_key = 0, None
    for j, (c0, c1) in enumerate(columns):
        key = (min(x1, c1) - max(x0, c0), -min(abs(x0 - c1), abs(x1 - c0)))
        if best_key is None or key > best_key:
            best, best_key = j, key
    return best


def spanned(phrase: list[Word], columns, rules: Rules, others: list[list[Word]] = ()) -> list[int]:
    """The columns a header phrase stands over (see the module's docstring); `others`, the other
    phrases of its line, each keep what stands under them."""
    x0, x1, y1 = phrase[0].x0, phrase[-1].x1, max(w.y1 for w in phrase)
    y0, cx = min(w.y0 for w in phrase), (phrase[0].x0 + phrase[-1].x1) / 2
    height = y1 - y0
    centres = [(c0 + c1) / 2 for c0, c1 in columns]
    width = columns[-1][1] - columns[0][0] if columns else 0.0
    for r0, r1, ry in rules.horizontal:
        if (
            y1 - 1 <= ry <= y1 + height + 3
            and r0 - 1 <= cx <= r1 + 1
            and r1 - r0 < 0.9 * width
            and not any(r0 <= (o[0].x0 + o[-1].x1) / 2 <= r1 for o in others if o is not phrase)
        ):
            under = [j for j, c in enumerate(centres) if r0 - 1 <= c <= r1 + 1]
            if under:
                return under
    crossing = [x for x, ry0, ry1 in rules.vertical if ry0 < y1 - 1 and ry1 > y0 + 1]
    if crossing:
        # on each side: the rule nearest to it before the phrase beside it, else halfway there
        near_left = max((o[-1].x1 for o in others if o[-1].x1 <= x0), default=float("-inf"))
        near_right = min((o[0].x0 for o in others if o[0].x0 >= x1), default=float("inf"))
        lefts = [x for x in crossing if near_left - 0.5 <= x <= x0 + 0.5]
        rights = [x for x in crossing if x1 - 0.5 <= x <= near_right + 0.5]
        left = max(lefts) if lefts else (near_left + x0) / 2
        right = min(rights) if rights else (x1 + near_right) / 2
        between = [j for j, c in enumerate(centres) if left < c < right]
        if between:
            return between
    inside = [j for j, c in enumerate(centres) if x0 - 2 <= c <= x1 + 2]
    return inside if len(inside) > 1 else [column_of(x0, x1, columns)]


Cells = dict[int, list[Word]]


def over_columns(phrase: list[Word], columns) -> list[list[Word]]:
    """A phrase of one word per column it stands over ("CLS USR CITE REC" set close together)
    as one phrase per word; any other phrase whole."""
    centres = [(c0 + c1) / 2 for c0, c1 in columns]
    under = [c for c in centres if phrase[0].x0 - 2 <= c <= phrase[-1].x1 + 2]
    if len(phrase) >= 2 and len(under) == len(phrase):
        return [[w] for w in phrase]
    return [phrase]


def line_cells(line: Line, columns) -> Cells:
    cells: Cells = {}
    for whole in line.phrases():
        for phrase in over_columns(whole, columns):
            cells.setdefault(column_of(phrase[0].x0, phrase[-1].x1, columns), []).extend(phrase)
    return cells


def _has_number(cells: Cells) -> bool:
    return any(cell_number(phrase_text(ws)) is not None for ws in cells.values())


def rows_of(lines: list[Line], columns, bands: list[tuple[float, float]]) -> list[tuple[list[Line], Cells]]:
    """Lines joined into rows (see the module's docstring); `bands` are the ruled rows of
    pymupdf's grid ([] without one)."""

    def band_of(line: Line) -> int:
        middle = (line.y0 + line.y1) / 2
        return next((i for i, (b0, b1) in enumerate(bands) if b0 - 1 <= middle <= b1 + 1), -1)

    gaps = sorted(b.y0 - a.y1 for a, b in zip(lines, lines[1:]))
    pitch = gaps[len(gaps) // 2] if gaps else 0.0
    rows: list[tuple[list[Line], Cells]] = []
    last_band, numbers_seen = None, False
    for line in lines:
        cells = line_cells(line, columns)
        band = band_of(line)
        # a line set well apart from the one above (a footnote under the table) starts a row
        apart = bool(rows) and line.y0 - rows[-1][0][-1].y1 > max(4.0, 2 * pitch)
        if rows and not apart:
            row_lines, row = rows[-1]
            subset = all(j in row for j in cells)
            if band >= 0 and band == last_band:
                joins = not (_has_number(cells) and _has_number(row)) and (numbers_seen or subset)
            else:
                joins = not _has_number(cells) and subset and len(cells) < len(row)
            if joins:
                row_lines.append(line)
                for j, ws in cells.items():
                    row.setdefault(j, []).extend(ws)
                continue
        numbers_seen = numbers_seen or (bool(rows) and _has_number(rows[-1][1]))
        rows.append(([line], cells))
        last_band = band
    return rows


def _join_broken_words(texts: list[list[str]]) -> None:
    """A name broken over two rows at a hyphen ("Un-" over "supervised", a group name set in
    two lines) is made whole in the first row, the second left empty (its group goes on)."""
    for upper, lower in zip(texts, texts[1:]):
        for j, (a, b) in enumerate(zip(upper, lower)):
            if a.endswith("-") and a[-2:-1].isalpha() and b[:1].islower() and " " not in b:
                upper[j], lower[j] = a[:-1] + b, ""


def box(words: list[Word]) -> Rect:
    return (
        min(w.x0 for w in words),
        min(w.y0 for w in words),
        max(w.x1 for w in words),
        max(w.y1 for w in words),
    )


@dataclass
class Filled:
    rows: list[list[str]]
    boxes: list[list[Rect | None]]
    header_rows: int


def fill(
    words: list[Word], columns, bands: list[tuple[float, float]], rules: Rules | None = None
) -> Filled | None:
    """The table's cells from the words inside it: None for fewer than two rows or columns."""
    rules = rules or Rules()
    lines = lines_of(words, rules)
    own = columns_of(lines, rules)
    if len(own) >= len(columns):
        columns = own
    columns = columns[:MAX_TABLE_COLS]
    rows = rows_of(lines, columns, bands)[:MAX_TABLE_ROWS]
    n = len(columns)
    if len(rows) < 2 or n < 2:
        return None

    def text(ws: list[Word]) -> str:
        # line by line: a "±" set a little higher than its numbers stays between them
        return " ".join(w.text for line in lines_of(ws) for w in line.words)

    texts = [[text(row.get(j, [])) for j in range(n)] for _, row in rows]
    _join_broken_words(texts)
    header = guess_header_rows(texts)
    # the upper header rows again, a phrase standing over several columns put in each of them
    for i in range(max(0, header - 1)):
        spread: dict[int, list[str]] = {}
        for line in rows[i][0]:
            phrases = line.phrases()  # whole: "HK Lit" over two columns is one header
            for phrase in phrases:
                for j in spanned(phrase, columns, rules, phrases):
                    spread.setdefault(j, []).append(phrase_text(phrase))
        texts[i] = [" ".join(spread.get(j, [])) for j in range(n)]
    boxes = [[box(row[j]) if row.get(j) else None for j in range(n)] for _, row in rows]
    return Filled(texts, boxes, header)
