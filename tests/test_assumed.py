"""Assumptions the note puts on the paper: stated by the paper, or left to the reader."""

from __future__ import annotations

from reader.deepread.assumed import UNSTATED, PaperAssumptions

PAPER = PaperAssumptions.of(
    [
        "Our implementation makes the simplifying assumption that each sentence in the corpus is generated independently.",
        "REALM ranks candidate extractions by the likelihood that they are correct.",
        "The relations are assessed with HMM-T and REL-GRAMS.",
    ]
)


def test_an_assumption_the_paper_never_states_is_left_to_the_reader():
    assert PAPER.unstated("The model assumes that all relations are equally important.") == [UNSTATED]
    assert PAPER.unstated(
        "The assumptions made in the model (e.g., that the input text is clean) may not hold."
    ) == [UNSTATED]


def test_an_assumption_the_paper_states_and_sentences_claiming_none_pass():
    assert PAPER.unstated("The model assumes that each sentence is generated independently.") == []
    assert PAPER.unstated("REALM ranks candidate extractions by their likelihood.") == []
    assert PAPER.unstated("The paper assumes it.") == []  # nothing named to look for
    assert PAPER.unstated("Some tasks may rest on assumptions that are not met in other datasets.") == []


def test_an_assumption_said_to_be_unstated_that_the_paper_states_is_contradicted():
    from reader.deepread.assumed import STATED

    assert PAPER.unstated(
        "The model assumes that each sentence is generated independently, but this assumption is not "
        "explicitly stated in the text."
    ) == [STATED]
    assert PAPER.unstated(
        "The model assumes that all relations are equally important, but this is not explicitly stated."
    ) == [UNSTATED]
