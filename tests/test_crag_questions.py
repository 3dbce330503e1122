"""The labelled question set (eval/questions.jsonl) is well formed and scored strictly."""

import json
import re
from types import SimpleNamespace

import pytest
from conftest import ROOT, SHARED_PAPERS

from reader.crag.calibrate import load_questions, score_outcome, summarise, term_found
from reader.errors import ReaderError

QUESTIONS = ROOT / "eval" / "questions.jsonl"
CJK = re.compile(r"[\u4e00-\u9fff]")


def chinese(q) -> bool:
    return bool(CJK.search(q.question))


def test_the_shipped_question_set_has_every_kind_it_is_measured_on():
    questions = load_questions(QUESTIONS)
    ids = [q.id for q in questions]
    assert len(questions) >= 66 and len(set(ids)) == len(ids)
    unanswerable = [q for q in questions if not q.answerable]
    assert len(unanswerable) * 3 >= len(questions)
    assert all(q.id.startswith("n") for q in unanswerable)
    two_paper = [q for q in questions if len(q.answer_papers) >= 2]
    assert len(two_paper) >= 7 and all(q.id.startswith("t") for q in two_paper)
    assert sum(chinese(q) for q in questions) >= 6
    assert any(chinese(q) and q.answerable for q in questions)
    assert any(chinese(q) and not q.answerable for q in questions)
    assert sum(q.id.startswith("b") for q in questions) >= 8
    assert any(q.paper is None for q in questions) and any(q.paper for q in questions)
    for q in questions:
        if q.answerable:
            assert q.expected_terms, f"{q.id} has no expected_terms"
    papers = {ref for q in questions for ref in (q.paper, *q.answer_papers) if ref}
    assert len(papers) == 14


def test_the_first_27_questions_keep_their_ids():
    ids = {q.id for q in load_questions(QUESTIONS)}
    assert {f"a{i:02d}" for i in range(1, 20)} | {f"n{i:02d}" for i in range(1, 9)} <= ids


@pytest.mark.skipif(not SHARED_PAPERS.exists(), reason="needs ../shared/papers")
def test_every_named_paper_exists_and_holds_its_expected_terms():
    import pymupdf

    questions = load_questions(QUESTIONS)
    names = {ref for q in questions for ref in (q.paper, *q.answer_papers) if ref}
    missing = sorted(n for n in names if not (SHARED_PAPERS / n).is_file())
    assert not missing, missing
    text = {}
    for name in {ref for q in questions for ref in q.answer_papers}:
        with pymupdf.open(SHARED_PAPERS / name) as doc:
            text[name] = "\n".join(page.get_text() for page in doc)
    for q in questions:
        for term in q.expected_terms:  # each term is in one of the papers that answer the question
            assert any(term_found(term, text[name]) for name in q.answer_papers), (q.id, term)


# ------------------------------------------------------------ scoring


def result(answer: str, cited: list[str], not_found: bool = False):
    sources = [SimpleNamespace(paper_id=p, pages="1", text="t", refined=None) for p in cited]
    return SimpleNamespace(
        answer=answer,
        not_found=not_found,
        sources=sources,
        route="correct",
        confidence=0.9,
        grounded=True,
        llm_calls=3,
        seconds=1.0,
        fallback_used=False,
        quoted=False,
        graded=[],
    )


def question(tmp_path, **row):
    path = tmp_path / "q.jsonl"
    path.write_text(json.dumps({"id": "x", "question": "q?", "paper": None} | row) + "\n", encoding="utf-8")
    return load_questions(path)[0]


def test_a_missing_expected_term_makes_an_answer_wrong(tmp_path):
    q = question(tmp_path, answer_paper="s2orc.pdf", expected_terms=["81.1M", "8.1M"])
    right = score_outcome(q, "P1", result("S2ORC has 81.1M papers, 8.1M with full text [1].", ["P1"]))
    assert right["right"] and right["terms_right"] and right["missing_terms"] == []
    wrong = score_outcome(q, "P1", result("S2ORC has 81.1M papers [1].", ["P1"]))
    assert not wrong["right"] and wrong["missing_terms"] == ["8.1M"] and wrong["terms_right"] is False
    # the right number of the wrong quantity is not the asked one: "81.1M" does not hold "8.1M"
    assert not score_outcome(q, "P1", result("81.1M and 28.9M [1]", ["P1"]))["right"]


