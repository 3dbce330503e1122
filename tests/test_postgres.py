"""The same schema and pipeline on PostgreSQL: a throwaway cluster on 127.0.0.1.

Skipped (with the reason) where no PostgreSQL server binaries are installed.
"""

import os
import subprocess
import sys
from pathlib import Path

from alembic.autogenerate import compare_metadata
from alembic.migration import MigrationContext
from conftest import ROOT, SAMPLE_PAPER, make_reader, shared_pdfs
from postgres_cluster import empty_database
from sqlalchemy import create_engine, func, select, text

from reader.store.tables import Base, Caption, Chunk, Paper, Reference

# Two of the shared papers come out of pymupdf with NUL bytes in their text (PostgreSQL
# refuses those), others with other C0 controls.
WITH_NUL = {"acl2020_specter_2020.acl-main.207.pdf", "naacl2018_litgraph_N18-3011.pdf"}
CONTROL = "[\x00-\x08\x0b-\x1f\x7f]"


def test_migrations_match_the_orm_on_postgresql(pg_url):
    from reader.store.db import upgrade

    upgrade(pg_url)
    with create_engine(pg_url).connect() as conn:
        assert compare_metadata(MigrationContext.configure(conn), Base.metadata) == []


def test_review_and_rm_on_postgresql(pg_url, tmp_path):
    env = {
        **os.environ,
        "READER_HOME": str(tmp_path / "home"),
        "READER_DATABASE_URL": pg_url,
        "READER_LLM_BASE_URL": "scripted:",
    }
    reader = [sys.executable, "-m", "reader"]
    sample = str(ROOT / "papers" / "sample_paper.pdf")
    done = subprocess.run(
        [*reader, "review", sample, "--quiet", "--json"], env=env, capture_output=True, text=True, timeout=300
    )
    assert done.returncode == 0, done.stderr
    engine = create_engine(pg_url)
    with engine.connect() as conn:
        paper_id = conn.execute(select(Paper.id)).scalar_one()
        assert conn.execute(select(func.count()).select_from(Chunk)).scalar_one() > 0
    gone = subprocess.run(
        [*reader, "rm", paper_id, "--yes"], env=env, capture_output=True, text=True, timeout=120
    )
    assert gone.returncode == 0, gone.stderr
    with engine.connect() as conn:
        assert conn.execute(select(func.count()).select_from(Chunk)).scalar_one() == 0


def test_processes_migrating_an_empty_postgresql_database_at_once_all_succeed(pg_url, tmp_path):
    """Without the advisory lock one of them dies with UniqueViolation (pg_type_typname_nsp_index)."""
    from test_review_races import migrate_at_once

    from reader.store.db import HEAD_REVISION

    url = empty_database(pg_url, "race_migrate")
    results = migrate_at_once(url, tmp_path)
    failures = [
        [line for line in r.stderr.splitlines() if "Error" in line][-1:] for r in results if r.returncode != 0
    ]
    assert failures == [], failures
    with create_engine(url).connect() as conn:
        assert conn.execute(text("SELECT version_num FROM alembic_version")).scalars().all() == [
            HEAD_REVISION
        ]


def test_call_timings_on_a_0002_postgresql_database(pg_url):
    """Migration 0003 on PostgreSQL, and `reader stats` sums there: NULL (unknown) timings stay
    None, known ones add up."""
    from alembic import command

    from reader.store.calls import CallStore
    from reader.store.db import alembic_config, open_database
    from reader.store.usage import usage_report

    url = empty_database(pg_url, "timings_0002")
    command.upgrade(alembic_config(url), "0002")
    engine = create_engine(url)
    with engine.begin() as conn:
        conn.execute(
            text(
                "INSERT INTO llm_calls (created_at, stage, role, model, paper_id, prompt_tokens, "
                "completion_tokens, latency_ms, cached, error) VALUES "
                "(now(), 'verify', 'verifier', 'm', NULL, 10, 2, 1500.0, false, '')"
            )
        )
    engine.dispose()
    calls = CallStore(open_database(url))
    calls.log(
        stage="verify",
        role="verifier",
        model="m",
        paper_id=None,
        prompt_tokens=10,
        completion_tokens=2,
        latency_s=2.0,
        cached=False,
        prompt_s=0.5,
        generation_s=1.25,
        cached_prompt_tokens=6,
    )
    calls.log(
        stage="critique",
        role="generator",
        model="m",
        paper_id=None,
        prompt_tokens=30,
        completion_tokens=9,
        latency_s=4.0,
        cached=False,
    )
    report = usage_report(calls.db)
    stages = {r.key: r for r in report.by_stage}
    verify, critique = stages["verify"], stages["critique"]
    assert (verify.calls, verify.timed_calls, verify.time_s) == (2, 1, 3.5)
    assert (verify.prompt_s, verify.generation_s, verify.cached_prompt_tokens) == (0.5, 1.25, 6)
    assert (critique.prompt_s, critique.generation_s, critique.cached_prompt_tokens) == (None, None, None)
    assert (report.total.longest_stage, report.total.longest_stage_s) == ("critique", 4.0)


