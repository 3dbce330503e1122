"""The guards for a correlation stated as a score (reader/audit/correlations.py), an open
problem stated as a result and a plan stated as done (reader/audit/open_problems.py)."""

from __future__ import annotations

from reader.audit.correlations import correlation_as_score_reasons
from reader.audit.guards import PaperFacts, check_sentence
from reader.audit.open_problems import open_problem_as_result_reasons, plan_as_done_reasons

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


# as the phrase-generation paper ends its conclusion
PLANS = [
    "8 Conclusion and Future Work In this paper we have outlined a framework for generation with "
    "distributional semantic models.",
    "For future work we would like to experiment with more complex models for (de-)composition. "
    "Following this, we would like to extend the framework to handle arbitrary phrases, including making "
    "choices on the syntactic structure of the phrase to be generated.",
]


def test_a_plan_stated_as_done_is_a_guard_finding():
    facts = PaperFacts.from_texts(PLANS)
    # a follow-up answer of the acl2014 paper
    answer = "The paper reports that it extends the framework to handle arbitrary phrases, including making choices."
    reasons = check_sentence(answer, facts)
    assert any("as done, but the paper only plans it" in r and "extend the framework" in r for r in reasons)
    # an answer's passages: the second begins inside "would like to" (passages overlap)
    passages = PaperFacts.from_texts(
        PLANS + ["like to extend the framework to handle arbitrary phrases, including making choices."]
    )
    assert any("as done, but the paper only plans it" in r for r in check_sentence(answer, passages))


def test_a_plan_told_as_a_plan_or_a_heading_words_pass():
    facts = PaperFacts.from_texts(PLANS)
    for told in [
        "The authors would like to extend the framework to handle arbitrary phrases, including making choices.",
        "Extending the framework to handle arbitrary phrases, including making choices, is left open.",
        "Future work includes extending the framework to handle arbitrary phrases, including making choices.",
    ]:
        assert plan_as_done_reasons(told, facts) == [], told
    # "Conclusion and Future Work" is a heading, not a plan
    assert (
        plan_as_done_reasons(
            "The authors have outlined a framework for generation with distributional semantic models.", facts
        )
        == []
    )
    # words far after the plan ("would like to extend …, including making choices on …")
    far = "Earlier work reports choices on the syntactic structure of the phrase to be generated."
    assert plan_as_done_reasons(far, facts) == []
    # the plan's verb is not what the sentence does (longeval: "As future work we plan to conduct
    # experiments on other aspects of summarization evaluation like salience and coherence")
    planned = PaperFacts.from_texts(
        [
            "As future work we plan to conduct experiments on other aspects of summarization evaluation like salience."
        ]
    )
    other = "The prior work focuses on other aspects of summarization evaluation like salience."
    assert plan_as_done_reasons(other, planned) == []
    assert plan_as_done_reasons(other.replace("focuses", "conducts experiments"), planned) != []
