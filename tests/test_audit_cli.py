"""`reader read`, `reader show` and `reader audit` with the scripted LLM and a fake index."""

import json

import pytest
from click.testing import CliRunner
from sqlalchemy import select
from test_deepread import PAPER_ID, add_paper, controls, make_llms  # noqa: F401 (autouse: the control claims)

from reader.cli import cli
from reader.store.tables import Chunk


class FakeIndex:
    def __init__(self, db):
        self.db = db
        self.queries = []

    def ensure_paper(self, paper_id):
        return False

    def search(self, query, paper_id=None, top_k_per_path=3):
        from reader.index.hits import SearchHit

        self.queries.append((query, paper_id))
        with self.db() as s:
            chunks = s.scalars(select(Chunk).where(Chunk.paper_id == paper_id).limit(3)).all()
            return [
                SearchHit(c.id, paper_id, c.text, c.section, c.page_start, c.page_end, 1.0 / (i + 1))
                for i, c in enumerate(chunks)
            ]


@pytest.fixture
def library(app, monkeypatch):
    add_paper(app.services.db)
    app.services.search_index = FakeIndex(app.services.db)
    app.services.generator, app.services.verifier = make_llms()
    monkeypatch.setattr("reader.facade.Reader", lambda *a, **k: app)
    return app


def invoke(*args, input=None):
    return CliRunner().invoke(cli, list(args), input=input, catch_exceptions=False)


def test_read_prints_progress_and_summary_then_show(library):
    out = invoke("read", PAPER_ID[:10])
    assert out.exit_code == 0, out.output
    assert "critique: writing, one heading at a time" in out.output and "critique: verifying" in out.output
    assert "flagged per iteration 2/4, 0/3 checked" in out.output  # the tool's findings apart
    assert "tool's findings 2" in out.output and "checklist  6 of 13 items found" in out.output
    assert "regenerations 1" in out.output and "LLM calls" in out.output

    shown = invoke("show", "Pruning Heads", "--verdicts")
    assert shown.exit_code == 0, shown.output
    assert "=== critique" in shown.output and "=== synthesis" in shown.output
    assert "Pruning 40% of heads keeps MNLI accuracy near 84.27." in shown.output
    assert "0.50 → 0.00" in shown.output


def test_read_json_shape(library):
    out = invoke("read", PAPER_ID[:10], "--json", "--quiet")
    assert out.exit_code == 0, out.output
    data = json.loads(out.output)
    assert data["paper_id"] == PAPER_ID
    assert {a["kind"] for a in data["analyses"]} == {"critique", "synthesis"}
    a = data["analyses"][0]
    assert {"kind", "final_text", "flagged_ratio", "iterations", "sentences"} <= set(a)
    assert set(a["sentences"][0]) == {
        "text",
        "verdict",
        "p_yes",
        "p_checker",
        "reasons",
        "evidence",
        "decided",
    }
    assert data["checklist"]["items"] and "checked_per_iteration" in a
    assert set(a["sentences"][0]["evidence"][0]) == {"chunk_id", "pages", "text"}
    assert data["llm_calls"] > 0 and data["tokens"] > 0


def test_audit_text_from_stdin_json(library):
    text = "Head pruning is cheap. BERT-large 精度只下降 0.3%，远低于 NEXUS 的 1.2%。"
    out = invoke("audit", "--paper", PAPER_ID[:10], "--json", input=text)
    assert out.exit_code == 0, out.output
    data = json.loads(out.output)
    verdicts = [(s["text"], s["verdict"]) for s in data["sentences"]]
    assert verdicts[0] == ("Head pruning is cheap.", "supported")
    assert verdicts[1][1] == "unsupported"
    assert any("NEXUS" in r for r in data["sentences"][1]["reasons"])
    assert data["marked_text"].endswith("[待验证] BERT-large 精度只下降 0.3%，远低于 NEXUS 的 1.2%。")
    assert library.services.verifier.history[-1]["stage"] == "audit"


def test_audit_text_file_plain_output(library, tmp_path):
    notes = tmp_path / "notes.md"
    notes.write_text("# My notes\nThe method prunes 40% of heads. It ignores speed.\n", encoding="utf-8")
    out = invoke("audit", "--paper", PAPER_ID[:10], "--text-file", str(notes))
    assert out.exit_code == 0, out.output
    assert "✓ supported   The method prunes 40% of heads." in out.output
    assert "✗ unsupported It ignores speed." in out.output
    assert "p. " in out.output  # evidence with pages
    assert "1/2 sentences unsupported" in out.output


def test_errors_are_one_line(library, tmp_path):
    out = invoke("show", PAPER_ID[:10])
    assert out.exit_code != 0 and "has no analyses yet" in out.output
    out = invoke("audit", "--paper", PAPER_ID[:10], input="   ")
    assert out.exit_code != 0 and "the text to audit is empty" in out.output
    out = invoke("read", "no-such-paper")
    assert out.exit_code != 0 and "no-such-paper" in out.output
