import pytest
from crag_fakes import CHUNKS, CragLLM

from reader.crag.correct import parse_rewrites
from reader.crag.evidence import Candidate
from reader.crag.generate import (
    NOT_FOUND,
    NOT_FOUND_ZH,
    generate_answer,
    is_not_found,
    not_found_sentinel,
    select_within_budget,
)
from reader.crag.grade import Grade
from reader.crag.refine import normalise_space, parse_selection, refine_in_batches
from reader.crag.route import AMBIGUOUS, CORRECT, INCORRECT, choose_route, confidence, why_missed
from reader.llm.scripted import ScriptedLLM
from reader.prompts import render


def cand(key, score, *, ambiguous=False, fused=0.016, text="x"):
    c = Candidate(key=f"chunk:{key}", text=text, paper_id="p", chunk_id=key, fused_score=fused)
    c.grade = Grade(c.key, score, ambiguous, "why")
    return c


@pytest.mark.parametrize(
    "scores, route",
    [
        ([0.9, 0.7, 0.1], CORRECT),
        ([0.6, 0.6], CORRECT),  # the threshold itself passes
        ([0.9, 0.1, 0.1], AMBIGUOUS),  # only one above
        ([0.4, 0.2, 0.2], AMBIGUOUS),  # an ambiguous/middling grade
        ([0.5, 0.1], AMBIGUOUS),
        ([0.2, 0.2, 0.3], INCORRECT),
        ([], INCORRECT),
    ],
)
def test_route_tiers(scores, route):
    assert choose_route([cand(i, s) for i, s in enumerate(scores)]) == route


def test_route_threshold_is_configurable():
    cs = [cand(1, 0.7), cand(2, 0.65)]
    assert choose_route(cs, threshold=0.6) == CORRECT
    assert choose_route(cs, threshold=0.8) == AMBIGUOUS


def test_confidence_weights_grades_by_fused_retrieval_score():
    top_relevant = [cand(1, 0.9, fused=1 / 61), cand(2, 0.1, fused=1 / 70)]
    top_irrelevant = [cand(1, 0.1, fused=1 / 61), cand(2, 0.9, fused=1 / 70)]
    assert confidence(top_relevant) > 0.5 > confidence(top_irrelevant)
    assert confidence([]) == 0.0
    assert confidence([cand(1, 0.8, fused=0.0)]) == 0.8  # zero scores: plain mean


def test_why_missed_summarises_the_grades():
    text = why_missed([cand(1, 0.3), cand(2, 0.1)], 0.6)
    assert "2 passages" in text and "0 judged relevant" in text and "0.30" in text
    assert why_missed([], 0.6) == "the search returned no passages at all."


@pytest.mark.parametrize(
    "reply, expected",
    [
        (
            "LDA baselines\nTF-IDF comparison\nevaluation setup",
            ["LDA baselines", "TF-IDF comparison", "evaluation setup"],
        ),
        (
            '1. LDA baselines\n2) TF-IDF comparison\n- "evaluation setup"\n4. extra',
            ["LDA baselines", "TF-IDF comparison", "evaluation setup"],
        ),
        ("Here are three queries:\n* a b c\n\n* a b c\n* d e f", ["a b c", "d e f"]),
        ("Which baselines?\nbaseline systems", ["baseline systems"]),  # the question itself is not a rewrite
        ("", []),
    ],
)
def test_parse_rewrites(reply, expected):
    assert parse_rewrites(reply, "Which baselines?") == expected


@pytest.mark.parametrize(
    "reply, n, expected",
    [
        ("2, 5", 6, [2, 5]),
        ("Sentences 3 and 1 help.", 4, [1, 3]),
        ("1-3", 5, [1, 2, 3]),
        ("[2]", 3, [2]),
        ("9", 3, None),  # out of range and nothing else: unusable
        ("none", 3, []),
        ("None of them.", 3, []),
        ("no idea", 3, None),
    ],
)
def test_parse_selection(reply, n, expected):
    assert parse_selection(reply, n) == expected


