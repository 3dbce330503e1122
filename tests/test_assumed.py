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


def test_an_assumption_put_on_the_paper_that_it_attributes_to_other_work_is_not_its_own():
    from reader.deepread.assumed import OTHERS

    # the literature-graph paper, its sentence cut by a page's foot
    paper = PaperAssumptions.of(
        [
            "For example, most research on named entity recognition tasks report results on large labeled "
            "datasets such as CoNLL-2003 and ACE-2005 (e.g., Lample et al.,",
            "Proceedings of NAACL-HLT 2018, pages 84–91.",
            "2016), and assume that entity types in the test set match those labeled in the training set.",
            "We assume that every paper has a title.",
        ]
    )
    claim = "The paper assumes that entity types in the test set match those labeled in the training set."
    assert paper.unstated(claim) == [OTHERS]
    # the paper's own assumption, and other work's told as theirs, pass
    assert paper.unstated("The model assumes that every paper has a title.") == []
    assert paper.unstated(claim.replace("The paper assumes", "They assume")) == []
    # with no other work named, the paper's sentence is its own
    own = PaperAssumptions.of(
        ["We assume that entity types in the test set match those labeled in training."]
    )
    assert own.unstated(claim) == []
