"""The guards for an average the paper never gives (reader/audit/averages.py) and a gain stated as
a level (reader/audit/gains.py)."""

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


def test_a_gain_the_paper_gives_stated_as_a_level_is_a_guard_finding():
    from reader.audit.gains import gain_as_level_reasons

    # dyer12: 2 BLEU points is what large feature sets gain over the 12 default features
    dyer = PaperFacts.from_texts(
        [
            "Here tuning large feature sets on the respective dev sets yields significant improvements of "
            "around 2 BLEU points over tuning the 12 default features on the dev sets. The perceptron "
            "achieves 28.0 BLEU on the news-commentary test set."
        ]
    )
    made_up = (
        "Tuning 12 default features on the development set yields BLEU-4 scores of around 2 BLEU points."
    )
    (reason,) = check_sentence(made_up, dyer)
    assert reason.startswith("gives 2 BLEU points as a level, but the paper gives it only as a gain")
    assert "improvements of around 2 bleu points over tuning" in reason
    # the paper's level, the gain told as a gain, and a figure without a unit are left alone
    assert gain_as_level_reasons("The perceptron achieves 28.0 BLEU on the test set.", dyer) == []
    assert gain_as_level_reasons("Large feature sets yield improvements of 2 BLEU points.", dyer) == []
    assert gain_as_level_reasons("The 12 features reach a score of 2.", dyer) == []
