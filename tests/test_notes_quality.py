"""The notes-quality benchmark's measures (benchmarks/notes_quality.py) on a small made-up paper."""

from __future__ import annotations

from benchmarks.notes_quality import PaperText, measure_document, section_text
from reader.audit.guards import PaperFacts

SECTIONS = [
    ("Abstract", ["We propose HeadPrune, which keeps 97.1% of MNLI accuracy."]),
    ("3 Method", ["HeadPrune scores each attention head by the gradient of its gate."]),
    ("4 Results", ["On MNLI HeadPrune reaches 83.97 against 84.27 for the full BERT model."]),
]


def paper() -> PaperText:
    texts = [s for _, sentences in SECTIONS for s in sentences]
    return PaperText(SECTIONS, SECTIONS[0][1][0], SECTIONS[2][1][0], PaperFacts.from_texts(texts))


def test_repeats_copies_first_person_and_empty_items_are_counted():
    document = (
        "## Key results\n"
        "We propose HeadPrune, which keeps 97.1% of MNLI accuracy.\n"  # copied, first person
        "HeadPrune reaches 83.97 on MNLI, close to the 84.27 of the full BERT model.\n"
        "HeadPrune reaches 83.97 on MNLI, close to the 84.27 of the full BERT model.\n"  # repeated
        "The paper does not provide any missing baselines.\n"
        "On its method, the paper says (p. 1): “We propose HeadPrune”.\n"  # the paper's "we", quoted
        "-\n"
        "## Open questions\n"
    )
    m = measure_document(document, paper())
    assert m["sentences"] == 5 and m["distinct"] == 4
    assert m["first_person"] == 1 and m["copies"] == 1 and m["nothing_there"] == 1
    assert m["empty_items"] == 2  # the empty bullet and the empty heading
    assert m["drawn"] == {0, 2}  # the abstract's and the results' sentences were drawn on
    assert m["specific"] >= 3
    assert "83.97" in section_text(document, "Key results") and section_text(document, "Method") == ""
