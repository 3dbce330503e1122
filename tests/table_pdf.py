"""A small PDF with a results table, made with pymupdf for the tables' tests.

One page: a title, an introduction, a booktabs-style table (rules above, under the header and
below; "Accuracy" over the two dataset columns with its own short rule) with its caption under
it, and a paragraph that cites the table's numbers."""

from __future__ import annotations

from pathlib import Path

HEADER = ["Model", "SQA", "WikiQA", "F1"]
ROWS = [
    ["BERT", "81.9", "77.2", "0.91"],
    ["RoBERTa", "84.0", "79.5", "0.92"],
    ["Ours", "85.1", "80.3", "0.94"],
]
CAPTION = "Table 2: Accuracy of three models on SQA and WikiQA, and their F1."
BODY = (
    "Our model reaches 85.1 on SQA, which improves on BERT by 3.2 points. "
    "All models were trained for three epochs on the same data."
)
COLUMNS = [72, 190, 260, 340]  # left edge of each column's text


def make_table_pdf(path: Path) -> Path:
    import pymupdf

    doc = pymupdf.open()
    page = doc.new_page(width=595, height=842)
    page.insert_text((72, 90), "Reading Tables as Data in Question Answering", fontsize=16)
    page.insert_text((72, 130), "1 Introduction", fontsize=12)
    intro = (
        "Question answering systems are compared on benchmarks, and the comparison is printed as a "
        "table of numbers. This paper measures three models on two datasets and reports them below."
    )
    page.insert_textbox(pymupdf.Rect(72, 140, 520, 200), intro, fontsize=10)
    top = 230
    page.draw_line((70, top), (420, top), width=0.8)
    page.insert_text((190, top + 14), "Accuracy", fontsize=10)
    page.draw_line((188, top + 18), (320, top + 18), width=0.4)
    for x, text in zip(COLUMNS, HEADER):
        page.insert_text((x, top + 32), text, fontsize=10)
    page.draw_line((70, top + 37), (420, top + 37), width=0.4)
    for i, row in enumerate(ROWS):
        for x, text in zip(COLUMNS, row):
            page.insert_text((x, top + 52 + 15 * i), text, fontsize=10)
    bottom = top + 52 + 15 * (len(ROWS) - 1) + 6
    page.draw_line((70, bottom), (420, bottom), width=0.8)
    page.insert_text((72, bottom + 20), CAPTION, fontsize=10)
    page.insert_text((72, bottom + 60), "2 Results", fontsize=12)
    page.insert_textbox(pymupdf.Rect(72, bottom + 70, 520, bottom + 140), BODY, fontsize=10)
    doc.save(path)
    doc.close()
    return path
