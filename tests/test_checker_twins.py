"""The checker's minimal pairs: paraphrases kept or not, and their one-fact twins."""

from __future__ import annotations

import random

from scripts.training.paraphrase import keep_paraphrase, paraphrase_messages, parse_variants, source_sentences
from scripts.training.twins import (
    added_cause,
    moved_metric,
    moved_value,
    negated,
    swapped_numbers,
    swapped_sides,
    twins,
    widened_scope,
)

SOURCE = "Our parser reaches an F1 of 91.2 on the WSJ test set, against 89.7 for the Berkeley parser."


def test_a_paraphrase_is_kept_only_with_the_sources_numbers_and_names_and_other_words():
    assert keep_paraphrase(
        SOURCE, "The authors' parser attains 91.2 F1 on WSJ's test data, versus 89.7 for Berkeley's."
    )
    assert not keep_paraphrase(
        SOURCE, "The authors' parser attains 92.1 F1 on WSJ's test data, versus 89.7 for Berkeley's."
    )
    assert not keep_paraphrase(
        SOURCE, "The authors' parser attains 91.2 F1 on WSJ, versus 89.7 for the CKY tagger."
    )
    assert not keep_paraphrase(
        SOURCE, "Our parser reaches an F1 of 91.2 on the WSJ test set, against 89.7 for Berkeley."
    )
    assert not keep_paraphrase(SOURCE, 'The reviewer would summarise it as: "the parser is good".')


def test_a_paraphrase_that_turns_its_source_round_is_not_kept():
    # rewrites the embedded writer made of training papers' sentences
    crf = "Unlike CRF, our approach is not probabilistic and is not meant to model the joint distribution."
    assert not keep_paraphrase(
        crf,
        "Our approach differs from CRF in its probabilistic nature and its focus on modeling the joint distribution.",
    )
    assert keep_paraphrase(
        crf, "In contrast to CRF, the method is not probabilistic and does not model the joint distribution."
    )
    lower = "The error rate of the tagger is lower on news than on tweets."
    assert not keep_paraphrase(lower, "On news, the tagger's error rate is higher than it is on tweets.")
    assert keep_paraphrase(
        lower, "On news, the tagger makes fewer errors, its error rate being lower than on tweets."
    )


def test_variants_are_read_one_per_line_without_numbering():
    assert parse_variants('1. First one.\n2) "Second one."\n\n- Third one.\n1. First one.') == [
        "First one.",
        "Second one.",
        "Third one.",
    ]
    system, user = paraphrase_messages("A.", "B.", 0)
    assert "Sentence 1: A." in user["content"] and "Sentence 2: B." in user["content"]
    assert "three different" in system["content"]


def test_source_sentences_skip_references_and_prefer_checkable_ones():
    chunks = [
        ("References", "Smith J. A paper about parsing with many words in it. 2010."),
        ("Results", SOURCE + " We thank the reviewers for their helpful comments on the draft here."),
    ]
    picked = source_sentences(chunks, random.Random(1), 1)
    assert [s for s, _, _ in picked] == [SOURCE]


def test_each_twin_changes_one_fact_and_keeps_the_words():
    rng = random.Random(3)
    assert swapped_numbers(SOURCE, rng) == SOURCE.replace("91.2", "X").replace("89.7", "91.2").replace(
        "X", "89.7"
    )
    moved = moved_value(SOURCE, rng, "The parser reaches 91.2 F1; recall is 88.4 and precision 93.0.")
    assert moved != SOURCE and ("88.4" in moved or "93.0" in moved)
    sides = swapped_sides("SpanBERT outperforms BERT on SQuAD by 2.1 points.", rng)
    assert sides == "BERT outperforms SpanBERT on SQuAD by 2.1 points."
    assert moved_metric("It reaches a precision of 0.91 and a recall of 0.85.", rng) == (
        "It reaches a recall of 0.91 and a precision of 0.85."
    )
    assert negated("The gain is higher on long documents.", rng) == "The gain is lower on long documents."
    assert widened_scope("The method helps on some of the datasets.", rng) in {
        "The method helps on all of the datasets.",
        "The method helps on all of the datasets.",
    }
    assert swapped_numbers("No numbers here at all.", rng) is None


def test_twins_are_of_different_kinds_and_never_the_sentence_itself():
    made = twins(SOURCE, random.Random(5), n=3)
    assert len({kind for kind, _ in made}) == len(made) >= 2
    assert all(twin != SOURCE for _, twin in made)


def test_a_sentence_is_also_scored_against_its_best_excerpts_joined():
    from reader.checker.model import joined_excerpts

    texts, scores = ["first", "second", "third"], [0.2, 0.9, 0.5]
    assert joined_excerpts(texts, scores) == ["second … third", "first … second … third"]
    assert joined_excerpts(["only"], [0.4]) == []


def test_an_added_cause_joins_another_statement_of_the_paper_as_a_link_it_never_draws():
    twin = added_cause(
        "The parser reaches 91.2 F1 on WSJ.", "The training data holds 40,000 sentences.", random.Random(3)
    )
    assert twin.startswith("The parser reaches 91.2 F1 on WSJ, ") and twin.endswith(
        "the training data holds 40,000 sentences."
    )
    assert added_cause("The parser is fast.", "the parser is fast", random.Random(3)) is None
