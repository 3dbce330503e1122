"""The extraction table's columns beyond the five: items of the rigour checklist, and questions of
the user's own, each asked of every paper with the question pipeline, its answer audited against
the passages it cites, with its source (issue 43, item 4)."""

from __future__ import annotations

import csv
import io

import pytest
from click.testing import CliRunner
from conftest import make_reader
from test_extraction_table import CONTROLS, controls, library  # noqa: F401 (fixtures)

QUESTION = "How many annotated tweets does the WNUT-17 corpus contain?"
UNANSWERED = "Which hospital recruited the patients of the trial?"


def test_checklist_items_are_columns_with_their_sentence_and_page(library):  # noqa: F811
    table = library.library.extraction_table([library.paper_id], columns=["metrics", "ethics"])
    assert [key for key, _ in table.columns][-2:] == ["metrics", "ethics"]
    [row] = table.rows
    metrics = row.cells["metrics"]
    assert metrics.value == "precision, recall" and metrics.origin == "checklist: Metrics (rule)"
    assert metrics.source.page == 3 and metrics.quote.startswith("Scores are the shared task's entity-level")
    assert metrics.verdict in ("supported", "unsupported", "unchecked")  # audited as any cell
    assert row.cells["ethics"].value == "" and any(n.startswith("ethics: not found") for n in row.notes)
    data = table.to_json()
    assert data["columns"][-1] == {"key": "ethics", "heading": "Ethics statement"}
    header = next(csv.reader(io.StringIO(table.to_csv())))
    assert header[-4:] == ["ethics", "ethics_verdict", "ethics_pages", "ethics_source"]


def test_an_unknown_column_or_too_many_questions_is_one_line(library):  # noqa: F811
    from reader.errors import ReaderError

    with pytest.raises(ReaderError, match="no checklist column 'novelty': choose from metrics"):
        library.library.extraction_table([library.paper_id], columns=["novelty"])
    with pytest.raises(ReaderError, match="at most 5"):
        library.library.extraction_table([library.paper_id], questions=[f"Question {n}?" for n in range(6)])


@pytest.fixture
def asking(library):  # noqa: F811
    """The same library read by a Reader whose LLMs are the dry run's: its question pipeline
    answers from the passages and its check verifies the answer against them."""
    from reader.llm.dryrun import DryRunLLM

    llm = DryRunLLM()
    app = make_reader(llm=llm, verifier=llm)
    app.paper_id = library.paper_id
    app.llm = llm
    return app


def test_a_question_of_the_users_own_is_answered_audited_and_sourced_for_every_paper(asking):
    table = asking.library.extraction_table([asking.paper_id], questions=[QUESTION, UNANSWERED])
    assert table.columns[-2:] == [("q1", QUESTION), ("q2", UNANSWERED)]
    [row] = table.rows
    cell = row.cells["q1"]
    assert "5,690 annotated tweets" in cell.value
    assert cell.origin == "question: answered from the paper's passages"
    assert cell.verdict == "supported"  # the pipeline's check found every sentence in its passages
    assert cell.source.page == 3 and "WNUT-17 corpus contains 5,690" in cell.source.text
    stages = {call["stage"] for call in asking.llm.history}
    assert {"crag-answer", "crag-check"} <= stages
    assert row.cells["q2"].value == "" and any("do not answer" in n for n in row.notes)
    assert table.llm_calls >= len([c for c in asking.llm.history if c["stage"].startswith("crag")])
    line = list(csv.DictReader(io.StringIO(table.to_csv())))[0]
    assert "5,690" in line["q1"] and line["q1_verdict"] == "supported" and line["q1_pages"] == "3"


def test_reader_table_takes_columns_and_questions(asking, monkeypatch):
    from reader.cli import cli

    monkeypatch.setattr("reader.facade.Reader", lambda *a, **k: asking)
    result = CliRunner().invoke(
        cli,
        ["table", asking.paper_id[:10], "--column", "metrics", "--ask", QUESTION],
        catch_exceptions=False,
    )
    assert result.exit_code == 0, result.output
    assert "  Metrics: precision, recall  (p. 3)" in result.output
    assert f"  {QUESTION}: " in result.output and "5,690 annotated tweets" in result.output


def test_the_web_page_adds_checklist_columns_and_a_question(asking):
    from fastapi.testclient import TestClient

    from reader.web.app import create_app

    with TestClient(create_app(asking)) as client:
        chooser = client.get("/table")
        assert 'name="column" value="variance"' in chooser.text and 'name="ask"' in chooser.text
        token = chooser.text.split('name="csrf_token" value="', 1)[1].split('"', 1)[0]
        form = {"paper": asking.paper_id, "column": "metrics", "ask": QUESTION, "csrf_token": token}
        page = client.post("/table", data=form)  # builds it, then shows it as stored
        assert page.status_code == 200 and page.url.path == "/table"
        assert ">Metrics</th>" in page.text and f">{QUESTION}</th>" in page.text
        assert "5,690 annotated tweets" in page.text and "precision, recall" in page.text
        assert "column=metrics" in page.text and "ask=" in page.text  # the CSV link keeps them
