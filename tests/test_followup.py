"""The follow-up questioner: after a read whose audit passed, the review's open points are asked of
the paper, answered with sources, stored with the review and shown in the note and on the page."""

from __future__ import annotations

import pytest
from conftest import make_reader

from reader.crag.followup import (
    ask_until_answered,
    audit_passed,
    open_points,
    questions_in,
    rule_question,
    write_questions,
)
from reader.index.hits import SearchHit
from reader.llm.scripted import ScriptedLLM

PAPER = """# SPARTA: Sparse Retrieval of Scientific Passages at Scale

## Abstract

We describe SPARTA, a sparse retriever for long scientific documents. It reaches a recall of 81.2% at ten passages on the LongDocs benchmark.

## Method

SPARTA indexes each passage with learned term weights. Training uses 40,000 question and passage pairs drawn from 1,200 papers.

## Results

SPARTA reaches a recall of 81.2% at ten passages, against 64.5% for BM25. The index takes 3.1 GB for one million passages.

## Limitations

The evaluation covers English papers only. We did not test SPARTA on papers longer than 40 pages.
"""
REVIEW = """## Key results
SPARTA reaches a recall of 81.2%.

## Open questions
- [待验证] It is unclear how the index grows beyond one million passages.
- Whether the method works for Chinese papers is not tested?

## Weaknesses
The abstract's figures are given without a standard deviation or confidence interval.
"""


def test_the_open_points_are_the_sentences_under_the_gap_headings():
    # the marked sentence is left out: the paper does not support it
    assert open_points([REVIEW]) == [
        "Whether the method works for Chinese papers is not tested?",
        "The abstract's figures are given without a standard deviation or confidence interval.",
    ]
    # Open questions come before Weaknesses whatever the order of the headings
    later = "## Weaknesses\nThe paper is long and dense overall.\n## Open questions\nHow does the index grow with size?"
    assert open_points([later]) == [
        "How does the index grow with size?",
        "The paper is long and dense overall.",
    ]
    assert rule_question("Whether the method works for Chinese papers is not tested?").endswith("tested?")
    assert rule_question("The index size beyond one million passages is unclear.").startswith(
        "What does the paper report about index size"
    )
    assert rule_question("Additionally, extending the framework to arbitrary phrases would help.").startswith(
        "What does the paper report about extending framework"
    )
    assert questions_in("1. How large is the index?\n- Fine.\n**Which languages are covered?**") == [
        "How large is the index?",
        "Which languages are covered?",
    ]
    # the embedded model's reply of the README's sample: its questions on one line
    assert questions_in(
        "What is the standard deviation for the figures in the abstract? What baseline is used? "
        "How do the results compare"
    ) == ["What is the standard deviation for the figures in the abstract?", "What baseline is used?"]
    assert audit_passed([0.1, 0.3]) and not audit_passed([0.1, 0.31]) and not audit_passed([])


def test_the_tools_own_findings_are_no_open_points_and_refusals_make_the_questioner_ask_more():
    finding = "The abstract's figures are given without a standard deviation or confidence interval."
    assert finding not in open_points([REVIEW], settled={finding})
    assert len(open_points([REVIEW], settled={finding})) == 1
    lead_in = (
        "## Threats to validity\nThe results may not hold elsewhere due to several factors:\n- Only English."
    )
    assert open_points([lead_in]) == []

    class Answer:
        def __init__(self, question):
            self.question, self.not_found = question, "Chinese" in question or "GPU" in question

    asked = ask_until_answered(
        ["On Chinese papers?", "How large?", "Which GPU?", "Which data?", "Why?"], Answer, 2
    )
    assert [a.question for a in asked] == ["On Chinese papers?", "How large?", "Which GPU?", "Which data?"]
    assert len(ask_until_answered(["On Chinese papers?"], Answer, 2)) == 1


