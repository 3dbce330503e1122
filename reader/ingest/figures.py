"""A PDF's figures: each figure caption's picture, rendered from its page (pymupdf).

For the first caption of each figure label ("Figure 3: …", found by the parser), on the
caption's page and in its column (the whole width for a caption that crosses the middle):

- image: the page's embedded images next to the caption (above it, else below it), with the
  images and drawings that join them within MAX_GAP;
- drawing: else the vector drawings there (pymupdf's `cluster_drawings`; ruling lines alone
  are no figure);
- beside: a caption in one column with no picture above or below it, the pictures in the other
  column next to it (a caption set beside its figure), as image or drawing;
- text: else a figure set as text right above the caption (grammar rules, an example), the text
  blocks up to running text;
- region: else the stretch of the column between the caption and the text above it (below it
  where nothing is above), so a figure set in a way not recognised still comes out.

The picture is that rectangle (with the words inside it: axis labels, legends) rendered at DPI
as PNG, never the embedded image's own bytes: what the page shows, masks and colours resolved.
"""

from __future__ import annotations

import re
from pathlib import Path

from reader.ingest.model import CaptionData, first_captions_by_page
from reader.ingest.pages import open_document
from reader.ingest.text import caption_label
from reader.text.controls import clean_text
from reader.text.figures import Figure

DPI = 144
MAX_PIXELS = 2_500_000  # a larger picture is rendered at a lower resolution
MAX_GAP = 40.0  # pt between the parts of one figure, and between a figure and its caption
PAD = 4.0
MIN_SIDE = 12.0  # pt: smaller images and drawings (bullets, logos in a line) are no figure
MARGIN = 0.1  # of the page's height, top and bottom
PARAGRAPH_CHARS = 200  # a text block this long, nearly as wide as the column's text, is running text
_NOT_WORD = re.compile(r"[\W_]+")


def _norm(text: str) -> str:
    return _NOT_WORD.sub("", text.lower())


def _caption_rect(blocks, caption: CaptionData):
    want = _norm(caption.text)[:40]
    for x0, y0, x1, y1, text, *_ in blocks:
        got = _norm(clean_text(text))
        if got and (got[: len(want)] == want or want.startswith(got[:40])):
            return (x0, y0, x1, y1)
    return None


def _column(caption, width: float) -> tuple[float, float]:
    middle = width / 2
    if caption[0] < middle - 10 and caption[2] > middle + 10:
        return 0.0, width
    return (0.0, middle) if (caption[0] + caption[2]) / 2 < middle else (middle, width)


def _in_column(rect, lo: float, hi: float) -> bool:
    overlap = min(rect[2], hi) - max(rect[0], lo)
    return overlap > 0.5 * (rect[2] - rect[0])


def _graphics(page) -> tuple[list, list]:
    """(images, drawings) on the page as rectangles: the small ones, bare rules and what stands
    in the page's top or bottom margin (a journal's logo, a running head's rule) left out."""
    images = [tuple(i["bbox"]) for i in page.get_image_info()]
    try:
        drawings = [tuple(r) for r in page.cluster_drawings()]
    except Exception:  # noqa: BLE001 - a page whose drawings pymupdf cannot group: images only
        drawings = []
    top, bottom = MARGIN * page.rect.height, (1 - MARGIN) * page.rect.height

    def kept(r) -> bool:
        return r[2] - r[0] >= MIN_SIDE and r[3] - r[1] >= MIN_SIDE and r[3] > top and r[1] < bottom

    return [r for r in images if kept(r)], [r for r in drawings if kept(r)]


def _union(rects) -> tuple:
    return (
        min(r[0] for r in rects),
        min(r[1] for r in rects),
        max(r[2] for r in rects),
        max(r[3] for r in rects),
    )


def _walk(candidates, caption, upward: bool, stops) -> list:
    """The rectangles of one figure walking away from its caption: each within MAX_GAP of the
    figure so far, up to another caption."""
    side = [r for r in candidates if (r[3] <= caption[1] + 2 if upward else r[1] >= caption[3] - 2)]
    side.sort(key=lambda r: -r[3] if upward else r[1])
    edge, taken = (caption[1] if upward else caption[3]), []
    for r in side:
        gap = edge - r[3] if upward else r[1] - edge
        if gap > MAX_GAP:
            break
        if any((s[1] >= r[3] and s[3] <= edge) if upward else (s[1] >= edge and s[3] <= r[1]) for s in stops):
            break
        taken.append(r)
        edge = min(edge, r[1]) if upward else max(edge, r[3])
    return taken


def _picture(candidates, caption, stops) -> list:
    above = _walk(candidates, caption, True, stops)
    return above or _walk(candidates, caption, False, stops)


