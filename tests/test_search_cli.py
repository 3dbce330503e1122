"""`reader search` and `reader reindex` through the CLI (hashing embedder instead of the model)."""

import json

import pytest
from click.testing import CliRunner

from reader.cli import cli
from reader.index import dense
from reader.index.dense import HashingEmbedder
from reader.store.db import open_database, transaction
from reader.store.tables import Chunk, Paper

PAPER = "d" * 64
OTHER = "e" * 64


@pytest.fixture
def library(reader_env, monkeypatch):
    monkeypatch.setattr(dense, "load_embedder", lambda settings: HashingEmbedder())
    from reader.config import load_settings

    db = open_database(load_settings().database_url)
    with transaction(db) as session:
        for paper_id, texts in {
            PAPER: ["Citation graphs help recommend papers.", "SPECTER embeds documents with a transformer."],
            OTHER: ["Wheat metabolomics under drought stress."],
        }.items():
            session.add(Paper(id=paper_id, title="t", source_path="x.pdf", source_kind="pdf", pages=2))
            session.flush()
            session.add_all(
                [
                    Chunk(
                        paper_id=paper_id,
                        ordinal=i,
                        section="Intro",
                        page_start=i + 1,
                        page_end=i + 1,
                        text=t,
                    )
                    for i, t in enumerate(texts)
                ]
            )
    return db


def run(*args):
    return CliRunner().invoke(cli, list(args), catch_exceptions=False)


def test_search_json_has_the_documented_fields(library):
    result = run("search", "citation graphs", "--json")
    assert result.exit_code == 0, result.output
    hits = json.loads(result.stdout)["hits"]
    assert hits[0]["text"] == "Citation graphs help recommend papers."
    assert set(hits[0]) == {
        "chunk_id",
        "paper_id",
        "text",
        "pages",
        "section",
        "score",
        "bm25_rank",
        "dense_rank",
    }
    assert hits[0]["paper_id"] == PAPER and hits[0]["pages"] == "1" and hits[0]["bm25_rank"] == 1


def test_search_within_one_paper_and_k(library):
    result = run("search", "citation graphs", "--paper", OTHER, "-k", "1", "--json")
    hits = json.loads(result.stdout)["hits"]
    assert [h["paper_id"] for h in hits] == [OTHER]


def test_search_plain_output_names_pages_and_paths(library):
    result = run("search", "SPECTER transformer")
    assert result.exit_code == 0
    assert "p. 2 · Intro" in result.output and "bm25 #1" in result.output
    assert "SPECTER embeds documents" in result.output


def test_search_errors_are_one_line_messages(library):
    result = CliRunner().invoke(cli, ["search", "x", "--paper", "nope"])
    assert result.exit_code == 1 and "nope" in result.output and "Traceback" not in result.output
    result = CliRunner().invoke(cli, ["search", "  "])
    assert result.exit_code == 1 and "query is empty" in result.output


def test_reindex_reports_what_it_indexed(library, reader_env):
    result = run("reindex")
    assert result.exit_code == 0
    assert "Indexed 3 chunks from 2 papers" in result.output
    assert (reader_env / "index" / "CURRENT").exists()
