"""The guard for an average the paper never gives (reader/audit/averages.py)."""

from __future__ import annotations

from reader.audit.averages import average_reasons, averaged_things
from reader.audit.guards import PaperFacts, check_sentence
from reader.text.grid import Table

# the README sample's Table 1: a median of coverage, a range of passages
SAMPLE_TABLE = Table(
    "Table 1",
    "Table 1: Ingest of the 14 shared papers (186 pages).",
    2,
    [0, 0, 1, 1],
    [
        ["Measure", "Value"],
        ["Lowest coverage", "96.6%"],
        ["Median coverage", "99.8%"],
        ["Passages per paper", "44 to 112"],
    ],
    1,
)
SAMPLE_TEXT = "Table 1: Ingest of the 14 shared papers (186 pages). Measure Value Lowest coverage 96.6% Median coverage 99.8% Passages per paper 44 to 112"


def test_an_average_the_paper_never_gives_is_a_guard_finding():
    facts = PaperFacts.from_texts([SAMPLE_TEXT], [SAMPLE_TABLE])
    sentence = "The authors also provide metrics on the number of pages and the average number of passages per paper."
    reasons = check_sentence(sentence, facts)
    assert any(
        "average number of passages per paper" in r and "no average, mean or median" in r for r in reasons
    )
    # what the paper does give is not a finding, nor an adverb, nor the verb "means"
    assert average_reasons("The median coverage is 99.8%.", facts) == []
    assert average_reasons("Coverage is 99.8% on average.", facts) == []
    assert average_reasons("This means that most words are kept.", facts) == []


def test_the_paper_s_own_ways_of_giving_an_average_are_found():
    dyer = PaperFacts.from_texts(
        ["We see a high variance around a median of 27.2 BLEU and a mean of 27.1 BLEU."]
    )
    assert average_reasons("The 100 MIRA runs scatter around a median of 27.2 BLEU.", dyer) == []
    realm = PaperFacts.from_texts(["REALM reduces error by an average of 39% over previous methods."])
    assert average_reasons("REALM gives an average reduction of 39% in error.", realm) == []
    waves = PaperFacts.from_texts(["Waves in V4 travelled with a mean speed of 31 cm/s."])
    assert average_reasons("The review reports waves with a mean speed of 31 cm/s.", waves) == []
    assert average_reasons("The review reports a mean latency of 31 ms.", waves) != []


def test_a_table_with_an_average_row_averages_what_it_reports():
    table = Table(
        "Table 1",
        "Table 1: Type checking. Listed is area under the precision/recall curve.",
        5,
        [0, 0, 1, 1],
        [["Relation", "HMM-T", "N-GRAMS"], ["Conquered", "0.917", "0.767"], ["Average", "0.849", "0.712"]],
        1,
    )
    facts = PaperFacts.from_texts(["Listed is area under the precision/recall curve."], [table])
    assert average_reasons("With an average AUC of 0.849, HMM-T beats N-GRAMS.", facts) == []


def test_what_is_averaged_is_named_by_the_words_after_the_statistic():
    # the phrase ends at a comma
    assert averaged_things("a plain average of six factor scores, giving 3.17") == (
        "average of six factor scores",
        ["factor", "scores"],
    )
    assert averaged_things("REALM cuts error by 39% on average.") is None
