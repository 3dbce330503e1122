"""The citation graph: reference entries matched to library papers (DOI, else title), `reader
cites` / `reader cited-by`, and questions about citations routed to it (keywords, then the LLM)."""

from __future__ import annotations

import json

import pytest
from click.testing import CliRunner
from conftest import make_reader

from reader.crag.intent import Intent, decide_intent, keyword_intent, read_choice
from reader.ingest.links import match, normalised, title_keys
from reader.llm.scripted import ScriptedLLM

BASE = """# SPARTA: Sparse Retrieval of Scientific Passages at Scale

## Abstract

We describe SPARTA, a sparse retriever for long scientific documents. It reaches a recall of 81.2% at ten passages.

## Method

SPARTA indexes each passage with learned term weights. Training uses 40,000 question and passage pairs.

## References

[1] Robertson S, Zaragoza H. The probabilistic relevance framework: BM25 and beyond. 2009.
"""
FOLLOW = """# Dense Passage Ranking Builds on Sparse Retrieval

## Abstract

We extend a sparse retriever with dense vectors and compare against it as our baseline.

## Method

Our baseline is SPARTA [1], which we run with its published settings. Dense vectors come from a siamese encoder [3].

## References

[1] Doe J, Roe R. Sparse Retrieval of Scientific Passages at Scale. In Proceedings of ACL, 2021.
[2] Robertson S, Zaragoza H. The probabilistic relevance framework: BM25 and beyond. 2009.
[3] Reimers N, Gurevych I. Sentence-BERT: sentence embeddings using siamese networks. EMNLP 2019.
"""


@pytest.fixture
def library(reader_env, tmp_path):
    from reader.llm.dryrun import DryRunLLM

    (tmp_path / "base.md").write_text(BASE, encoding="utf-8")
    (tmp_path / "follow.md").write_text(FOLLOW, encoding="utf-8")
    app = make_reader(llm=DryRunLLM(), cache=None)
    base, follow = app.ingest([tmp_path / "base.md", tmp_path / "follow.md"])
    return app, base.paper_id, follow.paper_id


def test_an_entry_is_matched_by_doi_else_by_its_title():
    from reader.ingest.links import LibraryPaper

    papers = [
        LibraryPaper(
            "a",
            "BERT: Pre-training of Deep Bidirectional Transformers",
            None,
            tuple(title_keys("BERT: Pre-training of Deep Bidirectional Transformers")),
        ),
        LibraryPaper("b", "Some Paper", "10.1000/xyz.1", ()),
    ]
    assert match(
        "Devlin J. BERT: Pre-train- ing of deep bidirectional transformers. NAACL 2019.", papers
    ) == ("a", "title")
    assert match("Roe R. Whatever it is called. doi:10.1000/XYZ.1", papers) == ("b", "doi")
    assert match("Vaswani A. Attention is all you need. 2017.", papers) == (None, "")
    assert normalised("Docu- ment  Level") == "document level"
    assert title_keys("SPECTER: Document-level Representation Learning") == [
        "specter document level representation learning",
        "document level representation learning",
    ]


def test_links_are_stored_both_ways_and_follow_a_paper_added_later(reader_env, tmp_path):
    (tmp_path / "base.md").write_text(BASE, encoding="utf-8")
    (tmp_path / "follow.md").write_text(FOLLOW, encoding="utf-8")
    app = make_reader(cache=None)
    [follow] = app.ingest([tmp_path / "follow.md"])  # the cited paper comes later
    assert app.paper(follow.paper_id).cites().in_library == []
    [base] = app.ingest([tmp_path / "base.md"])
    cites = app.paper(follow.paper_id).cites()
    assert [(e.marker, e.cited_id, e.matched_by) for e in cites.entries] == [
        ("[1]", base.paper_id, "title"),
        ("[2]", None, ""),
        ("[3]", None, ""),
    ]
    cited_by = app.paper(base.paper_id).cited_by()
    assert [(e.citing_id, e.marker) for e in cited_by.entries] == [(follow.paper_id, "[1]")]
    app.remove(base.paper_id)
    assert app.paper(follow.paper_id).cites().in_library == []


