"""The claim checker through Reader and the CLI, with an endpoint verifier on the loopback server."""

import json

import pytest
from click.testing import CliRunner
from controls import record_controls, yes_but_controls
from loopback_openai import LoopbackOpenAI
from test_checker_audit import WordScorer

PAPER = """Sparse retrieval for clinical notes

Abstract
We present SPARTA, a retrieval method for clinical notes. SPARTA reaches a recall of 0.84 on the
MIMIC test notes, while BM25 reaches 0.71.

Results
The method was tested on 40 hospital records from Brazil. Training takes two hours on one machine.
"""

CLAIMS = [
    "A sure claim: SPARTA reaches a recall of 0.84 on the MIMIC notes.",
    "A false claim: BM25 reaches a recall of 0.84 on the MIMIC notes.",
    "An undecided claim: SPARTA was tested on 40 hospital records.",
    "An undecided claim: training takes two hours on one machine.",
]


@pytest.fixture
def verifier_server(reader_env, hashing_index, monkeypatch):
    """An OpenAI-compatible verifier on loopback that answers YES to every claim it is asked (NO to
    the audit's control claim, which is false by construction)."""
    controls = record_controls(monkeypatch)

    def respond(prompt):
        return yes_but_controls(prompt, controls)

    with LoopbackOpenAI(respond=respond, models=("judge",)) as server:
        monkeypatch.setenv("READER_LLM_BASE_URL", "scripted:")
        monkeypatch.setenv("READER_VERIFIER_BASE_URL", server.base_url)
        monkeypatch.setenv("READER_VERIFIER_MODEL", "judge")
        monkeypatch.setenv("READER_VERIFIER_API_KEY", "k")
        monkeypatch.setenv("READER_CACHE", "0")
        monkeypatch.setenv("READER_CHECKER", "on")
        monkeypatch.setenv("READER_CHECKER_LOW", "0.1")
        monkeypatch.setenv("READER_CHECKER_HIGH", "0.9")
        yield server


def test_an_endpoint_verifier_is_asked_only_what_the_checker_is_unsure_of(verifier_server, tmp_path):
    from reader.facade import Reader

    paper = tmp_path / "sparta.txt"
    paper.write_text(PAPER, encoding="utf-8")
    scorer = WordScorer()
    app = Reader(checker=scorer)
    paper_id = app.ingest(paper)[0].paper_id
    report = app.audit(" ".join(CLAIMS), paper_id)
    verdicts = {s.text: s for s in report.result.sentences}
    assert len(verifier_server.chat_requests) == 1  # one batch: the two undecided claims
    asked = verifier_server.chat_requests[0]["json"]["messages"][-1]["content"]
    assert CLAIMS[2] in asked and CLAIMS[3] in asked and CLAIMS[0] not in asked and CLAIMS[1] not in asked
    assert verdicts[CLAIMS[0]].verdict == "supported" and verdicts[CLAIMS[1]].verdict == "unsupported"
    assert verdicts[CLAIMS[2]].verdict == "supported"
    assert verdicts[CLAIMS[2]].reasons[0].startswith("claim checker unsure (P 0.50")
    assert report.to_json()["sentences"][0]["p_checker"] == 0.97


def test_the_band_is_a_setting_and_off_sends_everything_to_the_verifier(
    verifier_server, tmp_path, monkeypatch
):
    from reader.facade import Reader

    paper = tmp_path / "sparta.txt"
    paper.write_text(PAPER, encoding="utf-8")
    monkeypatch.setenv("READER_CHECKER", "off")
    app = Reader(checker=WordScorer())
    assert app.services.checker.scorer is None  # the band without a scorer: extraction and control only
    paper_id = app.ingest(paper)[0].paper_id
    report = app.audit(" ".join(CLAIMS), paper_id)
    assert len(verifier_server.chat_requests) == 1 and all(
        s.p_checker is None for s in report.result.sentences
    )
    monkeypatch.setenv("READER_CHECKER", "on")
    monkeypatch.setenv("READER_CHECKER_HIGH", "0.99")  # nothing is sure enough to pass without the verifier
    report = Reader(checker=WordScorer()).audit(" ".join(CLAIMS), paper_id)
    assert len(verifier_server.chat_requests) == 2
    assert (
        sum(s.verdict == "unsupported" for s in report.result.sentences) == 1
    )  # the false one, by the checker


def test_reader_config_shows_the_checker(verifier_server):
    from reader.cli import cli

    out = CliRunner().invoke(cli, ["config"], catch_exceptions=False).output
    assert "READER_CHECKER" in out and "on (sure at P" in out


def test_the_stored_read_keeps_each_sentences_checker_score(verifier_server, tmp_path):
    from reader.facade import Reader

    paper = tmp_path / "sparta.txt"
    paper.write_text(PAPER, encoding="utf-8")
    app = Reader(checker=WordScorer())
    result = app.read(paper)
    stored = app.paper(result.paper_id).analyses().to_json()
    sentences = [s for a in stored["analyses"] for s in a["sentences"]]
    assert sentences and all("p_checker" in s for s in sentences)
    assert any(s["p_checker"] is not None for s in sentences)
    assert json.dumps(stored)  # the shape `reader show --json` prints
