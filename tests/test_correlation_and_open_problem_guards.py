"""The guards for a correlation stated as a score (reader/audit/correlations.py) and an open
problem stated as a result (reader/audit/open_problems.py)."""

from __future__ import annotations

from reader.audit.correlations import correlation_as_score_reasons
from reader.audit.guards import PaperFacts, check_sentence
from reader.audit.open_problems import open_problem_as_result_reasons

# as the long-summary evaluation paper prints its 0.89 (twice, both as a Kendall's τ)
CORRELATED = [
    "We also show that scores from a partial annotation of fine-grained units highly correlates with "
    "scores from a full annotation workload (0.89 Kendall's τ using 50% judgments).",
    "Despite annotating just half the summary, we observe a high correlation of 0.78-0.89 Kendall's τ.",
    "Annotators rated each summary on a 100-point scale; the mean faithfulness score was 0.71 overall.",
]


def test_a_correlation_stated_as_a_score_is_a_guard_finding():
    facts = PaperFacts.from_texts(CORRELATED)
    sentence = "The average human score for SQuALITY is 0.89 on a 100-point rating scale."
    reasons = check_sentence(sentence, facts)
    assert any("0.89 as a score" in r and "kendall" in r for r in reasons)


def test_a_correlation_named_as_one_or_a_figure_also_printed_as_a_score_passes():
    facts = PaperFacts.from_texts(CORRELATED)
    assert (
        correlation_as_score_reasons(
            "Partial annotation keeps a 0.89 Kendall's τ with full annotation.", facts
        )
        == []
    )
    assert correlation_as_score_reasons("The mean faithfulness score was 0.71.", facts) == []
    # a figure the paper never prints is the number guard's business, not this one's
    assert correlation_as_score_reasons("The average score is 0.55.", facts) == []
    # a figure not given as a score at all
    assert (
        correlation_as_score_reasons("Half of the judgments give 0.89 with the full workload.", facts) == []
    )


# as the tutorial on goal awareness names the development of evaluation protocols
TUTORIAL = [
    "In the last part, we will discuss the main open challenges in developing agent's awareness. "
    "The development of robust evaluation protocols has already been a long-standing problem for "
    "conversational systems.",
    "We introduce a taxonomy of proactive dialogue systems.",
]


def test_an_open_problem_stated_as_a_result_is_a_guard_finding():
    facts = PaperFacts.from_texts(TUTORIAL)
    sentence = "Key results include the development of robust evaluation protocols for conversational agents."
    reasons = check_sentence(sentence, facts)
    assert any("development of robust evaluation protocols" in r and "open problem" in r for r in reasons)
    # a true run first ("a taxonomy of proactive dialogue systems", the paper's own doing) does not hide it
    both = (
        "The authors also present a taxonomy of proactive dialogue systems and evaluate the development "
        "of robust evaluation protocols."
    )
    assert open_problem_as_result_reasons(both, facts)


def test_a_result_the_paper_claims_or_an_open_problem_said_as_such_passes():
    facts = PaperFacts.from_texts(TUTORIAL)
    # said as what it is
    assert (
        open_problem_as_result_reasons(
            "The tutorial names robust evaluation protocols as an open challenge.", facts
        )
        == []
    )
    # the paper's own doing ("we introduce") is a result
    assert (
        open_problem_as_result_reasons("Key results include a taxonomy of proactive dialogue systems.", facts)
        == []
    )
    # a paper that does what it also calls a problem
    solved = PaperFacts.from_texts(
        ["We report the development of robust evaluation protocols, a long-standing problem of the field."]
    )
    assert (
        open_problem_as_result_reasons(
            "Key results include the development of robust evaluation protocols.", solved
        )
        == []
    )
