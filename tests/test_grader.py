"""The trained relevance grader: its rule-made training questions, its windows, the shipped
weights (offline, a fixture question ranked right), and how `reader ask` uses it: sure grades
with no LLM call, the LLM for the band between, a rejected passage never read, the window read."""

import random
from dataclasses import dataclass

import pytest
from crag_fakes import PAPER_A, PAPER_B, TITLES, CragLLM, FakeSearch, always_grounded

from reader.crag.decompose import per_paper_quota, sub_queries
from reader.crag.evidence import Candidate
from reader.crag.grade import Grade, blend_model
from reader.crag.pipeline import CragConfig, ask
from reader.grader.model import windows
from reader.llm.scripted import ScriptedLLM
from scripts.training.questions import number_question, question_for, unanswerable

SENTENCE = "SciBERT reaches 93.2% accuracy on the SQuAD development set, outperforming ELMo by 4 points."


def test_a_rule_made_question_asks_for_what_the_sentence_states_without_giving_it():
    rng = random.Random(1)
    for _ in range(20):
        q = question_for(SENTENCE, rng)
        assert q and q["question"].endswith("?")
        if q["answer"]:
            assert q["answer"] not in q["question"]
    made = number_question(SENTENCE, random.Random(3))
    assert made["kind"] == "number" and made["answer"] in SENTENCE
    assert "SQuAD" in made["question"] or "SciBERT" in made["question"]


def test_an_unanswerable_question_names_something_the_paper_does_not():
    q = {"question": "What accuracy does SciBERT reach on SQuAD?"}
    made = unanswerable(q, ["GloVe"], random.Random(0))
    assert made != q["question"] and made.endswith("?")
    assert "SciBERT" not in made or "SQuAD" not in made


def test_windows_cover_the_passage_in_whole_sentences():
    text = " ".join(f"Sentence number {i} says something about the method." for i in range(40))
    parts = windows(text, most_words=30)
    assert len(parts) > 1 and " ".join(parts) == text
    assert all(len(p.split()) <= 30 for p in parts)


@pytest.fixture(scope="module")
def shipped():
    from reader.grader.model import WEIGHTS, RelevanceGrader

    if not (WEIGHTS / "model.safetensors").is_file():
        pytest.fail(f"{WEIGHTS}: the shipped grader weights are missing")
    grader = RelevanceGrader(WEIGHTS)
    grader.load()
    return grader


def test_the_shipped_grader_loads_offline_and_ranks_the_answering_passage_first(shipped, monkeypatch):
    monkeypatch.setenv("HF_HUB_OFFLINE", "1")
    question = "Which baselines does the citation model compare against?"
    passages = [
        "The wheat samples were grown in a greenhouse at 20 degrees and watered daily.",
        "We compare our citation model against two baselines: LDA and TF-IDF retrieval. "
        "Both are tuned on the development set.",
        "Training took three days on one GPU. The learning rate was 0.001.",
    ]
    graded = shipped.grade(question, passages)
    assert max(range(3), key=lambda i: graded[i].p_relevant) == 1
    assert "LDA" in graded[1].window


@dataclass
class Scored:
    p_relevant: float
    window: str


class KeywordGrader:
    """A stand-in for the trained grader: P(relevant) by keyword, the first sentence as the window."""

    def __init__(self, scores: dict[str, float]):
        self.scores = scores
        self.calls = 0

    def grade(self, question, passages):
        self.calls += 1
        out = []
        for text in passages:
            p = max((v for w, v in self.scores.items() if w in text.lower()), default=0.01)
            out.append(Scored(p, text.split(". ")[0] + "."))
        return out


def ask_with(grader, llm, config=None, question="Which baselines do they compare against?", paper_id=PAPER_A):
    return ask(
        question,
        paper_id=paper_id,
        generator=llm,
        verifier=ScriptedLLM(lambda p: "[1] YES"),
        search=FakeSearch(),
        check_grounded=always_grounded,
        titles=TITLES,
        config=config or CragConfig(),
        relevance=grader,
    )


def test_sure_grades_need_no_llm_call_and_the_writer_reads_the_window():
    llm = CragLLM(relevant_words=["baselines"])
    result = ask_with(KeywordGrader({"lda and tf-idf": 0.95, "baselines": 0.95}), llm)
    assert "crag-grade-batch" not in llm.stages() and "crag-grade" not in llm.stages()
    assert not result.not_found
    assert all(c.grade.model_p is not None for c in result.graded)
    source = result.sources[0]
    assert source.refined and source.refined != source.text
    prompt = next(c["prompt"] for c in llm.history if c["stage"] == "crag-answer")
    assert source.refined in prompt and "Training took three days." not in prompt