def test_two_review_processes_on_one_postgresql_database_read_each_paper_once(pg_url, tmp_path):
    """Two runs on one database: each paper is claimed, hence read, once (runs on other
    hosts: tests/test_queue.py and tests/test_worker.py)."""
    from test_review import make_files
    from test_review_races import assert_each_paper_read_once, review_at_once

    files = make_files(tmp_path / "papers", ["a.pdf", "b.pdf", "c.pdf"])
    results = review_at_once(empty_database(pg_url, "race_review"), files, tmp_path)
    assert_each_paper_read_once(results, [f.name for f in files])


def test_every_shared_paper_ingests_on_postgresql(pg_url, tmp_path, monkeypatch):
    """All fourteen shared papers (the sample paper without ../shared), control characters
    dropped; a database error on one file is that file's one-line error and the rest go on."""
    import re

    from reader.ingest import pipeline

    papers = shared_pdfs() or [SAMPLE_PAPER]
    reader = make_reader(tmp_path / "home", env=os.environ, database_url=pg_url, cache=None)
    results = reader.ingest(papers)
    assert [(Path(r.file).name, r.status, r.error) for r in results] == [
        (p.name, "ingested", "") for p in papers
    ]
    engine = create_engine(pg_url)
    with engine.connect() as conn:
        stored = [t for (t,) in conn.execute(select(Chunk.text))]
        stored += [t for row in conn.execute(select(Caption.label, Caption.text)) for t in row]
        stored += [t for row in conn.execute(select(Reference.marker, Reference.text)) for t in row]
        stored += [t for row in conn.execute(select(Paper.title, Paper.abstract)) for t in row]
        paths = [p for (p,) in conn.execute(select(Paper.source_path))]
    assert not [t for t in stored if re.search(CONTROL, t)]
    assert sorted(paths) == sorted(str(p.resolve()) for p in papers)
    if shared_pdfs():
        assert WITH_NUL <= {p.name for p in papers}
    assert reader.search("citation graph embeddings").hits

    # a database error on one file: PostgreSQL's own, in one line, and the next file goes on
    real_parse = pipeline.parse_file

    def parse_with_nul(path, data, sha256=None):
        parsed = real_parse(path, data, sha256)
        if path.suffix == ".txt":
            parsed.blocks[-1].text += "\x00"
        return parsed

    monkeypatch.setattr(pipeline, "parse_file", parse_with_nul)
    (tmp_path / "a.txt").write_text("Notes on NUL\n\nA paragraph that gets a NUL byte.\n")
    (tmp_path / "b.md").write_text("# Notes on storing\n\nA paragraph that is stored.\n")
    bad, good = reader.ingest([tmp_path / "a.txt", tmp_path / "b.md"])
    assert bad.status == "error" and "\n" not in bad.error and len(bad.error) < 300, bad.error
    assert "NUL" in bad.error and "INSERT" not in bad.error
    assert good.status == "ingested"


