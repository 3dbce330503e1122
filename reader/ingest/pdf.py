"""PDF -> ParsedPaper with pymupdf (the only module that imports it).

Speed matters (a folder of papers is ingested at once), so each page is
extracted once into a text page and read twice from it: "blocks" gives the
paragraphs with their boxes, the HTML rendering gives every line's position,
font size and boldness. Both walk the same lines in the same order; a page
where they disagree falls back to the slower "dict" extraction.

Layout rules, in order: drop running headers/footers, order blocks by
columns (a block crossing the page's middle splits the page into bands; inside
a band the left column comes before the right), then use font statistics for
the title and section headings.
"""

from __future__ import annotations

import re
from collections import Counter
from dataclasses import dataclass, field
from pathlib import Path

from reader.errors import IngestError
from reader.ingest.model import Block, CaptionData, ParsedPaper, ReferenceData
from reader.ingest.text import (
    AFTER_REFERENCES,
    HEADING_NUMBER,
    KNOWN_HEADINGS,
    NUMBERED_HEADING,
    YEAR,
    caption_label,
    clean_text,
    detect_language,
    guess_year,
    is_reference_heading,
    join_lines,
    normalize_heading,
    split_references,
    title_from_file_name,
)
from reader.text.digest import sha256_bytes

# One <p> per text line, one line of output each (no re.S: a lazy scan across
# the page was the slowest step of parsing).
_HTML_LINE = re.compile(rb'<p style="top:([^p]+)pt;left:([^p]+)pt;[^>]*>(.*)</p>')
_TITLE_JUNK = re.compile(
    r"journal|proceedings|arxiv|doi\b|issn|https?://|www\.|©|copyright|open access|research article"
    r"|\bvol\.|volume|received|accepted|published|licen[cs]e|citation:|editor|perspective$|article$"
    r"|第\s*\S{1,4}\s*[卷期]|学\s*报|收稿|定稿|修回|基金项目|文章编号|摘\s*要|关键词|中图分类号|文献标识码|作者简介|通[信讯]作者",
    re.I,
)
_AFFILIATION = re.compile(
    r"univ|institut|depart|dept|school|college|laborator|\blab\b|cent(er|re)|inc\.|corp|research"
    r"|@|\d{4,}|street|road|avenue|email|e-mail|correspond|academy|hospital|faculty|foundation"
    r"|google|microsoft|facebook|meta ai|allen|ibm|amazon|company|ltd|gmbh|abstract|keywords"
    r"|united states|supporting information",
    re.I,
)
_PARTICLES = {"de", "van", "der", "von", "da", "del", "la", "le"}
# Degrees and society grades after a name: "Dena M. Bravata, MD, MS;", "Jordi Soria-Comas, Fellow, IEEE"
_NAME_SUFFIX = re.compile(
    r"^(?:MD|MS|MSc|MPH|PhD|Ph|D|BA|BS|BSc|MA|MM|RN|DPhil|MBBS|FRCP\w*|Jr|Sr|II|III|IEEE"
    r"|(?:(?:Senior|Student|Life)\s+)?(?:Fellow|Member)(?:\s+IEEE)?)$"
)
_SPACING_ACCENT = re.compile(r"[\u00a8\u00b4\u00b8\u02c6-\u02dd`]")
_CJK = re.compile(r"[\u3400-\u9fff]")
# A Chinese name: two to four characters (a family name and a given name).
_CJK_NAME = re.compile(r"^[\u3400-\u9fff]{2,4}$")
_CJK_AFFILIATION = re.compile(r"大学|学院|研究|实验室|中心|公司|医院|集团|[省市县]")
# Where the names end: the abstract, the keywords or the first section.
_FRONT_END = re.compile(
    r"^\s*(?:(?:abstract|summary|key\s*words?|index\s+terms|(?:(?:1|I)\.?\s+)?introduction)\b|摘\s*要|关\s*键\s*词)",
    re.I,
)


