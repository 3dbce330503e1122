import pytest
from concurrency_probe import ConcurrencyProbe

from reader.crag.grade import (
    AMBIGUOUS_SCORE,
    IRRELEVANT_SCORE,
    RELEVANT_SCORE,
    grade_passages,
    parse_grade,
)
from reader.llm.scripted import ScriptedLLM


@pytest.mark.parametrize(
    "reply, score",
    [
        ("Score: 0.75\nReason: names the baselines", 0.75),
        ("score:0.75", 0.75),
        ("Score: 0.9", 0.9),  # with a space
        ("SCORE :  0.9", 0.9),
        ("**Score:** 0.85\nReason: it lists them", 0.85),
        ("Score: 7/10", 0.7),
        ("7/10 - mentions the baselines", 0.7),
        ("The passage gets 3 / 10 from me", 0.3),
        ("Relevance: 8/10", 0.8),
        ("8", 0.8),  # bare number on a 1-10 scale
        ("8.", 0.8),
        ("0.3", 0.3),
        ("9 - directly states the comparison", 0.9),
        ("Score: 8\nReason: relevant", 0.8),  # 1-10 scale behind a label
        ("Score: 85", 0.85),  # percent
        ("Score: 0.2\nReason: irrelevant, but explicit score wins", 0.2),
        ("Score: 0.9 (the passage is irrelevant to other questions)", 0.9),
        ("Score: 12/10", 1.0),  # clamped
        ("评分：0.7 理由：相关", 0.7),
        ("Relevance: relevant, Score: 0.9", 0.9),  # seed 000's own format
        ("Relevance: irrelevant, Score: 0.1", 0.1),
    ],
)
def test_explicit_scores_win(reply, score):
    parsed, ambiguous, _ = parse_grade(reply)
    assert parsed == pytest.approx(score)
    assert ambiguous is False


@pytest.mark.parametrize(
    "reply, score",
    [
        ("The passage is relevant: it lists the baselines.", RELEVANT_SCORE),
        ("Relevant.", RELEVANT_SCORE),
        ("This passage is irrelevant to the question.", IRRELEVANT_SCORE),
        ("Irrelevant", IRRELEVANT_SCORE),
        ("The passage is not relevant.", IRRELEVANT_SCORE),
        ("Relevant? No, this is irrelevant.", IRRELEVANT_SCORE),  # irrelevant wins over relevant
        ("该段落与问题相关。", RELEVANT_SCORE),
        ("该段落与问题不相关。", IRRELEVANT_SCORE),
        ("1. The passage is relevant", RELEVANT_SCORE),  # a list number is not a score
        ("It compares 3 baselines and is relevant", RELEVANT_SCORE),  # a count is not a score
    ],
)
def test_words_decide_without_a_score(reply, score):
    parsed, ambiguous, _ = parse_grade(reply)
    assert parsed == score
    assert ambiguous is False


@pytest.mark.parametrize(
    "reply, score, reasoning",
    [
        (
            "YES\nThe passage lists SIF, SciBERT and Sent-BERT.",
            RELEVANT_SCORE,
            "The passage lists SIF, SciBERT and Sent-BERT",
        ),
        ("Yes, it names the baselines.", RELEVANT_SCORE, "it names the baselines"),
        ("**NO**\nIt is about dialogue systems.", IRRELEVANT_SCORE, "It is about dialogue systems"),
        ("NO", IRRELEVANT_SCORE, "NO"),
        ("no.", IRRELEVANT_SCORE, "NO"),
        ("NO\nScore: 0.7", 0.7, ""),  # an explicit score still wins
        ("Not sure; nothing relevant", RELEVANT_SCORE, "Not sure; nothing relevant"),  # "Not" is not "No"
    ],
)
def test_the_yes_no_verdict_the_prompt_asks_for(reply, score, reasoning):
    parsed, ambiguous, why = parse_grade(reply)
    assert parsed == score and ambiguous is False
    assert why == reasoning


@pytest.mark.parametrize(
    "reply",
    [
        "",
        "   ",
        "I cannot tell.",
        "banana",
        "Score: high",
        "Score: -",
        "Score: 500",
        "The passage discusses 2019 results.",
    ],
)
def test_junk_is_ambiguous_and_below_threshold(reply):
    parsed, ambiguous, reasoning = parse_grade(reply)
    assert parsed == AMBIGUOUS_SCORE < 0.6
    assert ambiguous is True
    assert reasoning  # always something to show


def test_reasoning_is_the_one_line_reason():
    _, _, reasoning = parse_grade("Score: 0.8\nReason: Table 2 lists LDA and TF-IDF baselines.\nextra")
    assert reasoning == "Table 2 lists LDA and TF-IDF baselines."
    _, _, reasoning = parse_grade("0.7 - talks about the evaluation")
    assert reasoning == "talks about the evaluation"


