"""Damaged model weights: the relevance grader's or the claim checker's model.safetensors
truncated, overwritten or moved. Loading says so in one line naming the file and how to restore
it; `reader ask` (and the web page's Ask) goes on with the LLM grading every passage, `reader
audit` and `reader review` with the verifier deciding every sentence, each with a warning.

Every test damages a copy of the shipped weights in a temporary folder: the files in
reader/*/weights/ are only read (and checked unchanged at the end)."""

from __future__ import annotations

import os
import random
import shutil
import time

import pytest
from click.testing import CliRunner
from crag_fakes import CHUNKS, PAPER_A, TITLES, CragLLM
from test_checker_reader import CLAIMS, PAPER, verifier_server  # noqa: F401 - the fixture
from test_crag_cli import FakeIndex

from reader.checker.model import WEIGHTS as CHECKER_WEIGHTS
from reader.checker.model import ClaimChecker
from reader.errors import WeightsUnusable
from reader.grader.model import WEIGHTS as GRADER_WEIGHTS
from reader.grader.model import RelevanceGrader
from reader.llm.scripted import ScriptedLLM
from reader.store.tables import Chunk, Paper

DAMAGES = ("truncated", "header overwritten", "replaced by text", "bytes overwritten inside", "moved")


@pytest.fixture(scope="module", autouse=True)
def shipped_weights_stay_as_they_are():
    """The shipped files' size and modification time, before and after every test here."""

    def state():
        return [
            (p, p.stat().st_size, p.stat().st_mtime_ns)
            for w in (CHECKER_WEIGHTS, GRADER_WEIGHTS)
            for p in sorted(w.iterdir())
        ]

    before = state()
    yield
    assert state() == before, "a test changed the shipped weights"