class _Line:
    """One line: text and position, font size and boldness. The style is
    parsed from the line's HTML only when asked (most lines never are)."""

    __slots__ = ("text", "left", "top", "_html", "_size", "_bold")

    def __init__(
        self,
        text: str,
        left: float,
        top: float,
        html: bytes = b"",
        size: float | None = None,
        bold: bool = False,
    ):
        self.text, self.left, self.top, self._html = text, left, top, html
        self._size, self._bold = size, bold

    def _parse(self) -> None:
        self._size, self._bold = _html_line_styles(self._html)

    @property
    def size(self) -> float:
        if self._size is None:
            self._parse()
        return self._size

    @property
    def bold(self) -> bool:
        if self._size is None:
            self._parse()
        return self._bold


_STYLE_LINES = 3


class _Box:
    """One text block. Built from the fast path it keeps the lines' texts and
    raw HTML matches and makes _Line objects only when they are asked for:
    most paragraphs only ever need their text and first-line style."""

    __slots__ = (
        "page",
        "x0",
        "y0",
        "x1",
        "y1",
        "_lines",
        "_texts",
        "_styled",
        "_head",
        "_text",
        "_size",
        "_bold",
    )

    def __init__(
        self,
        page: int,
        x0: float,
        y0: float,
        x1: float,
        y1: float,
        lines: list[_Line] | None = None,
        texts: list[str] | None = None,
        styled: list[tuple] | None = None,
    ):
        self.page, self.x0, self.y0, self.x1, self.y1 = page, x0, y0, x1, y1
        self._lines = lines if lines is not None or texts is not None else []
        self._texts, self._styled = texts, styled
        self._head = self._text = self._size = self._bold = None

    @property
    def lines(self) -> list[_Line]:
        if self._lines is None:
            self._lines = [
                _Line(t, float(left), float(top), inner)
                for t, (top, left, inner) in zip(self._texts, self._styled)
            ]
        return self._lines

    @property
    def n_lines(self) -> int:
        return len(self._lines) if self._lines is not None else len(self._texts)

    def line(self, i: int) -> _Line:
        """Line i, made on its own when the other lines are not needed."""
        if self._lines is not None:
            return self._lines[i]
        if self._head is None:
            self._head = {}
        ln = self._head.get(i)
        if ln is None:
            top, left, inner = self._styled[i]
            ln = self._head[i] = _Line(self._texts[i], float(left), float(top), inner)
        return ln

    def head(self) -> list[_Line]:
        """The first few lines (style is judged from them)."""
        return [self.line(i) for i in range(min(_STYLE_LINES, self.n_lines))]

    @property
    def text(self) -> str:
        if self._text is None:
            self._text = join_lines(self._texts if self._lines is None else [ln.text for ln in self._lines])
        return self._text

    # Style from the first lines only: enough to tell a heading from a
    # paragraph, and most paragraphs then never have their HTML parsed.
    @property
    def size(self) -> float:
        if self._size is None:
            weights: dict[float, int] = {}
            for ln in self.head():
                weights[ln.size] = weights.get(ln.size, 0) + len(ln.text)
            self._size = max(weights, key=weights.get) if weights else 0.0
        return self._size

    @property
    def bold(self) -> bool:
        if self._bold is None:
            lines = self.head()
            total = sum(len(ln.text) for ln in lines) or 1
            self._bold = sum(len(ln.text) for ln in lines if ln.bold) / total >= 0.6
        return self._bold


# ------------------------------------------------------------------ extraction

_SPAN = re.compile(rb'(<b>)?(?:<[a-z]+>)*<span style="[^"]*?font-size:([\d.]+)pt[^"]*">([^<]*)</span>')


def _html_line_styles(inner: bytes) -> tuple[float, bool]:
    """(font size, bold) of one HTML line, weighted by characters per span."""
    spans = _SPAN.findall(inner)
    if len(spans) == 1:
        bold, size, _ = spans[0]
        return float(size), bool(bold)
    sizes: dict[bytes, int] = {}
    bold_chars = total = 0
    for bold, size, text in spans:
        n = len(text)
        sizes[size] = sizes.get(size, 0) + n
        total += n
        if bold:
            bold_chars += n
    if not sizes:
        return 0.0, False
    return float(max(sizes, key=sizes.get)), total > 0 and bold_chars / total >= 0.6