def test_reader_cites_and_cited_by_print_the_entries(library):
    app, base, follow = library
    runner = CliRunner()
    from reader.cli import cli

    out = runner.invoke(cli, ["cites", follow[:12]], obj=app, catch_exceptions=False)
    assert out.exit_code == 0
    assert "3 reference entries, 1 of them in the library" in out.output
    assert "→ in the library: SPARTA: Sparse Retrieval" in out.output
    out = runner.invoke(cli, ["cited-by", base[:12], "--json"], obj=app, catch_exceptions=False)
    data = json.loads(out.output)
    assert data["direction"] == "cited_by" and data["entries"][0]["citing_paper_id"] == follow


def test_the_keywords_flag_citation_questions_and_leave_the_labelled_questions_alone():
    from conftest import ROOT

    for question, kind in [
        ("Which of my papers build on SPECTER?", "cited_by"),
        ("What does this paper cite for its baseline?", "cites"),
        ("Does SPECTER cite SciBERT?", "cites"),
        ("Do any of my papers cite BERT?", "cited_by"),
        ("How are SPECTER and S2ORC related?", "related"),
        ("这篇论文的参考文献有哪些？", "cites"),
    ]:
        assert (keyword_intent(question).route, keyword_intent(question).kind) == ("citations", kind), (
            question
        )
    questions = [json.loads(line)["question"] for line in (ROOT / "eval" / "questions.jsonl").open()]
    assert [q for q in questions if keyword_intent(q).route != "passages"] == []


def test_the_llm_decides_a_flagged_question_and_the_keywords_stand_in_for_it():
    calls = []

    def reply(text):
        def answer(prompt, stage):
            calls.append(stage)
            return text

        return ScriptedLLM(answer, with_stage=True)

    assert decide_intent("Which baselines are used?", reply("cites")).route == "passages"
    assert calls == []  # an ordinary question costs no call
    decided = decide_intent("Which papers cite SPECTER?", reply("passages"))
    assert (decided.route, decided.by, decided.calls) == ("passages", "llm", 1) and calls == ["crag-intent"]
    kept = decide_intent("Which papers cite SPECTER?", reply("I cannot tell."))
    assert (kept.route, kept.kind, kept.by) == ("citations", "cited_by", "keywords")
    assert read_choice("cited_by\n") == "cited_by" and read_choice("The answer: cites") is None
    assert Intent("passages").to_json()["route"] == "passages"


def test_citation_questions_are_answered_from_the_graph_with_the_entries_as_sources(library):
    app, base, follow = library
    built = app.ask("Which of my papers build on SPARTA?")
    assert built.route == "citations" and built.intent["kind"] == "cited_by" and built.intent["by"] == "llm"
    assert "Dense Passage Ranking Builds on Sparse Retrieval cites SPARTA" in built.answer
    assert [s.paper_id for s in built.sources] == [follow] and built.grounded and built.llm_calls == 1
    assert built.to_json()["intent"]["route"] == "citations"

    baseline = app.ask("What does this paper cite for its baseline?", follow)
    assert [s.source_label for s in baseline.sources] == [
        "Dense Passage Ranking Builds on Sparse Retrieval, reference [1], p. 1"
    ]
    assert "Our baseline is SPARTA [1]" in baseline.sources[0].text

    outside = app.ask("Do any of my papers cite Sentence-BERT?")
    assert "1 paper of the library cites Sentence-BERT" in outside.answer
    nobody = app.ask("Which papers cite the Dense Passage Ranking paper?")
    assert nobody.not_found and nobody.answer.startswith("No paper of the library cites")

    ordinary = app.ask("What recall does SPARTA reach?")
    assert ordinary.route != "citations" and ordinary.intent == {
        "route": "passages",
        "kind": "",
        "by": "keywords",
        "reason": "no citation words in the question",
    }


def test_the_question_page_says_the_answer_came_from_the_reference_lists(library):
    from reader.web.questions import question_history, question_of

    app, base, follow = library
    asked = app.ask("Which of my papers build on SPARTA?")
    with app.services.db() as session:
        shown = question_of(session, asked.question_id)
        assert shown.outcome.startswith("Answered from the library's reference lists")
        assert shown.sources[0].label.startswith(
            "Dense Passage Ranking Builds on Sparse Retrieval, reference"
        )
        assert [q.id for q in question_history(session)] == [asked.question_id]