def damaged_copy(source, folder, how: str):
    """A copy of the weights folder `source` at `folder`, its model.safetensors damaged `how`."""
    shutil.copytree(source, folder)
    weights = folder / "model.safetensors"
    size = weights.stat().st_size
    noise = random.Random(47).randbytes(4096)
    if how == "truncated":  # a download or a copy that stopped half-way
        os.truncate(weights, size // 2)
    elif how == "header overwritten":
        with open(weights, "r+b") as handle:
            handle.write(noise[:64])
    elif how == "replaced by text":
        weights.write_text("version https://git-lfs.github.com/spec/v1\n", encoding="utf-8")
    elif how == "bytes overwritten inside":  # the header intact, 4 kB of a tensor's data not
        with open(weights, "r+b") as handle:
            handle.seek(size // 2)
            handle.write(noise)
    elif how == "moved":
        weights.rename(folder / "model.safetensors.moved")
    return folder


def assert_names_the_file_and_how_to_restore_it(message: str, folder) -> None:
    assert "\n" not in message and "Traceback" not in message
    assert f"{folder}/model.safetensors" in message or f"{folder}: no model.safetensors" in message, message
    assert "reinstall reader" in message and f"git checkout -- {folder}" in message, message
    assert "pip install --force-reinstall audited-reader" in message


@pytest.mark.parametrize("how", DAMAGES)
@pytest.mark.parametrize("model", ["grader", "checker"])
def test_damaged_weights_are_one_line_naming_the_file_and_how_to_restore_it(model, how, tmp_path):
    source, make = (GRADER_WEIGHTS, RelevanceGrader) if model == "grader" else (CHECKER_WEIGHTS, ClaimChecker)
    folder = damaged_copy(source, tmp_path / "weights", how)
    with pytest.raises(WeightsUnusable) as refused:
        make(folder).load()
    message = str(refused.value)
    assert_names_the_file_and_how_to_restore_it(message, folder)
    what = "the relevance grader's weights" if model == "grader" else "the claim checker's weights"
    if how != "moved":
        assert f"{what} are damaged (" in message, message
    if how == "bytes overwritten inside":
        assert "values are not numbers)" in message, message


# ---------------------------------------------------------------- reader ask and the web's Ask


@pytest.fixture
def library_with_a_damaged_grader(reader_env, monkeypatch, tmp_path):
    """The CRAG test library, asked with the relevance grader on (the default) and its weights
    truncated."""
    from reader.facade import Reader

    monkeypatch.setenv("READER_CRAG_GRADER", "on")
    folder = damaged_copy(GRADER_WEIGHTS, tmp_path / "grader", "truncated")
    app = Reader(grader=RelevanceGrader(folder))
    assert app.settings.crag.grader
    with app.services.db() as session:
        for pid, name in ((PAPER_A, "topics.pdf"), ("b" * 64, "wheat.pdf")):
            session.add(
                Paper(id=pid, title=TITLES[pid], source_path=f"/papers/{name}", source_kind="pdf", pages=8)
            )
        for ordinal, (cid, pid, page, text) in enumerate(CHUNKS):
            session.add(
                Chunk(id=cid, paper_id=pid, ordinal=ordinal, page_start=page, page_end=page, text=text)
            )
        session.commit()
    app.services.search_index = FakeIndex()
    app.services.generator = CragLLM(relevant_words=["baselines", "gc-ms"])
    app.services.verifier = ScriptedLLM(lambda prompt: "[1] YES")
    return app, folder


def test_reader_ask_with_damaged_grader_weights_answers_with_the_llm_and_warns(
    library_with_a_damaged_grader, monkeypatch
):
    """It printed a 68-line traceback."""
    from reader.cli import cli

    app, folder = library_with_a_damaged_grader
    monkeypatch.setattr("reader.facade.Reader", lambda *a, **k: app)
    out = CliRunner().invoke(cli, ["ask", "Which baselines do they compare against?", "--paper", PAPER_A[:8]])
    assert out.exit_code == 0, out.output
    assert "Traceback" not in out.output and out.exception is None
    assert "They compare against LDA and TF-IDF [1]." in out.output
    [note] = [line for line in out.output.splitlines() if "model.safetensors" in line]
    assert note.startswith("note: ") and note.endswith("; the LLM graded every passage instead"), note
    assert_names_the_file_and_how_to_restore_it(note, folder)


def test_the_web_ask_with_damaged_grader_weights_answers_and_shows_the_warning(library_with_a_damaged_grader):
    """The page showed `internal error: SafetensorError…`."""
    import html

    from fastapi.testclient import TestClient
    from test_web import page_token

    from reader.web.app import create_app

    app, folder = library_with_a_damaged_grader
    with TestClient(create_app(app)) as client:
        token = page_token(client, "/ask")
        started = client.post(
            "/api/ask",
            data={
                "question": "Which baselines do they compare against?",
                "paper": PAPER_A,
                "csrf_token": token,
            },
            headers={"accept": "application/json"},
        )
        assert started.status_code == 202, started.text
        deadline = time.monotonic() + 60
        job = started.json()
        while job["status"] == "running" and time.monotonic() < deadline:
            time.sleep(0.1)
            job = client.get(f"/api/ask/{job['id']}").json()
        assert job["status"] == "done", job
        answered = html.unescape(client.get(job["url"]).text)
    assert "They compare against LDA and TF-IDF" in answered
    assert "internal error" not in answered
    assert f"{folder}/model.safetensors: the relevance grader's weights are damaged" in answered
    assert "the LLM graded every passage instead" in answered


# ---------------------------------------------------------------- reader audit and reader review


def test_reader_audit_and_review_with_damaged_checker_weights_go_on_with_the_verifier(
    verifier_server,  # noqa: F811
    tmp_path,
    monkeypatch,
):
    """`reader audit` printed a 64-line traceback; `reader review` failed every paper with a line
    that named no file."""
    from reader.cli import cli
    from reader.facade import Reader

    folder = damaged_copy(CHECKER_WEIGHTS, tmp_path / "checker", "header overwritten")
    paper = tmp_path / "sparta.txt"
    paper.write_text(PAPER, encoding="utf-8")
    claims = tmp_path / "claims.txt"
    claims.write_text(" ".join(CLAIMS), encoding="utf-8")

    notes: list[str] = []
    app = Reader(checker=ClaimChecker(folder), on_notice=notes.append)
    paper_id = app.ingest(paper)[0].paper_id
    monkeypatch.setattr("reader.facade.Reader", lambda *a, **k: app)
    out = CliRunner().invoke(cli, ["audit", "--paper", paper_id[:8], "--text-file", str(claims)])
    assert out.exit_code == 0, out.output
    assert out.exception is None and "Traceback" not in out.output
    assert CLAIMS[2] in out.output
    assert len(verifier_server.chat_requests) == 1  # the verifier decided all four
    [warning] = notes
    assert warning.endswith("; the claim checker is off meanwhile: the verifier decides every sentence")
    assert f"{folder}/model.safetensors: the claim checker's weights are damaged" in warning
    assert_names_the_file_and_how_to_restore_it(warning, folder)

    notes.clear()
    second = tmp_path / "second.txt"
    second.write_text(PAPER.replace("SPARTA", "SPARTB"), encoding="utf-8")
    reviewer = Reader(checker=ClaimChecker(folder), on_notice=notes.append)
    report = reviewer.review([paper, second], jobs=2)
    assert [row.status for row in report.papers] == ["reviewed", "reviewed"], report.to_json()
    assert notes and all(f"{folder}/model.safetensors" in note for note in notes)
