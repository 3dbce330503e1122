"""A section cut to a budget keeps its most telling sentences, in order, with gaps marked."""

from __future__ import annotations

from reader.deepread.extract import GAP, select_sentences, sentence_score
from reader.text.tokens import estimate_tokens

SECTION = (
    "Tagging tweets is an old problem. Many people use social media every day. "
    "Our tagger reaches 91.2 F1 on WNUT-17, 4.1 points higher than the CRF baseline. "
    "The corpus was collected over two years. However, it fails on hashtags that join words."
)


def test_numbers_comparisons_and_limitations_outrank_background():
    assert sentence_score("Our tagger reaches 91.2 F1, higher than the CRF baseline.") > sentence_score(
        "Many people use social media every day."
    )
    assert sentence_score("However, it fails on hashtags.") > sentence_score("The corpus was collected.")


def test_the_best_sentences_fit_the_budget_in_the_papers_order():
    budget = 45
    cut = select_sentences(SECTION, budget)
    assert estimate_tokens(cut) <= budget + 4  # the gap marks
    assert "91.2 F1" in cut and "fails on hashtags" in cut
    assert "social media" not in cut
    assert cut.index("91.2") < cut.index("hashtags")
    assert GAP.strip() in cut


def test_a_section_that_fits_is_given_whole_and_an_empty_one_is_empty():
    assert select_sentences(SECTION, 500) == SECTION
    assert select_sentences("", 10) == ""
