"""Tables as data: a cell's number, its row and column headers, and the geometry that finds the
cells from words and rules (reader/text/grid.py, reader/ingest/table_layout.py)."""

from __future__ import annotations

import pytest

from reader.ingest.table_layout import Line, Rules, Word, fill, lines_of, spanned
from reader.text.grid import cell_number, guess_header_rows, table_cells


@pytest.mark.parametrize(
    "text, value, decimals, percent",
    [
        ("85.1", 85.1, 1, False),
        ("**85.1**", 85.1, 1, False),
        ("85.1*", 85.1, 1, False),
        ("85.1†", 85.1, 1, False),
        ("(85.10)", 85.1, 2, False),
        ("90.41 ± 0.06", 90.41, 2, False),
        ("0.907 (19%)", 0.907, 3, False),
        ("45%", 45.0, 0, True),
        ("−2.3", -2.3, 1, False),
        ("1,990", 1990.0, 0, False),
    ],
)
def test_a_cell_holds_one_number_whatever_its_marks(text, value, decimals, percent):
    n = cell_number(text)
    assert n is not None and n.value == pytest.approx(value)
    assert (n.decimals, n.percent) == (decimals, percent)


@pytest.mark.parametrize("text", ["BERT", "n/a", "", "12 / 15", "dev-nc", "<0.0001 and more words"])
def test_a_cell_of_words_is_no_number(text):
    assert cell_number(text) is None


ROWS = [
    ["Method", "SQA", "SQA", "WikiQA"],
    ["", "prec.", "recall", "recall"],
    ["BERT", "0.88", "0.91", "0.77"],
    ["RoBERTa", "0.90", "0.93", "0.79"],
]


def test_headers_are_the_rows_above_the_numbers_and_the_label_column():
    assert guess_header_rows(ROWS) == 2
    cells = {(c.row_header, c.col_header): c.value for c in table_cells(ROWS)}
    assert cells[("BERT", "SQA / recall")] == 0.91
    assert cells[("RoBERTa", "WikiQA / recall")] == 0.79
    assert len(cells) == 6


def test_a_group_name_written_once_heads_the_rows_under_it():
    rows = [
        ["Scenario", "System", "WER"],
        ["Supervised", "MaxEnt", "76.0"],
        ["", "CRF", "80.3"],
        ["Hybrid", "MaxEnt", "88.1"],
    ]
    headers = [c.row_header for c in table_cells(rows)]
    assert headers == ["Supervised / MaxEnt", "Supervised / CRF", "Hybrid / MaxEnt"]


def _words(y: float, items: list[tuple[float, str]], height: float = 8.0) -> list[Word]:
    return [Word(x, y, x + 6 * len(t), y + height, t) for x, t in items]


def test_two_plain_numbers_side_by_side_are_two_cells():
    (line,) = lines_of(_words(100, [(10, "Random"), (80, "83.4"), (106, "84.0")]))
    assert [len(p) for p in line.phrases()] == [1, 1, 1]


def test_a_vertical_rule_between_two_words_parts_them():
    rules = Rules(vertical=[(72.0, 90.0, 120.0)])
    (line,) = lines_of(_words(100, [(10, "Supervised"), (74, "CRF")]), rules)
    assert len(lines_of(_words(100, [(10, "Supervised"), (74, "CRF")]))[0].phrases()) == 1
    assert [[w.text for w in p] for p in line.phrases()] == [["Supervised"], ["CRF"]]


def test_a_header_over_a_short_rule_spans_the_columns_under_it():
    columns = [(10.0, 40.0), (60.0, 80.0), (100.0, 130.0), (150.0, 170.0)]
    phrase = [Word(75, 50, 120, 58, "Accuracy")]
    rules = Rules(horizontal=[(58.0, 132.0, 61.0)])
    assert spanned(phrase, columns, rules) == [1, 2]


def test_fill_reads_a_table_from_words_with_a_two_level_header():
    words = (
        _words(50, [(75, "Accuracy")])
        + _words(62, [(10, "Model"), (60, "SQA"), (100, "WikiQA"), (150, "F1")])
        + _words(74, [(10, "BERT"), (60, "81.9"), (100, "77.2"), (150, "0.91")])
        + _words(86, [(10, "Ours"), (60, "85.1"), (100, "80.3"), (150, "0.94")])
    )
    rules = Rules(horizontal=[(58.0, 140.0, 59.5)])
    filled = fill(words, [], [], rules)
    assert filled is not None and filled.header_rows == 2
    assert filled.rows[0] == ["", "Accuracy", "Accuracy", ""]
    assert filled.rows[3] == ["Ours", "85.1", "80.3", "0.94"]
    assert filled.boxes[2][1] == (60, 74, 84, 82)
    assert isinstance(lines_of(words)[0], Line)


def test_a_wrapped_label_carries_on_its_row():
    words = (
        _words(62, [(10, "Model"), (120, "Score")])
        + _words(74, [(10, "MultiFiT with"), (120, "88.6")])
        + _words(84, [(10, "pooling")])
        + _words(96, [(10, "Char-CNN"), (120, "78.5")])
    )
    filled = fill(words, [], [])
    assert filled is not None
    assert [r[0] for r in filled.rows] == ["Model", "MultiFiT with pooling", "Char-CNN"]
