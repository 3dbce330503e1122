"""Where passages stand on a PDF's pages, and the pages as images (pymupdf).

A passage's rectangles are found by matching the PDF's own text lines against the
passage's text, both reduced to lower-case letters and digits: a line whose text occurs
in the passage belongs to it (lines under MIN_LINE_CHARS only next to a line that does,
in the same block, so a short common word never lights up on its own). Neighbouring
matched lines of one block merge into one rectangle. The same function serves ingest
and papers stored before rectangles were kept (re-derived from their stored PDF), so
both get the same result. Rectangles are fractions of the page's width and height:
[page, x0, y0, x1, y1], page 1-based.

Page images are PNGs rendered at RENDER_ZOOM (1.5 x 72 dpi = 108 dpi, ~920 px wide for
a Letter page): sharp on a laptop screen, ~100-250 KB a page. A page too large for that
(PDF allows 14,400 pt a side) is rendered smaller, within MAX_RENDER_PIXELS.
"""

from __future__ import annotations

import math
import re
from collections.abc import Iterable, Sequence
from pathlib import Path

from reader.ingest.text import clean_text

MIN_LINE_CHARS = 12
RENDER_ZOOM = 1.5
# ~12 MB as RGB (a Letter page at RENDER_ZOOM is 1.1 million pixels); a 9,000 pt page at
# RENDER_ZOOM was 182 million (1.1 GB while rendered), a 14,400 pt one over MuPDF's limit
MAX_RENDER_PIXELS = 4_000_000
# a page's text layer and search stop there (a page of a million one-letter words would be
# a 40 MB reply); a paper's densest shared page has ~1,400
MAX_PAGE_WORDS = 20_000
_NOT_WORD = re.compile(r"[\W_]+")
_DOI = re.compile(r"\b(10\.\d{4,9}/[^\s\"<>{}|\\^`]+)", re.IGNORECASE)
_DOI_REST = re.compile(r"[ \t]?\n?[ \t]?([a-z0-9][^\s\"<>{}|\\^`]*\d[^\s\"<>{}|\\^`]*)")


def normalize(text: str) -> str:
    return _NOT_WORD.sub("", clean_text(text).lower())


def open_document(source: Path | bytes):
    """The PDF from its path or its bytes, with MuPDF's own messages silenced."""
    import pymupdf

    pymupdf.TOOLS.mupdf_display_errors(False)
    pymupdf.TOOLS.mupdf_display_warnings(False)
    if isinstance(source, (bytes, bytearray)):
        return pymupdf.open(stream=bytes(source), filetype="pdf")
    return pymupdf.open(str(source), filetype="pdf")


class _Line:
    __slots__ = ("block", "norm", "x0", "x1", "y0", "y1")

    def __init__(self, block: int, norm: str, x0: float, y0: float, x1: float, y1: float):
        self.block, self.norm, self.x0, self.y0, self.x1, self.y1 = block, norm, x0, y0, x1, y1


def _page_lines(page) -> list[_Line]:
    """The page's text lines in the PDF's order, from its words."""
    lines: list[_Line] = []
    key = None
    words: list[str] = []
    box = [0.0, 0.0, 0.0, 0.0]
    for x0, y0, x1, y1, word, block, line, _ in page.get_text("words", sort=False):
        if (block, line) != key:
            if key is not None:
                lines.append(_Line(key[0], normalize("".join(words)), *box))
            key, words, box = (block, line), [], [x0, y0, x1, y1]
        words.append(word)
        box = [min(box[0], x0), min(box[1], y0), max(box[2], x1), max(box[3], y1)]
    if key is not None:
        lines.append(_Line(key[0], normalize("".join(words)), *box))
    return lines


def _rects_on_page(
    lines: list[_Line], wanted: str, page_no: int, width: float, height: float
) -> list[list[float]]:
    matched = [bool(ln.norm) and len(ln.norm) >= MIN_LINE_CHARS and ln.norm in wanted for ln in lines]
    # short lines (a paragraph's last words, a hyphenated stub) join a matched neighbour
    changed = True
    while changed:
        changed = False
        for i, ln in enumerate(lines):
            if matched[i] or not ln.norm or ln.norm not in wanted:
                continue
            if any(0 <= j < len(lines) and matched[j] and lines[j].block == ln.block for j in (i - 1, i + 1)):
                matched[i] = changed = True
    rects: list[list[float]] = []
    current: list[float] | None = None
    current_block = None
    for ln, hit in zip(lines, matched):
        if not hit:
            current = None
            continue
        if current is not None and ln.block == current_block and ln.y0 <= current[4] + (ln.y1 - ln.y0):
            current[1], current[2] = min(current[1], ln.x0), min(current[2], ln.y0)
            current[3], current[4] = max(current[3], ln.x1), max(current[4], ln.y1)
            continue
        current, current_block = [page_no, ln.x0, ln.y0, ln.x1, ln.y1], ln.block
        rects.append(current)
    return [
        [
            page,
            round(max(0.0, x0 / width), 4),
            round(max(0.0, y0 / height), 4),
            round(min(1.0, x1 / width), 4),
            round(min(1.0, y1 / height), 4),
        ]
        for page, x0, y0, x1, y1 in rects
    ]