def test_llm_replies_with_nul_and_escapes_are_stored_on_postgresql(pg_url, tmp_path):
    """PostgreSQL refuses NUL in text: before, every reply with one failed its paper with
    DataError (on every run, as nothing was cached) and its call was missing from the call log."""
    from test_control_characters import CONTROL, hostile_llm, sparta_paper

    from reader.store.tables import Analysis, LLMCacheEntry, LLMCall

    url = empty_database(pg_url, "reply_controls")
    writer, verifier = hostile_llm("hostile-writer"), hostile_llm("hostile-verifier")
    reader = make_reader(
        tmp_path / "home", env=os.environ, database_url=url, llm=writer, verifier=verifier, cache=None
    )
    result = reader.read(sparta_paper(tmp_path))
    assert result.analyses and all(k.loop.final_text for k in result.analyses)

    engine = create_engine(url)
    with engine.connect() as conn:
        finals = conn.execute(select(Analysis.final_text)).scalars().all()
        cached = conn.execute(select(LLMCacheEntry.text)).scalars().all()
        # the calls the LLMs answered: a cache hit is logged too (the critique and the synthesis
        # run in two threads, so whether one reuses the other's identical prompt is a race)
        answered = LLMCall.cached.is_(False)
        errors = (
            conn.execute(select(LLMCall.error).where(LLMCall.stage != "checklist", answered)).scalars().all()
        )
        checklist = conn.execute(
            select(func.count()).select_from(LLMCall).where(LLMCall.stage == "checklist", answered)
        ).scalar()
    engine.dispose()
    assert len(finals) == 2 and any("pwned[31m2J" in t for t in finals)
    assert cached and not any(CONTROL.search(t) for t in finals + cached)
    # every call stored; none failed (a checklist reply whose span is not the passage's is
    # refused by the checklist's own check, not by the store)
    assert len(errors) + checklist == writer.calls + verifier.calls and set(errors) == {""}


def test_review_zotero_on_postgresql_reviews_what_it_cannot_link_and_says_why(pg_url, tmp_path):
    """A Zotero library whose fields PostgreSQL cannot hold as they are: a title with NUL (stored
    without it), an item key longer than any Zotero key (the paper is reviewed without its
    Zotero link, said in one note line). Run twice: the second run finds both papers stored
    and reviewed, and the metadata pass over them stops at nothing either."""
    import json
    import sqlite3

    from test_review_cli import reader_cmd
    from test_zotero import _pdfs
    from zotero_fixture import build_library

    zotero = tmp_path / "Zotero"
    build_library(zotero, *_pdfs(tmp_path))
    with sqlite3.connect(zotero / "zotero.sqlite") as conn:
        conn.execute(
            "UPDATE itemDataValues SET value = ? WHERE value = 'Redundancy in Sparse Extraction'",
            ("Redundancy\x00 in Sparse Extraction",),
        )
        conn.execute("UPDATE items SET key = 'IJKL2345IJKL2345IJKL' WHERE key = 'IJKL2345'")
    url = empty_database(pg_url, "review_zotero")
    env = {
        **os.environ,
        "READER_HOME": str(tmp_path / "home"),
        "READER_DATABASE_URL": url,
        "READER_LLM_BASE_URL": "scripted:",
    }
    for run in ("first", "second"):
        done = subprocess.run(
            reader_cmd("review", "--zotero", str(zotero), "--quiet", "--json"),
            env=env,
            capture_output=True,
            text=True,
            timeout=300,
            cwd=ROOT,
        )
        assert done.returncode == 0 and "Traceback" not in done.stderr, (run, done.stderr)
        report = json.loads(done.stdout)
        expected = "reviewed" if run == "first" else "skipped"
        assert [p["status"] for p in report["papers"]] == [expected] * 2, (run, report)
        unlinked = [n for n in report["notes"] if "IJKL2345IJKL2345IJKL" in n]
        assert len(unlinked) == 1 and "stored without its Zotero metadata" in unlinked[0], report["notes"]
        assert "\n" not in unlinked[0] and "UPDATE" not in unlinked[0]
    with create_engine(url).connect() as conn:
        rows = conn.execute(select(Paper.title, Paper.zotero_key).order_by(Paper.title)).all()
    assert ("Redundancy in Sparse Extraction", "ABCD2345") in [tuple(r) for r in rows]
    assert all(key != "IJKL2345IJKL2345IJKL" for _, key in rows)