def _region(blocks, caption, lo: float, hi: float, height: float, stops):
    """The column's stretch between the caption and the nearest text above it (else below it)."""
    texts = [b[:4] for b in blocks if _in_column(b[:4], lo, hi) and b[:4] != tuple(caption)]
    texts += [s for s in stops if _in_column(s, lo, hi)]
    above = max((t[3] for t in texts if t[3] <= caption[1]), default=0.06 * height)
    if caption[1] - above >= 3 * MIN_SIDE:
        return (lo, above, hi, caption[1])
    below = min((t[1] for t in texts if t[1] >= caption[3]), default=0.94 * height)
    if below - caption[3] >= 3 * MIN_SIDE:
        return (lo, caption[3], hi, below)
    return None


def _with_words(rect, words, caption, lo: float, hi: float):
    """The picture's rectangle grown to the words set in and next to it (axis labels, legends),
    down (or up) to its caption for a picture above (or below) it."""
    top, bottom = rect[1] - PAD, rect[3] + PAD
    if rect[3] <= caption[1] + 2:
        bottom = max(bottom, caption[1])
    elif rect[1] >= caption[3] - 2:
        top = min(top, caption[3])
    inside = [
        w
        for w in words
        if lo <= (w[0] + w[2]) / 2 <= hi
        and top <= (w[1] + w[3]) / 2 <= bottom
        and rect[0] - MAX_GAP <= w[2]
        and w[0] <= rect[2] + MAX_GAP
        and not _overlap(w, caption)
    ]
    return _union([rect, *inside]) if inside else rect


def _figure_rect(page, caption, stops, graphics, blocks, words) -> tuple[tuple, str] | None:
    width, height = page.rect.width, page.rect.height
    lo, hi = _column(caption, width)
    images, drawings = graphics
    shown = [r for r in images + drawings if not _contains(r, caption)]
    picture = _picture([r for r in shown if _in_column(r, lo, hi)], caption, stops)
    span, beside = (lo, hi), False
    if not picture and (lo, hi) != (0.0, width):
        picture, beside = _beside(shown, caption, lo, hi), True
        span = (0.0, caption[0] - 2) if lo > 0 else (caption[2] + 2, width)
    if picture:
        method = "image" if any(r in images for r in picture) else "drawing"
        rect = _padded(_with_words(_union(picture), words, caption, *span), page.rect)
        return (rect if beside else _trimmed(rect, caption, blocks)), method
    text = _text_figure(blocks, caption, lo, hi, stops)
    if text:
        return _padded(text, page.rect), "text"
    region = _region(blocks, caption, lo, hi, height, stops)
    return (_padded(region, page.rect), "region") if region else None


def _trimmed(rect, caption, blocks) -> tuple:
    """The rectangle kept off its caption and off running text it reaches into (a picture whose
    box takes in white space over the paragraph above it)."""
    x0, y0, x1, y1 = rect
    if y1 <= caption[3] and y0 < caption[1]:
        y1 = min(y1, caption[1] - 0.5)
    elif y0 >= caption[1] and y1 > caption[3]:
        y0 = max(y0, caption[3] + 0.5)
    for b in blocks:
        across = min(b[2], x1) - max(b[0], x0) >= 0.5 * (x1 - x0)
        if len(b[4]) < PARAGRAPH_CHARS or not across or not _overlap(b[:4], (x0, y0, x1, y1)):
            continue
        middle = (b[1] + b[3]) / 2
        if b[1] < y0 < b[3] and middle < y0:
            y0 = b[3]
        elif b[1] < y1 < b[3] and middle > y1:
            y1 = b[1]
    return (x0, y0, x1, y1) if y1 - y0 >= MIN_SIDE else rect


def _beside(shown, caption, lo: float, hi: float) -> list:
    """A caption set beside its figure (Neuron's, in the outer column): the page's pictures
    outside the caption's column that start next to it."""
    out = [r for r in shown if not _in_column(r, lo, hi) and r[3] >= caption[1] - MAX_GAP]
    return out if out and min(r[1] for r in out) <= caption[3] else []


def _text_figure(blocks, caption, lo: float, hi: float, stops):
    """A figure set as text (rules, an example) right above its caption: the text blocks there up
    to running text, a heading's gap or another caption."""
    column = [b for b in blocks if _in_column(b[:4], lo, hi) and tuple(b[:4]) != tuple(caption)]
    text_width = max((b[2] - b[0] for b in column), default=hi - lo)
    edge, taken = caption[1], []
    for b in sorted((b for b in column if b[3] <= caption[1] + 2), key=lambda b: -b[3]):
        paragraph = len(b[4]) >= PARAGRAPH_CHARS and b[2] - b[0] >= 0.9 * text_width
        if edge - b[3] > MAX_GAP / 2 or paragraph or any(_overlap(b[:4], s) for s in stops):
            break
        taken.append(b[:4])
        edge = min(edge, b[1])
    return _union(taken) if taken else None


def _overlap(a, b) -> bool:
    return min(a[2], b[2]) > max(a[0], b[0]) and min(a[3], b[3]) > max(a[1], b[1])