def test_grading_is_concurrent_keeps_order_and_survives_a_failed_call():
    probe = ConcurrencyProbe()
    llm = ScriptedLLM(probe.wrap(lambda prompt: "Score: 0.9" if "alpha" in prompt else "Score: 0.1"))
    llm.enqueue(RuntimeError("endpoint down"))  # the first call fails
    passages = [(f"chunk:{i}", "alpha text" if i % 2 else "beta text", "p") for i in range(6)]
    grades = grade_passages("q?", passages, llm, max_workers=4)
    assert [g.chunk_key for g in grades] == [f"chunk:{i}" for i in range(6)]
    failed = [g for g in grades if g.error]
    assert len(failed) == 1 and failed[0].ambiguous and failed[0].score == AMBIGUOUS_SCORE
    ok = [g for g in grades if not g.error]
    assert all(g.score == (0.9 if int(g.chunk_key.split(":")[1]) % 2 else 0.1) for g in ok)
    assert probe.peak > 1
    assert all(call["stage"] == "crag-grade" for call in llm.history)


# Numbers inside the reason are part of the reason: only a labelled score
# ("Score: 7/10", "score = 0.8", "Relevance: 8") overrides the YES/NO verdict.
@pytest.mark.parametrize(
    "reply, score, reasoning",
    [
        ("NO — covers 3/4 datasets", IRRELEVANT_SCORE, "covers 3/4 datasets"),
        ("YES, 2 of 3 claims", RELEVANT_SCORE, "2 of 3 claims"),
        (
            "YES\n3/4 of the baselines are named in the passage.",
            RELEVANT_SCORE,
            "3/4 of the baselines are named in the passage",
        ),
        (
            "NO. The passage covers 1/2 of the question (the datasets, not the metrics).",
            IRRELEVANT_SCORE,
            "The passage covers 1/2 of the question (the datasets, not the metrics)",
        ),
        ("YES - 2/3 claims are answered by Table 2", RELEVANT_SCORE, "2/3 claims are answered by Table 2"),
        (
            "NO\nIt only reports a ROUGE score 0.41 on CNN/DM.",
            IRRELEVANT_SCORE,
            "It only reports a ROUGE score 0.41 on CNN/DM",
        ),
        (
            "NO — only 1 of the 4 metrics (F1 score: 0.91) is given",
            IRRELEVANT_SCORE,
            "only 1 of the 4 metrics (F1 score: 0.91) is given",
        ),
        (
            "YES\nReason: names 3 baselines and their 10/10 recall",
            RELEVANT_SCORE,
            "names 3 baselines and their 10/10 recall",
        ),
        (
            "NO (covers 9/10 of the datasets but none of the question's metrics)",
            IRRELEVANT_SCORE,
            "covers 9/10 of the datasets but none of the question's metrics)",
        ),
        (
            "**YES**\nThe passage lists 8 of the 10 systems compared in Table 3.",
            RELEVANT_SCORE,
            "The passage lists 8 of the 10 systems compared in Table 3",
        ),
        (
            "Answer: NO\nThe passage is about 2 other tasks.",
            IRRELEVANT_SCORE,
            "The passage is about 2 other tasks",
        ),
        # a labelled score does override the verdict
        ("NO\nScore: 7/10", 0.7, ""),
        ("YES (score = 0.8)", 0.8, ""),
        ("NO, score: 0.3", 0.3, ""),
        ("YES\nRelevance: 9\nReason: names the baselines", 0.9, "names the baselines"),
        ("NO — Score: 0.6, it covers 3/4 datasets", 0.6, "it covers 3/4 datasets"),
        ("YES\n**Relevance:** 7/10", 0.7, ""),
    ],
)
def test_only_a_labelled_score_overrides_the_verdict(reply, score, reasoning):
    parsed, ambiguous, why = parse_grade(reply)
    assert parsed == pytest.approx(score) and ambiguous is False
    assert why == reasoning


@pytest.mark.parametrize(
    "reply, score, ambiguous",
    [
        ("It covers 3/4 datasets and is relevant", RELEVANT_SCORE, False),  # a count is not a score
        ("It covers 3/4 datasets", AMBIGUOUS_SCORE, True),
        ("The passage gets 3 / 10 from me", 0.3, False),  # a fraction on a score scale
        ("score = 0.8", 0.8, False),
        ("Relevance: 8", 0.8, False),
        ("Relevant: 7/10", 0.7, False),
        ("1. Score: 0.8", 0.8, False),
    ],
)
def test_scores_without_a_verdict_word(reply, score, ambiguous):
    parsed, amb, _ = parse_grade(reply)
    assert parsed == pytest.approx(score) and amb is ambiguous