def passage_rects(source: Path | bytes, passages: Iterable[tuple[int, int, str]]) -> list[list[list[float]]]:
    """For each (page_start, page_end, text): its rectangles on those pages, in the order given.
    Each page's lines are read once, however many passages share it."""
    doc = open_document(source)
    try:
        cache: dict[int, tuple[list[_Line], float, float]] = {}

        def page_lines(no: int):
            if no not in cache:
                page = doc[no - 1]
                cache[no] = (_page_lines(page), page.rect.width or 1.0, page.rect.height or 1.0)
            return cache[no]

        out = []
        for start, end, text in passages:
            wanted = normalize(text)
            rects: list[list[float]] = []
            for no in range(max(1, start), min(doc.page_count, max(start, end)) + 1):
                lines, width, height = page_lines(no)
                rects += _rects_on_page(lines, wanted, no, width, height)
            out.append(rects)
        return out
    finally:
        doc.close()


def page_words(source: Path | bytes) -> list[dict]:
    """Every page's words and where they stand, page 1 first, for the web page's text layer and
    its search: {"aspect": height / width, "words": [[x0, y0, x1, y1, text, line], ...]}, the
    rectangles fractions of the page (as passage rectangles are), `line` numbering the page's
    lines in the PDF's order. Ligatures come out as their letters ("ﬁ" as "fi"), so that a
    search for "first" finds the word and a copied word reads as typed."""
    import pymupdf

    flags = pymupdf.TEXTFLAGS_WORDS & ~pymupdf.TEXT_PRESERVE_LIGATURES
    doc = open_document(source)
    try:
        pages = []
        for page in doc:
            width, height = page.rect.width or 1.0, page.rect.height or 1.0
            lines: dict[tuple[int, int], int] = {}
            words = []
            for x0, y0, x1, y1, text, block, line, _ in page.get_text("words", flags=flags, sort=False):
                if len(words) == MAX_PAGE_WORDS:
                    break
                words.append(
                    [
                        round(max(0.0, x0 / width), 4),
                        round(max(0.0, y0 / height), 4),
                        round(min(1.0, x1 / width), 4),
                        round(min(1.0, y1 / height), 4),
                        text,
                        lines.setdefault((block, line), len(lines)),
                    ]
                )
            pages.append({"aspect": round(height / width, 4), "words": words})
        return pages
    finally:
        doc.close()


def find_doi(texts: Sequence[str]) -> str | None:
    """The first DOI printed in the texts (a paper's first page, its metadata), or None."""
    for text in texts:
        m = _DOI.search(text or "")
        if m:
            doi = m.group(1)
            # a DOI broken at a line end after its dot ("10.1371/journal.\npone.0197919")
            # comes out of the line joining as "journal. pone…": the lower-case rest belongs to it
            rest = _DOI_REST.match(text, m.end()) if doi.endswith(".") else None
            if rest:
                doi += rest.group(1)
            return doi.rstrip(".,;:)]}")
    return None


def page_count(source: Path | bytes) -> int:
    doc = open_document(source)
    try:
        return doc.page_count
    finally:
        doc.close()


def render_zoom(width: float, height: float, zoom: float = RENDER_ZOOM) -> float:
    """`zoom` for a page of width x height pt, or less, so that its image stays within
    MAX_RENDER_PIXELS: (width*z + 1) * (height*z + 1) <= MAX_RENDER_PIXELS, as a pixmap
    rounds each side up."""
    width, height = max(width, 1.0), max(height, 1.0)
    if (width * zoom + 1) * (height * zoom + 1) <= MAX_RENDER_PIXELS:
        return zoom
    area, sides = width * height, width + height
    return (math.sqrt(sides * sides + 4 * area * (MAX_RENDER_PIXELS - 1)) - sides) / (2 * area)


def render_page(source: Path | bytes, page_no: int, zoom: float = RENDER_ZOOM) -> bytes:
    """Page `page_no` (1-based) as PNG bytes, within MAX_RENDER_PIXELS; IndexError when the PDF
    has no such page."""
    import pymupdf

    doc = open_document(source)
    try:
        if not 1 <= page_no <= doc.page_count:
            raise IndexError(f"page {page_no} of {doc.page_count}")
        page = doc[page_no - 1]
        zoom = render_zoom(page.rect.width, page.rect.height, zoom)
        return page.get_pixmap(matrix=pymupdf.Matrix(zoom, zoom), alpha=False).tobytes("png")
    finally:
        doc.close()