def test_the_llm_grades_only_the_band_and_its_no_keeps_the_passage_from_the_writer():
    # chunk 2 (the baselines) is sure; chunk 3 (results table) falls in the band and the LLM says NO
    llm = CragLLM(relevant_words=["lda and tf-idf"])
    grader = KeywordGrader({"lda and tf-idf": 0.95, "table 2": 0.4})
    result = ask_with(grader, llm, CragConfig(grader_low=0.05, grader_high=0.6))
    batch = [c for c in llm.history if c["stage"] == "crag-grade-batch"]
    assert (
        len(batch) == 1 and "Table 2" in batch[0]["prompt"] and "TF-IDF retrieval" not in batch[0]["prompt"]
    )
    table = next(c for c in result.graded if "Table 2" in c.text)
    assert table.grade.model_p == 0.4 and table.grade.score < 0.6
    assert table.grade.p_yes == pytest.approx((0.1 + 0.4) / 2)  # the LLM's parsed 0.1 and the model's 0.4
    assert all("Table 2" not in c.text for c in result.sources)


def test_the_llm_grades_the_window_the_writer_would_read_not_the_whole_passage():
    # chunk 2 falls in the band: the LLM is shown its best window ("We compare against two
    # baselines."), not the sentences after it, which the writer would not read either
    llm = CragLLM(relevant_words=["baselines"])
    result = ask_with(KeywordGrader({"baselines": 0.4}), llm, CragConfig(grader_low=0.05, grader_high=0.6))
    batch = next(c["prompt"] for c in llm.history if c["stage"] == "crag-grade-batch")
    assert "We compare against two baselines." in batch and "Training took three days." not in batch
    assert any("Training took three days." in c.text for c in result.graded)


def test_a_failed_llm_grade_in_the_band_leaves_the_models_grade():
    model = Grade("chunk:1", 0.4, True, "relevance grader: P(relevant) 0.40", p_yes=0.4, model_p=0.4)
    failed = Grade("chunk:1", 0.4, True, "grader call failed", error="TimeoutError: slow")
    kept = blend_model(failed, model)
    assert kept.p_yes == 0.4 and not kept.error and "LLM grader failed" in kept.reasoning
    answered = blend_model(Grade("chunk:1", 0.8, False, "names them", p_yes=0.9), model)
    assert answered.score == 0.8 and answered.p_yes == pytest.approx(0.65)


def test_a_two_part_library_question_searches_each_part_and_leaves_room_for_each_paper():
    question = "Which baselines does the topic model compare against, and what temperature were the wheat samples grown at?"
    assert len(sub_queries(question)) == 2
    search = FakeSearch()
    llm = CragLLM(relevant_words=["baselines", "wheat"], answer="LDA and TF-IDF [1]; 20 degrees [2].")
    result = ask(
        question,
        paper_id=None,
        generator=llm,
        verifier=ScriptedLLM(lambda p: "[1] YES"),
        search=search,
        check_grounded=always_grounded,
        titles=TITLES,
        config=CragConfig(),
    )
    assert len({q for q, _ in search.calls}) >= 3
    assert {c.paper_id for c in result.graded} >= {PAPER_A, PAPER_B}


def test_sub_queries_per_named_work_and_the_per_paper_quota():
    parts = sub_queries("What do SPECTER and ScienceParse each use as training data?")
    assert [p.split()[0] for p in parts] == ["SPECTER", "ScienceParse"]
    assert all("training" in p for p in parts)
    assert sub_queries("Which model is used to initialize the Transformer?") == []
    candidates = [
        Candidate(f"chunk:{i}", "t", PAPER_A if i < 5 else PAPER_B, i, fused_score=1 / i) for i in range(1, 8)
    ]
    kept = per_paper_quota(candidates, 2)
    assert [c.chunk_id for c in kept] == [1, 2, 5, 6]


def test_calibrate_grids_the_grader_on_and_off():
    from reader.crag.calibrate import grid

    points = grid([0.6], graders=[True, False])
    assert [p.grader for p in points] == [True, False]
    assert "relevance grader" in points[0].label and "relevance grader" not in points[1].label
    assert points[0].to_json()["grader"] is True and points[1].to_json()["grader"] is False
    assert points[0].config().grader and not points[1].config().grader
