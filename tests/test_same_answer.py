"""The web page's Ask, `reader ask` and Reader.ask give the same answer for the same question and
settings: with READER_CRAG_THRESHOLD above every grade the scripted grader gives, all three say
not found, where the default threshold answers (so a path that ignored the setting would fail)."""

from __future__ import annotations

import re

import pytest
from click.testing import CliRunner
from controls import record_controls, yes_but_controls
from crag_fakes import CHUNKS, PAPER_A, PAPER_B, TITLES, CragLLM, FakeSearch
from fastapi.testclient import TestClient

from reader.facade import Reader
from reader.llm.scripted import ScriptedLLM
from reader.store.tables import Chunk, Paper, Question

QUESTION = "Which baselines do they compare against?"
DEFAULT_ANSWER = "They compare against LDA and TF-IDF [1]."  # CragLLM's writer; its grades are 0.9 or 0.1
NOT_FOUND = "Not found in the papers."


# The groundedness check's control claims (reader.audit.control): the verifier answers them NO.
CONTROLS: set[str] = set()


@pytest.fixture(autouse=True)
def controls(monkeypatch):
    CONTROLS.clear()
    record_controls(monkeypatch, CONTROLS)


class FakeIndex:
    def __init__(self):
        self.search_fn = FakeSearch()

    def search(self, query, paper_id=None, top_k_per_path=3):
        return self.search_fn(query, paper_id)


def scripted_reader(*args, **kwargs):
    """A Reader built as every caller builds it (settings from the environment), with the
    scripted grader and writer and the keyword search over crag_fakes' library."""
    reader = Reader(*args, **kwargs)
    reader.services.search_index = FakeIndex()
    reader.services.generator = CragLLM(relevant_words=["baselines"])
    reader.services.verifier = ScriptedLLM(lambda prompt: yes_but_controls(prompt, CONTROLS))
    return reader


@pytest.fixture
def library(reader_env):
    reader = scripted_reader()
    with reader.services.db() as session:
        for pid, name in ((PAPER_A, "topics.pdf"), (PAPER_B, "wheat.pdf")):
            session.add(
                Paper(id=pid, title=TITLES[pid], source_path=f"/papers/{name}", source_kind="pdf", pages=8)
            )
        for ordinal, (cid, pid, page, text) in enumerate(CHUNKS):
            session.add(
                Chunk(id=cid, paper_id=pid, ordinal=ordinal, page_start=page, page_end=page, text=text)
            )
        session.commit()
    return reader


def web_answer(question: str, paper: str) -> str:
    from reader.web.app import create_app

    reader = scripted_reader()
    client = TestClient(create_app(reader))
    token = re.search(r'name="csrf_token" value="([0-9a-f]+)"', client.get("/ask").text).group(1)
    response = client.post(
        "/ask", data={"question": question, "paper": paper, "csrf_token": token}, follow_redirects=False
    )
    assert response.status_code == 303, response.text
    question_id = int(response.headers["location"].rsplit("/", 1)[1])
    with reader.services.db() as session:
        return session.get(Question, question_id).answer


def cli_answer(question: str, paper: str, monkeypatch) -> str:
    from reader.cli import cli

    monkeypatch.setattr("reader.facade.Reader", scripted_reader)
    result = CliRunner().invoke(cli, ["ask", question, "--paper", paper], catch_exceptions=False)
    assert result.exit_code == 0, result.output
    return result.output.splitlines()[0]


def test_the_three_ways_to_ask_read_the_same_crag_setting(library, monkeypatch):
    assert library.ask(QUESTION, PAPER_A).answer == DEFAULT_ANSWER  # the default threshold, 0.6
    monkeypatch.setenv("READER_CRAG_THRESHOLD", "0.95")
    by_python = scripted_reader().ask(QUESTION, PAPER_A).answer
    by_web = web_answer(QUESTION, PAPER_A)
    by_cli = cli_answer(QUESTION, PAPER_A, monkeypatch)
    assert by_python == by_web == by_cli == NOT_FOUND


def test_the_web_page_asks_the_configured_external_searches(library, monkeypatch):
    """READER_EXTERNAL_SEARCH reaches the web page's Ask as it reaches Reader.ask."""
    asked = []
    from reader.services import Services

    original = Services.external_searches

    def recorded(self, external=None):
        asked.append(self.settings.external_search if external is None else external)
        return original(self, "off")  # nothing leaves the machine in a test

    monkeypatch.setattr(Services, "external_searches", recorded)
    monkeypatch.setenv("READER_EXTERNAL_SEARCH", "arxiv")
    web_answer(QUESTION, PAPER_A)
    assert asked == ["arxiv"]


class NothingRelevant:
    """A stand-in relevance grader sure that no passage answers (P(relevant) 0.01)."""

    def grade(self, question, passages):
        from reader.grader.model import Relevance

        return [Relevance(0.01, p) for p in passages]


def test_the_three_ways_to_ask_use_the_relevance_grader_when_it_is_on(library, monkeypatch):
    import sys

    plain = scripted_reader

    def with_grader(*args, **kwargs):
        reader = plain(*args, **kwargs)
        reader.services.relevance_grader = NothingRelevant()
        return reader

    assert with_grader().ask(QUESTION, PAPER_A).answer == DEFAULT_ANSWER  # READER_CRAG_GRADER=off
    monkeypatch.setenv("READER_CRAG_GRADER", "on")
    monkeypatch.setattr(sys.modules[__name__], "scripted_reader", with_grader)
    by_python = with_grader().ask(QUESTION, PAPER_A).answer
    by_web = web_answer(QUESTION, PAPER_A)
    by_cli = cli_answer(QUESTION, PAPER_A, monkeypatch)
    assert by_python == by_web == by_cli == NOT_FOUND
