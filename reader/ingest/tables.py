"""A PDF's tables as rows of cells (pymupdf), each with its caption, page and rectangle.

Only pages that carry a table caption ("Table 2: …", found by the parser) are looked at, and
each table found belongs to a caption (the first caption of each label): a table without one is
not read. Where a table stands comes from one of two finders (READER_TABLES picks):

- "layout": pymupdf's `find_tables` with its layout model (pymupdf 1.27+ ships one; without it,
  ruling lines only), its table nearest the caption (above or below it, within a quarter page);
  where it finds none there, the words finder. "lines": the same on ruling lines only.
- "words": the lines next to the caption, walking away from it in the caption's column (across
  the page for a caption that crosses the middle, or on a page of one column) until a line of
  running text (a phrase of six words or more across 0.3 of the page), another caption, a gap
  of MAX_ROW_GAP or the page's top or bottom margin; the side with more lines of two phrases or
  more wins, and it needs two.

Either way the cells come from the page's own words and ruling lines (reader/ingest/
table_layout.py): pymupdf's cell text loses decimal points set as their own glyph ("78.4"
came out as "784\\n."). Rectangles are fractions of the page, as passage rectangles are
(reader/ingest/pages.py).
"""

from __future__ import annotations

import re
import sys
from pathlib import Path

from reader.ingest.model import CaptionData, TableData, first_captions_by_page
from reader.ingest.pages import open_document
from reader.ingest.table_layout import Rules, Word, box, columns_of, fill, lines_of
from reader.text.controls import clean_text

FINDERS = ("auto", "words", "layout", "lines", "off")
# how far from its caption a table may stand, as a share of the page's height
CAPTION_REACH = 0.25
# the words finder stops at a vertical gap wider than this (pt), and in the page's top and
# bottom margins (page numbers, running heads) of this share of its height
MAX_ROW_GAP = 28.0
PAGE_MARGIN = 0.075
_NOT_WORD = re.compile(r"[\W_]+")
# a table's link or note under it (PLOS prints the table's DOI there): no row
_NOTE = re.compile(r"^(?:https?://|doi\.org|doi:|notes?[:.]|source:)", re.I)


def _norm(text: str) -> str:
    return _NOT_WORD.sub("", text.lower())


def _caption_rect(blocks, caption: CaptionData):
    """(x0, y0, x1, y1) of the caption's text block on its page, or None."""
    want, label = _norm(caption.text)[:40], _norm(caption.label)
    for x0, y0, x1, y1, text, *_ in blocks:
        got = _norm(clean_text(text))
        if got.startswith(label) and (got[: len(want)] == want or want.startswith(got[:40])):
            return (x0, y0, x1, y1)
    return None


def _rules(page) -> Rules:
    rules = Rules()
    for drawing in page.get_drawings():
        r = drawing.get("rect")
        if r is None:
            continue
        if r.height < 1.5 and r.width > 5:
            rules.horizontal.append((r.x0, r.x1, (r.y0 + r.y1) / 2))
        elif r.width < 1.5 and r.height > 5:
            rules.vertical.append(((r.x0 + r.x1) / 2, r.y0, r.y1))
    return rules


# ------------------------------------------------------------------ the grid finder


def _layout_model() -> bool:
    """pymupdf's layout model loaded where it is installed, also where it was kept out (the
    ingest child keeps it out of its start-up, ~1 s and 250 MB: only a caption the words could
    not place needs it)."""
    import pymupdf

    if getattr(pymupdf, "_get_layout", None) is None:
        if "pymupdf.layout" in sys.modules and sys.modules["pymupdf.layout"] is None:
            del sys.modules["pymupdf.layout"]
        try:
            import pymupdf.layout  # noqa: F401 - it registers itself with pymupdf
        except Exception:  # noqa: BLE001 - not installed, or it cannot load here: ruling lines only
            return False
    return getattr(pymupdf, "_get_layout", None) is not None


def _grid_tables(page, finder: str) -> list[tuple[tuple, list, list]]:
    """(rectangle, column spans, ruled rows) of each table pymupdf's find_tables sees."""
    if finder == "layout":
        _layout_model()
    try:
        found = page.find_tables(use_layout=finder == "layout")
    except TypeError:  # a pymupdf without the layout model's switch
        found = page.find_tables()
    out = []
    for table in found.tables:
        if table.col_count < 2 or not any(table.cells):
            continue
        edges: dict[int, list[float]] = {}
        for row in table.rows:
            for j, c in enumerate(row.cells):
                if c:
                    lo, hi = edges.get(j, [c[0], c[2]])
                    edges[j] = [min(lo, c[0]), max(hi, c[2])]
        columns = [tuple(edges[j]) for j in sorted(edges)]
        bands = [(row.bbox[1], row.bbox[3]) for row in table.rows]
        x0, y0, x1, y1 = table.bbox
        header = getattr(table, "header", None)
        if header is not None and getattr(header, "external", False) and header.bbox:
            hx0, hy0, hx1, hy1 = header.bbox
            bands.insert(0, (hy0, hy1))
            x0, y0, x1, y1 = min(x0, hx0), min(y0, hy0), max(x1, hx1), max(y1, hy1)
        out.append(((x0, y0, x1, y1), columns, bands))
    return out


