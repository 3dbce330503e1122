"""The turned-round check: a written sentence against the paper sentence closest to it."""

from __future__ import annotations

from reader.deepread.polarity import TURNED_ROUND, PaperPolarity

PAPER = [
    "The techniques are also not limited to a certain type of dialogues and can be generalized to diverse systems.",
    "The metabolites that decreased the most under heat stress showed positive correlation with the yield traits.",
    "This analysis model should not only take into account the relationships that are triggered consecutively, "
    "but also those that occur in a spatial area.",
    "Accuracy on the news test set is 81.2% for the tagger.",
]
CHECK = PaperPolarity.of(PAPER)


def test_a_negation_the_paper_makes_and_the_sentence_drops_is_turned_round():
    reasons = CHECK.contradicting("The techniques used are limited to a certain type of dialogues.")
    assert reasons and reasons[0].startswith(TURNED_ROUND) and "not limited" in reasons[0]


def test_a_word_of_direction_against_its_opposite_in_the_paper_is_turned_round():
    reasons = CHECK.contradicting(
        "Metabolites that decreased most under heat stress were negatively correlated with the yield traits."
    )
    assert reasons and "positive correlation" in reasons[0]


def test_agreeing_sentences_pass():
    assert CHECK.contradicting("The techniques are not limited to one type of dialogues.") == []
    assert (
        CHECK.contradicting(
            "Metabolites that decreased the most under heat stress correlated positively with the yield traits."
        )
        == []
    )
    # "not only … but also" affirms both
    assert (
        CHECK.contradicting(
            "The analysis model takes into account relationships triggered consecutively and those in a spatial area."
        )
        == []
    )
    # too little of the sentence is in any paper sentence to call one the closest
    assert CHECK.contradicting("The tagger is limited to news text.") == []


def test_the_deep_read_objects_to_a_sentence_that_turns_the_paper_round():
    from types import SimpleNamespace

    from reader.audit.citations import ReferenceList
    from reader.deepread.absence import PaperStatements
    from reader.deepread.assumed import PaperAssumptions
    from reader.deepread.checked import paper_checks
    from reader.deepread.number_owners import NumberOwners
    from reader.deepread.read import _objections

    sections = [SimpleNamespace(title="Tutorial", text=" ".join(PAPER), priority=1)]
    read = SimpleNamespace(
        checks=paper_checks(sections),
        statements=PaperStatements.of(PAPER),
        owners=NumberOwners.of(PAPER),
        polarity=CHECK,
        assumptions=PaperAssumptions.of(PAPER),
        references=ReferenceList.build(references=[], body=PAPER),
    )
    reasons = _objections("The techniques used are limited to a certain type of dialogues.", read)
    assert len(reasons) == 1 and reasons[0].startswith(TURNED_ROUND)


def test_the_paper_s_sentences_stemmed_once_give_the_deep_read_the_same_checks():
    """deep_read stems the paper's sentences once and passes the stems to the three checks that use
    them: each built so is the one that stems them itself (the first sentences negate, the last not)."""
    from reader.audit.citations import content_stems
    from reader.deepread.absence import PaperStatements
    from reader.deepread.assumed import PaperAssumptions

    stemmed = [frozenset(content_stems(s)) for s in PAPER]
    assert PaperPolarity.of(PAPER, stemmed) == CHECK
    assert PaperStatements.of(PAPER, stemmed) == PaperStatements.of(PAPER)
    assert PaperAssumptions.of(PAPER, stemmed) == PaperAssumptions.of(PAPER)