def test_a_two_paper_question_needs_both_papers_cited(tmp_path):
    q = question(tmp_path, answer_paper=["specter.pdf", "s2orc.pdf"], expected_terms=["Titan V", "TPU v3-8"])
    assert q.answer_papers == ("specter.pdf", "s2orc.pdf") and q.answer_paper == "specter.pdf"
    answer = "SPECTER used a Titan V GPU [1]; S2ORC-SciBERT a TPU v3-8 [2]."
    assert score_outcome(q, ["P1", "P2"], result(answer, ["P1", "P2"]))["right"]
    one = score_outcome(q, ["P1", "P2"], result(answer, ["P1"]))
    assert not one["right"] and one["cites_answer_papers"] is False


def test_terms_match_despite_separators_case_and_language():
    assert term_found("10,000", "about 10000 papers") and term_found("10000", "about 10,000 papers")
    assert term_found("1,655,238", "1655238 sentences")
    assert term_found("sent-bert", "Sent BERT and SentBERT") and term_found("SciBERT", "(scibert).")
    assert term_found("81.1M", "81.1 million") and term_found("six", "6 genotypes")
    assert term_found("0.80", "0.8 against 0.72") and term_found("CRF|conditional random field", "CRFs")
    assert term_found("RTX 2080", "实验使用RTX 2080显卡。") and term_found("40", "计划40分钟")
    # never inside a longer number or word
    assert not term_found("39", "0.39") and not term_found("39", "139") and not term_found("27.2", "27.21")
    assert not term_found("8.1M", "81.1M") and not term_found("SGC", "this GCN")


def test_a_refusal_is_right_only_for_an_unanswerable_question(tmp_path):
    unanswerable = question(tmp_path, answer_paper="none")
    refusal = result("Not found in the library.", [], not_found=True)
    row = score_outcome(unanswerable, None, refusal)
    assert row["right"] and row["terms_right"] is None and row["cites_answer_papers"] is None
    assert not score_outcome(unanswerable, None, result("It used 4 GPUs [1].", ["P1"]))["right"]
    answerable = question(tmp_path, answer_paper="a.pdf", expected_terms=["SciBERT"])
    assert not score_outcome(answerable, "P1", refusal)["right"]


def test_summarise_reports_the_share_with_every_term(tmp_path):
    q = question(tmp_path, answer_paper="a.pdf", expected_terms=["SciBERT"])
    rows = [
        score_outcome(q, "P1", result("SciBERT [1]", ["P2"])),  # terms right, wrong paper cited
        score_outcome(q, "P1", result("BERT [1]", ["P1"])),
    ]
    summary = summarise(0.6, rows)
    assert summary["terms_right"] == 0.5 and summary["answer_accuracy"] == 0.0


@pytest.mark.parametrize(
    "row, message",
    [
        ({"answer_paper": "a.pdf", "expected_terms": "SciBERT"}, "expected_terms"),
        ({"answer_paper": "a.pdf", "expected_terms": ["SciBERT", ""]}, "expected_terms"),
        ({"answer_paper": "none", "expected_terms": ["SciBERT"]}, "no paper answers"),
        ({"answer_paper": []}, "answer_paper"),
        ({"answer_paper": ["a.pdf", 3]}, "answer_paper"),
    ],
)
def test_a_malformed_line_is_named_by_file_and_line(tmp_path, row, message):
    path = tmp_path / "q.jsonl"
    good = {"id": "ok", "question": "q?", "paper": None, "answer_paper": "none"}
    path.write_text(json.dumps(good) + "\n" + json.dumps({"id": "x", "question": "q?"} | row) + "\n")
    with pytest.raises(ReaderError) as err:
        load_questions(path)
    assert f"{path}:2" in str(err.value) and message in str(err.value)