def _distance(caption, rect) -> float | None:
    """Vertical gap between a caption and a table next to it (None: no horizontal overlap)."""
    if min(caption[2], rect[2]) - max(caption[0], rect[0]) <= 0:
        return None
    if rect[3] <= caption[1] + 2:
        return caption[1] - rect[3]
    if rect[1] >= caption[3] - 2:
        return rect[1] - caption[3]
    return 0.0


# ----------------------------------------------------------------- the words finder


def _running(phrase: list[Word], page_width: float) -> bool:
    return len(phrase) >= 6 and phrase[-1].x1 - phrase[0].x0 >= 0.3 * page_width


def _overlaps(a, b) -> bool:
    return min(a[2], b[2]) > max(a[0], b[0]) and min(a[3], b[3]) > max(a[1], b[1])


def _walk(lines, start: float, upward: bool, page_width: float, stops) -> tuple[list, bool]:
    """The lines of a table walking away from its caption, and whether the walk ran into
    another caption or table (the lines may then be that one's)."""
    ordered = (
        sorted((ln for ln in lines if ln.y1 <= start + 1), key=lambda ln: -ln.y1)
        if upward
        else sorted((ln for ln in lines if ln.y0 >= start - 1), key=lambda ln: ln.y0)
    )
    taken: list = []
    edge, blocked = start, False
    for line in ordered:
        gap = edge - line.y1 if upward else line.y0 - edge
        if gap > MAX_ROW_GAP or _NOTE.match(line.words[0].text):
            break
        if any(_overlaps((line.x0, line.y0, line.x1, line.y1), s) for s in stops):
            blocked = True
            break
        if any(_running(p, page_width) for p in line.phrases()):
            # walking up, the last line of the paragraph above came first: it is no row
            while upward and taken and _last_line_of(taken[-1], line):
                taken.pop()
            break
        taken.append(line)
        edge = line.y0 if upward else line.y1
    return sorted(taken, key=lambda ln: ln.y0), blocked


def _last_line_of(line, paragraph) -> bool:
    return (
        len(line.phrases()) == 1
        and abs(line.x0 - paragraph.x0) <= 3
        and line.y0 - paragraph.y1 <= 0.6 * paragraph.height
    )


def _tabular(lines) -> int:
    return sum(1 for ln in lines if len(ln.phrases()) >= 2)


def _one_column(lines, page_width: float) -> bool:
    """Most phrases of running text on the page cross its middle."""
    middle = page_width / 2
    running = [p for ln in lines for p in ln.phrases() if _running(p, page_width)]
    crossing = sum(1 for p in running if p[0].x0 < middle - 10 and p[-1].x1 > middle + 10)
    return bool(running) and crossing * 2 >= len(running)


def _words_table(words: list[Word], lines, caption, page_width: float, stops, rules: Rules):
    """(rectangle, column spans) of the table the words finder sees next to a caption, or None."""
    middle = page_width / 2
    if (caption[0] < middle - 10 and caption[2] > middle + 10) or _one_column(lines, page_width):
        lo, hi = 0.0, page_width
    elif (caption[0] + caption[2]) / 2 < middle:
        lo, hi = 0.0, middle
    else:
        lo, hi = middle, page_width
    own = lines_of([w for w in words if lo <= w.cx <= hi], rules)
    if not own:
        return None
    # the side not cut short by another caption, else the one with more lines of several phrases
    (above, cut_above), (below, cut_below) = (
        _walk(own, caption[1], True, page_width, stops),
        _walk(own, caption[3], False, page_width, stops),
    )
    chosen = max(
        (above, below),
        key=lambda side: (
            _tabular(side) >= 2 and not (cut_above if side is above else cut_below),
            _tabular(side),
        ),
    )
    if _tabular(chosen) < 2:
        return None
    columns = columns_of(chosen, rules)
    if len(columns) < 2:
        return None
    return box([w for ln in chosen for w in ln.words]), columns


# ------------------------------------------------------------------------- a page


def _fraction(rect, width: float, height: float) -> list[float]:
    x0, y0, x1, y1 = rect
    return [
        round(max(0.0, x0 / width), 4),
        round(max(0.0, y0 / height), 4),
        round(min(1.0, x1 / width), 4),
        round(min(1.0, y1 / height), 4),
    ]


