"""A small PDF with two figures, made with pymupdf for the figures' tests.

Page 1: a title, an introduction, an embedded picture (a red box on grey) with "Figure 1: …"
under it, a paragraph. Page 2: a bar chart drawn as vector shapes with axis labels, its caption
"Figure 2: …" under it, a paragraph citing both figures."""

from __future__ import annotations

from pathlib import Path

CAPTION_1 = "Figure 1: Overview of the reading pipeline from PDF to notes."
CAPTION_2 = "Figure 2: Accuracy of three models on SQA, drawn as bars."
PICTURE = (72, 220, 372, 400)  # where the embedded image stands on page 1 (pt)
CHART = (100, 160, 400, 360)  # where the drawn chart stands on page 2 (pt)
BODY = (
    "Figure 1 shows the pipeline and Figure 2 compares three models. Each model was trained for "
    "three epochs on the same data, and the comparison is repeated over five seeds in every case."
)


def _picture():
    import pymupdf

    pix = pymupdf.Pixmap(pymupdf.csRGB, pymupdf.IRect(0, 0, 200, 120), False)
    pix.clear_with(200)
    pix.set_rect(pymupdf.IRect(40, 30, 160, 90), (220, 20, 20))
    return pix


def make_figure_pdf(path: Path) -> Path:
    import pymupdf

    doc = pymupdf.open()
    page = doc.new_page(width=595, height=842)
    page.insert_text((72, 90), "Figures Read from Papers", fontsize=16)
    page.insert_textbox(pymupdf.Rect(72, 120, 520, 200), BODY, fontsize=10)
    page.insert_image(pymupdf.Rect(*PICTURE), pixmap=_picture())
    page.insert_text((72, 420), CAPTION_1, fontsize=9)
    page.insert_textbox(pymupdf.Rect(72, 450, 520, 520), BODY, fontsize=10)

    page = doc.new_page(width=595, height=842)
    page.insert_textbox(pymupdf.Rect(72, 72, 520, 140), BODY, fontsize=10)
    x0, y0, x1, y1 = CHART
    page.draw_line((x0, y0), (x0, y1), width=1)
    page.draw_line((x0, y1), (x1, y1), width=1)
    for i, height in enumerate((120, 150, 170)):
        left = x0 + 30 + i * 90
        page.draw_rect(pymupdf.Rect(left, y1 - height, left + 50, y1), color=(0, 0, 1), fill=(0.3, 0.5, 0.9))
    for i, name in enumerate(("BERT", "RoBERTa", "Ours")):
        page.insert_text((x0 + 35 + i * 90, y1 + 14), name, fontsize=8)
    page.insert_text((72, y1 + 44), CAPTION_2, fontsize=9)
    page.insert_textbox(pymupdf.Rect(72, y1 + 70, 520, y1 + 140), BODY, fontsize=10)
    doc.save(path)
    doc.close()
    return path