def test_the_llm_writes_the_questions_and_the_rule_fills_what_it_left_out():
    points = open_points([REVIEW])
    llm = ScriptedLLM(lambda prompt, stage: "How large does the index grow?\nNothing else.", with_stage=True)
    questions, by = write_questions("SPARTA", points, llm, 3)
    assert by == "llm+rule" and questions[0] == "How large does the index grow?" and len(questions) == 3
    assert llm.history[0]["stage"] == "followup"
    failing = ScriptedLLM(lambda prompt: (_ for _ in ()).throw(RuntimeError("down")))
    assert write_questions("SPARTA", points, failing, 2)[1] == "rule"
    # a question the excerpt itself asks is the paper's example, not a follow-up
    copying = ScriptedLLM(lambda prompt: "Which papers discuss Ranibizumab?\nHow large does the index grow?")
    excerpts = ["Queries such as which papers discuss Ranibizumab? are answered from the graph."]
    assert write_questions("SPARTA", points[:1], copying, 2, fill_to=1, excerpts=excerpts)[0] == [
        "How large does the index grow?"
    ]
    # more are written than asked: the rule fills only up to what is asked
    assert write_questions("SPARTA", points, llm, 6, fill_to=2)[0] == questions[:2]


@pytest.fixture
def reviewed(reader_env, tmp_path, monkeypatch):
    from reader.llm.dryrun import DryRunLLM

    monkeypatch.setenv("READER_FOLLOWUP", "3")
    (tmp_path / "sparta.md").write_text(PAPER, encoding="utf-8")
    app = make_reader(llm=DryRunLLM())
    return app, app.read(tmp_path / "sparta.md")


def test_a_passed_read_asks_answers_and_stores_its_follow_up_questions(reviewed):
    app, result = reviewed
    assert all(k.loop.final.flagged_ratio <= 0.3 for k in result.analyses)
    done = result.followups
    assert done.skipped == "" and 1 <= len(done.answers) <= 5
    assert sum(not a.not_found for a in done.answers) <= 3
    answered = [a for a in done.answers if not a.not_found]
    assert answered and all(a.sources and a.sources[0].paper_id == result.paper_id for a in answered)
    assert result.to_json()["followups"]["questions"][0]["question"] == done.answers[0].question
    stored = app.paper(result.paper_id).followups()
    assert [f.question for f in stored] == [a.question for a in done.answers]
    assert [f.not_found for f in stored] == [a.not_found for a in done.answers]
    _, note = app.paper(result.paper_id).note()
    assert "## Follow-up questions" in note and f"> [!question] {stored[0].question}" in note
    # a new review replaces them; --no-followup asks none and keeps none of the old review's
    again = app.read(result.paper_id, followup=False)
    assert again.followups.skipped.startswith("the follow-up questioner is off")
    assert app.paper(result.paper_id).followups() == []


def test_a_read_that_failed_its_audit_asks_nothing(reader_env, monkeypatch):
    from reader.services import Services

    monkeypatch.setenv("READER_FOLLOWUP", "3")
    from reader.facade import Reader

    services: Services = Reader().services
    done = services.follow_up("ab" * 32, [REVIEW], [0.5, 0.1], n=3)
    assert done.skipped == "the review did not pass its audit (a text over the flagged ratio)"
    assert done.answers == []


def test_the_paper_page_shows_them(reviewed):
    from fastapi.testclient import TestClient

    from reader.web.app import create_app

    app, result = reviewed
    with TestClient(create_app(app)) as client:
        page = client.get(f"/paper/{result.paper_id}").text
    assert 'id="followups"' in page and result.followups.answers[0].question.replace("'", "&#39;") in page


def test_follow_up_questions_are_answered_from_their_paper_only(reader_env, monkeypatch):
    from reader.facade import Reader

    services = Reader().services
    seen = []

    def passages(question, paper_id, config, roles, titles, external):
        seen.append((paper_id, config.collection_fallback))
        raise RuntimeError("stop after the first question")

    monkeypatch.setattr(services, "_passages", passages)
    # no intent routing: "What is the relationship between X and Y?" went to the citation graph
    monkeypatch.setattr(services, "answer", lambda *a, **k: pytest.fail("a follow-up was routed by intent"))
    # the questions by rule: no model is started for this
    monkeypatch.setattr(
        "reader.crag.followup.write_questions",
        lambda title, points, llm, n, **kw: (["How large?"], "rule"),
    )
    services.follow_up("ab" * 32, [REVIEW], [0.0], n=1)
    # a roark13 follow-up was answered from the longeval paper's passage when the library was searched
    assert seen == [("ab" * 32, False)]


def test_a_question_joined_to_a_second_keeps_its_first():
    reply = (
        "What are the evaluation metrics used for intrinsic evaluation and how do they relate to the claims?\n"
        "Which datasets are used, and what sizes do they have?\n"
        "What is the trade-off between speed and accuracy?\n"
        "What is the title of the paper?\n"
        "Who are the authors of the study?"
    )
    assert questions_in(reply) == [
        "What are the evaluation metrics used for intrinsic evaluation?",
        "Which datasets are used?",
        "What is the trade-off between speed and accuracy?",
    ]