def _page_tables(page, captions: list[CaptionData], finder: str) -> list[TableData]:
    import pymupdf

    width, height = page.rect.width or 1.0, page.rect.height or 1.0
    flags = pymupdf.TEXTFLAGS_WORDS & ~pymupdf.TEXT_PRESERVE_LIGATURES
    top, bottom = PAGE_MARGIN * height, (1 - PAGE_MARGIN) * height
    words = [
        Word(x0, y0, x1, y1, clean_text(t))
        for x0, y0, x1, y1, t, *_ in page.get_text("words", flags=flags, sort=False)
        if x1 > 0 and x0 < width and y1 > top and y0 < bottom and t.strip()
    ]
    placed = [(c, _caption_rect(page.get_text("blocks", sort=False), c)) for c in captions]
    placed = [(c, r) for c, r in placed if r is not None]
    if not placed:
        return []
    rules = _rules(page)
    lines = lines_of(words, rules)
    grids = _grid_tables(page, finder) if finder in ("layout", "lines") else []
    found = _place(placed, grids, words, lines, rules, width, height)
    missed = [(c, r) for c, r in placed if c.label not in {t.label for t in found}]
    if finder == "auto" and missed:
        # the layout model only for the captions the words could not place (about a second a page)
        grids = _grid_tables(page, "layout")
        found += _place(missed, grids, words, lines, rules, width, height, words_too=False)
    return sorted(found, key=lambda t: t.rect[1])


def _place(placed, grids, words, lines, rules, width, height, words_too: bool = True) -> list[TableData]:
    """A table for each placed caption: pymupdf's grid nearest to it, else the words finder's."""
    out: list[TableData] = []
    taken: set[int] = set()
    found_rects: list = []  # the tables placed so far: no other caption's
    for caption, rect in placed:
        i = _nearest_grid(rect, grids, taken, height)
        if i is not None:
            taken.add(i)
            table_rect, columns, bands = grids[i]
            method = "grid"
        elif words_too:
            stops = [r for c, r in placed if c is not caption] + [g for g, _, _ in grids] + found_rects
            found = _words_table(words, lines, rect, width, stops, rules)
            if found is None:
                continue
            table_rect, columns = found
            bands, method = [], "words"
        else:
            continue
        inside = _words_inside(words, table_rect, rect)
        filled = fill(inside, columns, bands, rules) if inside else None
        if filled is None:
            continue
        used = [b for row in filled.boxes for b in row if b]
        found_rects.append(box([Word(*b, "") for b in used]))
        out.append(
            TableData(
                label=caption.label,
                caption=caption.text,
                page=caption.page,
                rect=_fraction(found_rects[-1], width, height),
                rows=filled.rows,
                header_rows=filled.header_rows,
                cell_rects=[
                    [_fraction(b, width, height) if b else None for b in row] for row in filled.boxes
                ],
                method=method,
            )
        )
    return out


def _nearest_grid(caption_rect, grids, taken: set[int], height: float) -> int | None:
    """The grid not yet taken nearest to the caption, within CAPTION_REACH of the page's height."""
    near = [
        (d, i)
        for i, (g, _, _) in enumerate(grids)
        if i not in taken and (d := _distance(caption_rect, g)) is not None and d <= CAPTION_REACH * height
    ]
    return min(near)[1] if near else None


def _words_inside(words: list[Word], table_rect, caption_rect) -> list[Word]:
    """The words within the table's rectangle (2 points of slack), the caption's left out."""
    x0, y0, x1, y1 = table_rect
    return [
        w
        for w in words
        if x0 - 2 <= w.cx <= x1 + 2
        and y0 - 2 <= w.cy <= y1 + 2
        and not (caption_rect[0] <= w.cx <= caption_rect[2] and caption_rect[1] <= w.cy <= caption_rect[3])
    ]


def find_tables(source: Path | bytes, captions: list[CaptionData], finder: str = "auto") -> list[TableData]:
    """The tables of a PDF, one per table caption where one is found next to it, in page order.
    `finder`: one of FINDERS (see the module's docstring); "off" finds none."""
    if finder == "off":
        return []
    if finder not in FINDERS:
        raise ValueError(f"unknown table finder {finder!r}; one of {', '.join(FINDERS)}")
    wanted = first_captions_by_page(captions, "table")
    if not wanted:
        return []
    doc = open_document(source)
    try:
        out: list[TableData] = []
        for page_no in sorted(wanted):
            if 1 <= page_no <= doc.page_count:
                out += _page_tables(doc[page_no - 1], wanted[page_no], finder)
        return out
    finally:
        doc.close()