def _contains(outer, inner) -> bool:
    return (
        outer[0] <= inner[0] + 1
        and outer[1] <= inner[1] + 1
        and outer[2] >= inner[2] - 1
        and outer[3] >= inner[3] - 1
    )


def _padded(rect, page_rect) -> tuple:
    return (
        max(page_rect.x0, rect[0] - PAD),
        max(page_rect.y0, rect[1] - PAD),
        min(page_rect.x1, rect[2] + PAD),
        min(page_rect.y1, rect[3] + PAD),
    )


def _png(page, rect) -> bytes:
    import pymupdf

    clip = pymupdf.Rect(rect)
    dpi = DPI
    pixels = (clip.width * dpi / 72) * (clip.height * dpi / 72)
    if pixels > MAX_PIXELS:
        dpi = max(36, int(dpi * (MAX_PIXELS / pixels) ** 0.5))
    return page.get_pixmap(clip=clip, dpi=dpi, alpha=False).tobytes("png")


def _fraction(rect, width: float, height: float) -> list[float]:
    x0, y0, x1, y1 = rect
    return [round(x0 / width, 4), round(y0 / height, 4), round(x1 / width, 4), round(y1 / height, 4)]


def _page_figures(
    page, captions: list[CaptionData], all_captions: list[CaptionData], extra=()
) -> list[Figure]:
    """The page's figures: one for each of `captions` found on it and each (caption, rectangle) of
    `extra` (captions the parser missed)."""
    blocks = page.get_text("blocks", sort=False)
    placed = [(c, _caption_rect(blocks, c)) for c in captions] + list(extra)
    stops_all = [r for c in all_captions if (r := _caption_rect(blocks, c)) is not None]
    stops_all += [r for _, r in extra]
    graphics = _graphics(page)
    words = [w[:4] for w in page.get_text("words", sort=False)]
    width, height = page.rect.width or 1.0, page.rect.height or 1.0
    out = []
    for caption, rect in placed:
        if rect is None:
            continue
        stops = [s for s in stops_all if s != rect]
        found = _figure_rect(page, rect, stops, graphics, blocks, words)
        if found is None:
            continue
        box, method = found
        png = _png(page, box)
        out.append(
            Figure(caption.label, caption.text, caption.page, _fraction(box, width, height), method, png)
        )
    return out


def _missing_numbers(labels: set[str]) -> set[str]:
    """The figure numbers below the highest the parser found that it did not find ("1" of 2-8)."""
    numbers = {int(label.split()[-1]) for label in labels if label.split()[-1].isdigit()}
    return {str(n) for n in range(1, max(numbers, default=0)) if n not in numbers}


def _missed_captions(doc, missing: set[str]) -> dict[int, list]:
    """Captions of the missing figure numbers that start a line inside a text block (Neuron sets
    a figure's title and its caption in one block): {page: [(CaptionData, rectangle)]}, the
    caption being its line and the lines under it that start where it does."""
    found: dict[int, list] = {}
    for page_no, page in enumerate(doc, 1):
        for block in page.get_text("dict", sort=False)["blocks"]:
            lines = block.get("lines", [])
            for i, line in enumerate(lines):
                text = clean_text("".join(span["text"] for span in line["spans"])).strip()
                label = caption_label(text)
                if not label or label[0] != "figure" or label[1].split()[-1] not in missing:
                    continue
                own = [line]
                for below in lines[i + 1 :]:
                    if (
                        abs(below["bbox"][0] - line["bbox"][0]) > 3
                        or below["bbox"][1] - own[-1]["bbox"][3] > 12
                    ):
                        break
                    own.append(below)
                words = " ".join(clean_text("".join(sp["text"] for sp in ln["spans"])).strip() for ln in own)
                missing.discard(label[1].split()[-1])
                caption = CaptionData("figure", label[1], page_no, words)
                found.setdefault(page_no, []).append((caption, _union([ln["bbox"] for ln in own])))
    return found


def find_figures(source: Path | bytes, captions: list[CaptionData]) -> list[Figure]:
    """The figures of a PDF, one per figure label whose caption is found on its page, in page
    order; a figure number below the highest whose caption the parser missed is looked for at
    the start of a line."""
    wanted = first_captions_by_page(captions, "figure")
    on_page: dict[int, list[CaptionData]] = {}
    for c in captions:
        on_page.setdefault(c.page, []).append(c)
    seen = {c.label for found in wanted.values() for c in found}
    if not wanted:
        return []
    doc = open_document(source)
    try:
        extra = _missed_captions(doc, _missing_numbers(seen)) if _missing_numbers(seen) else {}
        out: list[Figure] = []
        for page_no in sorted(set(wanted) | set(extra)):
            if 1 <= page_no <= doc.page_count:
                page = doc[page_no - 1]
                out += _page_figures(
                    page, wanted.get(page_no, []), on_page.get(page_no, []), extra.get(page_no, ())
                )
        return sorted(out, key=lambda f: (f.page, f.rect[1] if f.rect else 0))
    finally:
        doc.close()