def _page_html(textpage) -> bytes:
    """The page as mupdf's HTML, as bytes: it escapes every non-ASCII
    character, so the decoding TextPage.extractHTML does is not needed."""
    from pymupdf import mupdf

    buffer = mupdf.fz_new_buffer(1 << 16)
    out = mupdf.FzOutput(buffer)
    mupdf.fz_print_stext_page_as_html(out, textpage.this, 0)
    out.fz_close_output()
    return mupdf.fz_buffer_extract_copy(buffer)


def _on_page(x0: float, y0: float, x1: float, y1: float, width: float, height: float) -> bool:
    # the text page is built without mediabox clipping (cheaper); drop what lies off the page
    return x1 > 0 and y1 > 0 and x0 < width and y0 < height


def _boxes_fast(textpage, page_no: int, width: float, height: float) -> list[_Box] | None:
    blocks = textpage.extractBLOCKS()
    styled = _HTML_LINE.findall(_page_html(textpage))
    texts = [clean_text(b[4]).split("\n") for b in blocks]
    if sum(len(t) for t in texts) - len(texts) != len(styled):
        return None
    boxes, i = [], 0
    for (x0, y0, x1, y1, *_), lines in zip(blocks, texts):
        n = len(lines) - 1
        if not n:
            continue
        if not _on_page(x0, y0, x1, y1, width, height):
            i += n
            continue
        boxes.append(_Box(page_no, x0, y0, x1, y1, texts=lines[:n], styled=styled[i : i + n]))
        i += n
    return boxes


def _boxes_dict(textpage, page_no: int, width: float, height: float) -> list[_Box]:
    boxes = []
    for block in textpage.extractDICT()["blocks"]:
        if block.get("type", 0) != 0 or not _on_page(*block["bbox"], width, height):
            continue
        box = _Box(page_no, *block["bbox"])
        for line in block["lines"]:
            spans = line["spans"]
            text = clean_text("".join(s["text"] for s in spans))
            if not text.strip():
                continue
            n = sum(len(s["text"]) for s in spans) or 1
            sizes: Counter = Counter()
            for s in spans:
                sizes[round(s["size"], 1)] += len(s["text"])
            bold = sum(len(s["text"]) for s in spans if s["flags"] & 16) / n >= 0.6
            box.lines.append(
                _Line(text, line["bbox"][0], line["bbox"][1], size=sizes.most_common(1)[0][0], bold=bold)
            )
        if box.lines:
            boxes.append(box)
    return boxes


def _open(path: Path, data: bytes, max_pages: int | None = None):
    import pymupdf

    pymupdf.TOOLS.mupdf_display_errors(False)
    pymupdf.TOOLS.mupdf_display_warnings(False)
    head = data[:1024]
    if b"%PDF-" not in head:
        kind = "empty file" if not data else "the file does not start with %PDF-"
        raise IngestError(path, f"not a PDF ({kind}); only real PDF files can be ingested")
    try:
        doc = pymupdf.open(stream=data, filetype="pdf")
    except Exception as exc:  # pymupdf raises FileDataError/RuntimeError variants
        raise IngestError(path, f"corrupt or truncated PDF; pymupdf cannot open it ({exc})") from None
    if doc.needs_pass or doc.is_encrypted:
        doc.close()
        raise IngestError(
            path, "encrypted PDF (password protected); save an unencrypted copy and ingest that"
        )
    truncated = b"%%EOF" not in data[-2048:]
    repaired = doc.is_repaired
    if doc.page_count == 0:
        doc.close()
        if truncated or repaired:
            raise IngestError(path, "corrupt or truncated PDF; no pages could be recovered (re-download it)")
        raise IngestError(path, "the PDF has zero pages")
    if max_pages is not None and doc.page_count > max_pages:
        n = doc.page_count
        doc.close()
        raise IngestError(
            path, f"{n} pages, more than the limit of {max_pages} (READER_INGEST_MAX_PAGES raises it)"
        )
    if truncated and repaired:
        doc.close()
        raise IngestError(path, "truncated PDF: the file ends before %%EOF (re-download it)")
    return doc