def test_the_questions_the_papers_passages_answer_best_are_asked_first():
    from reader.crag.followup import by_evidence

    score = {"Which GPU?": 0.2, "What future work is named?": 0.9, "Why?": 0.2, "Which data?": 0.01}
    assert by_evidence(list(score), score.get) == [
        "What future work is named?",
        "Which GPU?",
        "Why?",
        "Which data?",
    ]


def test_follow_up_questions_are_asked_in_the_order_the_grader_ranks_them(reader_env, monkeypatch):
    from types import SimpleNamespace

    from reader.facade import Reader
    from reader.grader.model import Relevance
    from reader.llm.base import Completion

    monkeypatch.setenv("READER_CRAG_GRADER", "on")
    services = Reader().services

    class Grader:
        def grade(self, question, passages):
            return [Relevance(0.9 if "GPU" in question and "GPU" in p else 0.01, p) for p in passages]

    services._grader = Grader()
    passages = [SearchHit(1, "ab" * 32, "SPARTA was trained on one GPU.", "4 Experiments", 5, 5, 0.1)]
    services.__dict__["search_index"] = SimpleNamespace(search=lambda question, paper_id: passages)
    seen = []

    def from_passages(question, paper_id, config, roles, titles, external):
        seen.append(question)
        raise RuntimeError("stop after the first question")

    monkeypatch.setattr(services, "_passages", from_passages)
    written = []

    def write(messages, **kwargs):
        written.append(messages[-1]["content"])
        return Completion("How large is the index?\nWhich GPU was used?")

    services.__dict__["generator"] = SimpleNamespace(complete=write)
    services.follow_up("ab" * 32, [REVIEW], [0.0], n=1)
    assert seen == ["Which GPU was used?"]
    # each open point was shown with the window of the paper's passages closest to it
    assert "<excerpt>SPARTA was trained on one GPU.</excerpt>" in written[0]


def test_questions_the_paper_has_no_passage_for_are_asked_only_to_make_up_n():
    from types import SimpleNamespace

    from reader.crag.followup import questions_to_ask
    from reader.llm.base import Completion

    llm = SimpleNamespace(
        complete=lambda messages, **kw: Completion("Which GPU was used?\nHow large is the index?")
    )
    score = {"Which GPU was used?": 0.9, "How large is the index?": 0.1}
    window = lambda text: SimpleNamespace(p_relevant=score.get(text, 0.0), window="an excerpt")  # noqa: E731
    points = ["The GPU is not named.", "The index size is unclear."]
    assert questions_to_ask("T", points, llm, 1, window, min_relevance=0.3)[0] == ["Which GPU was used?"]
    # below the bar only to make up n, best first
    assert questions_to_ask("T", points, llm, 2, window, min_relevance=0.3)[0] == [
        "Which GPU was used?",
        "How large is the index?",
    ]
    asked, _ = questions_to_ask("T", points, llm, 1, window)
    assert asked[:2] == ["Which GPU was used?", "How large is the index?"]


def test_a_question_that_names_nothing_of_the_paper_is_not_asked():
    reply = (
        "What is the main conclusion of the paper?\n"
        "What is the model quality?\n"
        "What are the limitations of the paper?\n"
        "What is the scalability of the REALM system?\n"
        "What baseline is used?"
    )
    assert questions_in(reply) == ["What is the scalability of the REALM system?", "What baseline is used?"]
    # nor one by rule from a sentence about the paper's layout (acl2007's Open questions held it)
    from reader.crag.followup import rule_question

    assert rule_question("The remainder of the paper is organized as follows.") == ""
    assert rule_question("Scalability matters for Open Information Extraction.").startswith(
        "What does the paper"
    )


def test_a_question_with_the_same_content_words_as_an_earlier_one_is_asked_once():
    # the README sample's follow-ups asked both, and both came back "Not found"
    reply = (
        "What is the impact of the use of a fixed number of tokens on the results?\n"
        "What is the impact of the use of fixed number of tokens on the results?\n"
        "What is the purpose of the ingest step?"
    )
    assert questions_in(reply) == [
        "What is the impact of the use of a fixed number of tokens on the results?",
        "What is the purpose of the ingest step?",
    ]