def test_refine_keeps_sentences_verbatim_and_drops_chunks_with_nothing_relevant():
    llm = CragLLM(relevant_words=["baselines", "lda"])
    candidates = [
        Candidate(key=f"chunk:{cid}", text=text.replace(". ", ".\n  "), paper_id=pid, chunk_id=cid)
        for cid, pid, _, text in CHUNKS[:3]
    ]
    kept = refine_in_batches("Which baselines?", candidates, llm)
    assert [c.chunk_id for c in kept] == [2, 3]
    for c in kept:
        for piece in c.refined.split(" … "):
            assert piece in normalise_space(c.text)  # verbatim, only whitespace collapsed
    assert "Training took" not in kept[0].refined
    # chunk 1 (two sentences, none relevant) is dropped; chunk 3 is one sentence that already
    # passed the grader, so it is kept whole without asking again
    assert kept[1].refine_note == "single sentence, kept whole"
    assert [call["stage"] for call in llm.history] == ["crag-refine-batch"]  # chunks 1 and 2, one call


def test_refine_keeps_the_whole_chunk_when_the_reply_is_unusable_or_the_call_fails():
    text = "First sentence here. Second sentence here. Third one."
    llm = ScriptedLLM().enqueue("no idea", RuntimeError("down"))
    kept = refine_in_batches("q?", [Candidate("chunk:1", text, "p", 1)], llm)
    assert kept[0].refined == text and "unreadable" in kept[0].refine_note
    kept = refine_in_batches("q?", [Candidate("chunk:1", text, "p", 1)], llm)
    assert kept[0].refined == text and "failed" in kept[0].refine_note


def test_refine_marks_gaps_between_non_adjacent_sentences():
    text = "One is here. Two is there. Three is everywhere."
    kept = refine_in_batches("q?", [Candidate("chunk:1", text, "p", 1)], ScriptedLLM().enqueue("1, 3"))
    assert kept[0].refined == "One is here. … Three is everywhere."


def test_budget_takes_highest_graded_first():
    a = cand(1, 0.7, text="a " * 400)
    b = cand(2, 0.95, text="b " * 400)
    c = cand(3, 0.8, text="c " * 400)
    chosen = select_within_budget([a, b, c], budget_tokens=450)
    assert [x.chunk_id for x in chosen] == [2, 3]
    assert [x.chunk_id for x in select_within_budget([a], budget_tokens=10)] == [1]  # best always in


def test_generate_with_no_evidence_makes_no_call():
    llm = ScriptedLLM()
    answer = generate_answer("Which?", [], llm, label=lambda c: "")
    assert answer.text == NOT_FOUND and answer.not_found and llm.calls == 0


def test_sentinel_language_and_recognition():
    assert not_found_sentinel("Which baselines?") == NOT_FOUND
    assert not_found_sentinel("他们和哪些基线比较？") == NOT_FOUND_ZH
    for reply in [
        "Not found in the papers.",
        "**Not found in the papers.**",
        "not found in the papers",
        "未在论文中找到。",
        "Answer: Not found in the papers.",
    ]:
        assert is_not_found(reply), reply
    assert not is_not_found(
        "They compare against LDA [1]. A GPU was not found in the papers' setup section, "
        "but the appendix lists one."
    )


def test_every_crag_prompt_renders():
    assert "YES or NO" in render("grade", question="q", passage="p")
    assert "3 alternative" in render("rewrite_queries", question="q", why_missed="w", n=3)
    assert "[1.2] b" in render("refine_batch", question="q", passages=[["a", "b"]])
    text = render(
        "answer",
        question="q",
        not_found=NOT_FOUND,
        language="Write in English.",
        max_sentences=4,
        from_elsewhere=True,
        evidence=[{"label": "T, p. 3", "external": True, "score": 0.8, "reasoning": "r", "text": "t"}],
    )
    assert NOT_FOUND in text and "[1] T, p. 3" in text and "external" in text
    assert "another paper or an external source" in text


def test_refine_falls_back_to_question_terms_when_the_refiner_says_none_to_a_graded_chunk():
    text = (
        "Section 5 describes the setup. We compare with two baselines, SIF and Citeomatic. Training is slow."
    )
    kept = refine_in_batches(
        "Which baselines does SPECTER compare against?",
        [Candidate("chunk:1", text, "p", 1)],
        ScriptedLLM().enqueue("none"),
    )
    assert kept[0].refined == "We compare with two baselines, SIF and Citeomatic."
    assert kept[0].refine_note.startswith("refiner said none")
    nothing = refine_in_batches(
        "Which GPU was used?", [Candidate("chunk:1", text, "p", 1)], ScriptedLLM().enqueue("none")
    )
    assert nothing == []  # the refiner and the question terms agree: dropped