def _extract(path: Path, doc) -> tuple[list[list[_Box]], list[tuple[float, float]]]:
    import pymupdf

    flags = pymupdf.TEXTFLAGS_TEXT & ~pymupdf.TEXT_MEDIABOX_CLIP
    pages, sizes = [], []
    for page in doc:
        try:
            rect = page.rect
            width, height = rect.width, rect.height
            textpage = page.get_textpage(flags=flags)
            boxes = _boxes_fast(textpage, page.number + 1, width, height)
            if boxes is None:
                boxes = _boxes_dict(textpage, page.number + 1, width, height)
        except Exception as exc:
            raise IngestError(path, f"corrupt PDF: page {page.number + 1} cannot be read ({exc})") from None
        pages.append(boxes)
        sizes.append((width, height))
    return pages, sizes


# ---------------------------------------------------------------------- layout


def _repeat_key(text: str) -> str:
    return re.sub(r"\d+", "#", text.lower()).strip()


def _drop_running_lines(pages: list[list[_Box]], sizes) -> list[list[_Box]]:
    """Remove page numbers and header/footer lines that repeat across pages."""
    keys: dict[int, str] = {}  # id(line) -> repeat key, for lines in the top/bottom margin
    margin_boxes: set[int] = set()
    counts: Counter = Counter()
    for boxes, (_, height) in zip(pages, sizes):
        top, bottom = height * 0.11, height * 0.90
        on_page = set()
        for b in boxes:
            if top <= b.y0 and b.y1 <= bottom:
                continue
            for ln in b.lines:
                if ln.top < top or ln.top > bottom:
                    keys[id(ln)] = key = _repeat_key(ln.text)
                    on_page.add(key)
                    margin_boxes.add(id(b))
        counts.update(on_page)
    min_repeats = max(2, len(pages) // 3)

    def running(line: _Line) -> bool:
        key = keys.get(id(line))
        if key is None:
            return False
        return (
            not key
            or bool(re.fullmatch(r"(page\s*)?#(\s*(of|/)\s*#)?|[ivx]+", key))
            or counts[key] >= min_repeats
        )

    kept = []
    for boxes in pages:
        keep = []
        for b in boxes:
            if id(b) not in margin_boxes:
                keep.append(b)
                continue
            lines = [ln for ln in b.lines if not running(ln)]
            if len(lines) == len(b.lines):
                keep.append(b)
            elif lines:
                keep.append(_Box(b.page, b.x0, max(b.y0, lines[0].top), b.x1, b.y1, lines))
        kept.append(keep)
    return kept


def _reading_order(boxes: list[_Box], width: float) -> list[_Box]:
    """Bands split by blocks that cross the page middle; in a band, the left
    column top to bottom, then the right column."""
    mid, tol = width / 2, width * 0.03
    ordered, band = [], []

    def flush():
        band.sort(key=lambda b: (b.x0 + b.x1 >= width, b.y0, b.x0))
        ordered.extend(band)
        band.clear()

    for box in sorted(boxes, key=lambda b: (b.y0, b.x0)):
        if box.x0 < mid - tol and box.x1 > mid + tol:
            flush()
            ordered.append(box)
        else:
            band.append(box)
    flush()
    return ordered


def _body_size(pages: list[list[_Box]]) -> float:
    """The most common font size of running text: the first line of each
    paragraph (3+ lines), weighted by the paragraph's characters."""
    weights: Counter = Counter()
    for boxes in pages:
        for b in boxes:
            if b.n_lines >= 3:
                weights[round(b.line(0).size * 2) / 2] += len(b.text)
    if not weights:
        for boxes in pages:
            for b in boxes:
                weights[round(b.size * 2) / 2] += len(b.text)
    return weights.most_common(1)[0][0] if weights else 10.0


_WORDLIKE = re.compile(r"[A-Za-z]{3}|[\u4e00-\u9fff]{2}")


def _looks_like_heading(text: str, n_lines: int) -> bool:
    if not (2 < len(text) <= 120) or n_lines > 3 or text[-1] in ",;" or caption_label(text):
        return False
    if not _WORDLIKE.search(text):
        return False
    first = HEADING_NUMBER.sub("", text, count=1)[:1]
    return bool(first) and (first.isupper() or "\u4e00" <= first <= "\u9fff") and len(text.split()) <= 14


def _styled(box_or_line, body: float) -> bool:
    return box_or_line.size >= body + 0.8 or box_or_line.bold


def _split_leading_heading(box: _Box, body: float) -> list[_Box]:
    """A heading line glued to the top of its first paragraph becomes its own box."""
    if box.n_lines < 2:
        return [box]
    if not _styled(box.line(0), body) or any(
        _styled(box.line(i), body) for i in range(1, min(3, box.n_lines))
    ):
        return [box]
    first, rest = box.lines[0], box.lines[1:]
    if not _looks_like_heading(first.text.strip(), 1):
        return [box]
    if not (NUMBERED_HEADING.match(first.text.strip()) or normalize_heading(first.text) in KNOWN_HEADINGS):
        return [box]
    head = _Box(box.page, box.x0, box.y0, box.x1, rest[0].top, [first])
    tail = _Box(box.page, box.x0, rest[0].top, box.x1, box.y1, rest)
    return [head, tail]


def _heading_kind(box: _Box, body: float) -> str:
    """'numbered', 'known', 'styled' or '' for a box that is not a heading."""
    if box.n_lines > 3:
        return ""
    text = box.text
    if len(text) > 120 or not text or text[-1] == "." or not _looks_like_heading(text, box.n_lines):
        return ""
    # known headings are at most a few words (long lines skip the normalising)
    if box.n_lines == 1 and len(text) <= 60 and normalize_heading(text.rstrip(":")) in KNOWN_HEADINGS:
        return "known"
    if not _styled(box, body) or box.size < body - 0.3:
        return ""
    if NUMBERED_HEADING.match(text):
        return "numbered"
    return "styled" if box.size >= body + 0.8 or len(text.split()) <= 8 else ""


def _heading_kinds(ordered: list[_Box], body: float) -> list[str]:
    kinds = [_heading_kind(b, body) for b in ordered]
    if sum(1 for k in kinds if k == "numbered") >= 3:
        # a paper with numbered headings: unnumbered styled lines are not headings
        return [k if k != "styled" else "" for k in kinds]
    for i, kind in enumerate(kinds):
        if kind != "styled":
            continue
        # figure labels and table headers are styled too, but a real heading
        # leads into a paragraph (possibly after a subheading)
        follower = next((b for b, k in zip(ordered[i + 1 : i + 4], kinds[i + 1 : i + 4]) if not k), None)
        if follower is None or len(follower.text) < 150 or abs(follower.size - body) > 0.6:
            kinds[i] = ""
    return kinds


def _reference_lines(boxes: list[_Box], sizes) -> list[tuple[str, int, bool]]:
    """(line, page, starts_entry): with a hanging indent an entry starts at the
    column's margin; without one, at the start of a paragraph."""
    groups: dict[tuple[int, bool], list[_Box]] = {}
    for box in boxes:
        width = sizes[box.page - 1][0]
        groups.setdefault((box.page, box.x0 + box.x1 >= width), []).append(box)
    hanging: dict[tuple[int, bool], float | None] = {}
    for key, group in groups.items():
        lefts = [ln.left for b in group for ln in b.lines]
        margin = min(lefts)
        indented = sum(1 for x in lefts if x > margin + 4)
        hanging[key] = margin if indented >= 0.2 * len(lefts) and indented < 0.9 * len(lefts) else None
    lines = []
    for box in boxes:
        width = sizes[box.page - 1][0]
        margin = hanging[(box.page, box.x0 + box.x1 >= width)]
        for i, ln in enumerate(box.lines):
            starts = ln.left <= margin + 1.5 if margin is not None else i == 0
            lines.append((ln.text.strip(), box.page, starts))
    return lines


# ------------------------------------------------------------ front matter


def _norm(text: str) -> str:
    return re.sub(r"[\W_]+", "", text.lower())


def _title(first_page: list[_Box], height: float, meta_title: str, page_text: str) -> tuple[str, list[_Box]]:
    candidates = [
        b
        for b in first_page
        if b.y0 < height * 0.5
        and (len(re.findall(r"[A-Za-z]{2,}", b.text)) >= 2 or len(_CJK.findall(b.text)) >= 4)
        and not _TITLE_JUNK.search(b.text)
        and len(b.text) < 300
        and (b.text[:1].isupper() or b.text[:1].isdigit() or _CJK.match(b.text))
    ]
    boxes: list[_Box] = []
    if candidates:
        top = max(b.size for b in candidates)
        first = next(b for b in candidates if b.size >= top - 0.3)
        boxes = [first]
        for b in candidates[candidates.index(first) + 1 :]:
            if b.size >= top - 0.3 and b.y0 - boxes[-1].y1 < top * 2.5:
                boxes.append(b)
            else:
                break
    font_title = join_lines([b.text for b in boxes])
    meta = (meta_title or "").strip()
    words = len(meta.split()) + len(_CJK.findall(meta))
    if words >= 3 and not _TITLE_JUNK.search(meta) and _norm(meta) in _norm(page_text):
        wanted = _norm(meta)
        matching = [b for b in first_page if len(_norm(b.text)) > 3 and _norm(b.text) in wanted]
        return no_cjk_gaps(meta), matching or boxes
    return no_cjk_gaps(font_title), boxes


# a space between two Chinese or Japanese characters (or their punctuation): a gap between two
# spans of one line, or a metadata title typed with one; Chinese puts none there
_CJK_GAP = re.compile(
    r"(?<=[\u3000-\u303f\u3400-\u9fff\uff00-\uffef])\s+(?=[\u3000-\u303f\u3400-\u9fff\uff00-\uffef])"
)


def no_cjk_gaps(title: str) -> str:
    return _CJK_GAP.sub("", title)


def _authors(front: list[_Box], meta_author: str, page_text: str) -> list[str]:
    """The name lines of `front` (the boxes below the title) up to the abstract; the
    metadata's authors instead when each is a name printed on the page and the lines
    do not name them all and more."""
    names = _name_lines(front)
    norm_page = _norm(page_text)
    meta = [a.strip() for a in re.split(r";|,| and ", meta_author or "") if a.strip()]
    if meta and all(
        _is_name(a) and not _AFFILIATION.search(a) and _norm(a.split()[-1]) in norm_page for a in meta
    ):
        surnames = {_norm(n.split()[-1]) for n in names}
        if len(names) <= len(meta) or not all(_norm(a.split()[-1]) in surnames for a in meta):
            return meta
    return names or _collective(front, meta_author, norm_page)


_COLLECTIVE = re.compile(
    r"\b(?:contributors|team|group|consortium|collaboration|committee|project|initiative|laboratory|lab|"
    r"working group|task force|authors)\b",
    re.I,
)


def _collective(front: list[_Box], meta_author: str, norm_page: str) -> list[str]:
    """An author that is no person's name ("The reader project contributors", "The ATLAS
    Collaboration"), when no line below the title gives names: the metadata's author when the
    first page prints it, else the first such line before the abstract; [] when there is none."""
    meta = " ".join((meta_author or "").split())
    if meta and _COLLECTIVE.search(meta) and len(meta.split()) <= 8 and _norm(meta) in norm_page:
        return [meta]
    for box in front:
        if _FRONT_END.match(box.text):
            break
        for line in box.lines:
            text = " ".join(line.text.split())
            if (
                _COLLECTIVE.search(text)
                and 2 <= len(text.split()) <= 8
                and not _AFFILIATION.search(text)
                and not re.search(r"@|https?://|www\.|\d", text)
            ):
                return [text]
    return []


def _name_lines(front: list[_Box]) -> list[str]:
    names: list[str] = []
    for box in front:
        if _FRONT_END.match(box.text):
            if names:
                break
            continue  # an abstract set before the names (Springer): the names follow it
        for line in box.lines:
            if _FRONT_END.match(line.text):
                return names[:40]
            if not _AFFILIATION.search(line.text):
                names += [n for n in _name_line(line.text) if n not in names]
    return names[:40]


def _is_name(text: str) -> bool:
    """Two to five words, each capitalised ('Ödeen' too) but for particles like 'van'."""
    words = text.split()
    return (
        2 <= len(words) <= 5
        and words[0][:1].isupper()
        and all(
            re.fullmatch(r"[^\W\d_][\w'’.\-]*", w) and (w[:1].isupper() or w in _PARTICLES) for w in words
        )
    )


def _name_line(text: str) -> list[str]:
    """The names on a line of names (with their marks: digits, *, †, a character
    glued on as a footnote mark, degrees): at least half of its parts are names, else []."""
    if len(_CJK.findall(text)) > len(re.findall(r"[A-Za-z]", text)):
        if _CJK_AFFILIATION.search(text):
            return []
        pieces = re.split(r"[\s,，、;；]+", re.sub(r"[\d*†‡§¶#∗\u2020-\u2027\u25a0-\u27bf()（）]", " ", text))
        pieces = [p for p in pieces if p]
        return pieces if pieces and all(_CJK_NAME.match(p) for p in pieces) else []
    # in a Latin line, CJK characters are marks (2kenize: "Pranav A徒and Isabelle Augenstein師"),
    # and accents set as separate glyphs belong to their letter ("O˘guz", "Ste´phane")
    text = _SPACING_ACCENT.sub("", _CJK.sub(" ", text))
    pieces = []
    for piece in re.split(r",|;|\band\b|&|[·•]|\s{3,}", text):
        piece = re.sub(r"[^\w\s'’.\-]|[\d_]", " ", piece).strip(" .")
        pieces.append(re.sub(r"\s+", " ", piece))
    pieces = [p for p in pieces if p and not _NAME_SUFFIX.match(p)]
    names = [p for p in pieces if _is_name(p)]
    return names if names and len(names) * 2 >= len(pieces) else []


# ------------------------------------------------------------------- assembly


@dataclass
class _Parts:
    """The blocks of a paper sorted by kind as they are read in order."""

    blocks: list[Block] = field(default_factory=list)
    sections: list[dict] = field(default_factory=list)
    captions: list[CaptionData] = field(default_factory=list)
    ref_boxes: list[_Box] = field(default_factory=list)
    front: list[_Box] = field(default_factory=list)  # the boxes before the first heading


def parse_pdf(
    path: Path, data: bytes | None = None, sha256: str | None = None, max_pages: int | None = None
) -> ParsedPaper:
    """Parse a PDF into blocks in reading order with sections, captions and
    references. Raises IngestError naming the file for every unusable input, and for a
    PDF of more than `max_pages` pages."""
    path = Path(path)
    if data is None:
        try:
            data = path.read_bytes()
        except OSError as exc:
            raise IngestError(path, f"cannot read the file ({exc.strerror})") from None
    meta, raw_pages, sizes = _read_pages(path, data, max_pages)
    pages = _drop_running_lines(raw_pages, sizes)
    body = _body_size(pages)
    ordered = _ordered_boxes(pages, sizes, body)

    first_page = [b for b in ordered if b.page == 1]
    page1_text = "\n".join(b.text for b in first_page)
    title, title_boxes = _title(first_page, sizes[0][1], meta.get("title", ""), page1_text)
    parts = _sort_boxes(ordered, _heading_kinds(ordered, body), {id(b) for b in title_boxes})

    references = split_references(_reference_lines(parts.ref_boxes, sizes))
    blocks = parts.blocks + [
        Block(f"{r.marker} {r.text}" if r.marker else r.text, r.page, "References", "reference")
        for r in references
    ]
    title_y = max((b.y1 for b in title_boxes), default=0)
    author_boxes = [b for b in parts.front if b.page == 1 and b.y0 >= title_y - 1]
    full_text = "\n".join(b.text for b in blocks)
    from reader.ingest.pages import find_doi

    return ParsedPaper(
        sha256=sha256 or sha256_bytes(data),
        source_path=str(path),
        source_kind="pdf",
        title=title or title_from_file_name(path),
        authors=_authors(author_boxes, meta.get("author", ""), page1_text),
        year=_year(raw_pages[0], meta),
        abstract=_abstract(blocks),
        pages=len(raw_pages),
        language=detect_language(full_text),
        blocks=blocks,
        sections=parts.sections,
        captions=parts.captions,
        references=references,
        doi=find_doi([meta.get("doi", ""), meta.get("subject", ""), page1_text]),
    )


def _read_pages(
    path: Path, data: bytes, max_pages: int | None
) -> tuple[dict, list[list[_Box]], list[tuple[float, float]]]:
    """The PDF's metadata, each page's boxes and each page's (width, height); IngestError when
    the pages hold (almost) no text."""
    doc = _open(path, data, max_pages)
    try:
        meta = {
            key: clean_text(value) for key, value in (doc.metadata or {}).items() if isinstance(value, str)
        }
        raw_pages, sizes = _extract(path, doc)
    finally:
        doc.close()
    if sum(len(b.text.replace(" ", "")) for boxes in raw_pages for b in boxes) < 20:
        raise IngestError(
            path,
            "no text layer (scanned images?); OCR it first, e.g. `ocrmypdf in.pdf out.pdf`, "
            "then ingest the OCR'd file",
        )
    return meta, raw_pages, sizes


def _ordered_boxes(pages: list[list[_Box]], sizes, body: float) -> list[_Box]:
    ordered: list[_Box] = []
    for boxes, (width, _) in zip(pages, sizes):
        for box in _reading_order(boxes, width):
            ordered.extend(_split_leading_heading(box, body))
    return ordered


def _sort_boxes(ordered: list[_Box], kinds: list[str], title_ids: set[int]) -> _Parts:
    """Each box in reading order as the title, a heading, a caption, a reference, front
    matter, the abstract or body text."""
    parts = _Parts()
    section = ""
    abstract_for = ("", False)  # (section, whether it is the abstract)
    in_refs = False
    for box, kind in zip(ordered, kinds):
        text = box.text
        if not text:
            continue
        if id(box) in title_ids:
            parts.blocks.append(Block(text, box.page, "", "title"))
            continue
        if kind and in_refs and not (AFTER_REFERENCES.match(text) and kind != "styled"):
            kind = ""
        if kind:
            section = text.rstrip(":").strip()
            in_refs = is_reference_heading(text)
            parts.sections.append(_section_entry(section, box.page))
            parts.blocks.append(Block(text, box.page, section, "heading"))
            continue
        label = caption_label(text)
        if label:
            parts.captions.append(CaptionData(label[0], label[1], box.page, text))
            parts.blocks.append(Block(text, box.page, f"{label[1]} caption", "caption"))
            continue
        if in_refs:
            parts.ref_boxes.append(box)
            continue
        if not parts.sections:
            parts.front.append(box)
            parts.blocks.append(Block(text, box.page, "Front matter", "body"))
            continue
        if section != abstract_for[0]:
            abstract_for = (section, normalize_heading(section) in ("abstract", "summary"))
        parts.blocks.append(Block(text, box.page, section, "abstract" if abstract_for[1] else "body"))
    return parts


def _section_entry(section: str, page: int) -> dict:
    return {
        "title": section,
        "page": page,
        "level": section.split(" ")[0].count(".") + 1 if NUMBERED_HEADING.match(section) else 1,
    }


def _abstract(blocks: list[Block]) -> str:
    return " ".join(b.text for b in blocks if b.kind == "abstract") or _inline_abstract(blocks)


def _inline_abstract(blocks: list[Block]) -> str:
    """'Abstract: ...' or 'Abstract—...' written into the paragraph itself."""
    for b in blocks[:40]:
        m = re.match(r"^\s*(abstract|summary)\s*[:.\u2014\u2013-]\s*", b.text, re.I)
        if m and len(b.text) > 100:
            return b.text[m.end() :]
    return ""


def _year(first_page: list[_Box], meta: dict) -> int | None:
    """The year from page 1's venue, copyright and date lines (running headers
    included), else the PDF's creation year unless the page cites a later one."""
    lines = "\n".join(ln.text for b in first_page for ln in b.lines)
    year = guess_year(lines)
    if year:
        return year
    m = re.match(r"D:(\d{4})", meta.get("creationDate") or "")
    created = int(m.group(1)) if m else None
    cited = [int(y) for y in YEAR.findall(lines)]
    return created if created and created >= max(cited, default=0) else None


def raw_page_texts(path: Path) -> list[str]:
    """pymupdf's own plain text per page: the reference for coverage checks."""
    import pymupdf

    with pymupdf.open(path) as doc:
        return [page.get_text() for page in doc]


__all__ = ["parse_pdf", "raw_page_texts", "ReferenceData"]
