"""`reader review` as a real subprocess with the dry-run LLM: kill -9 mid-run, resume, re-run, --force.

The subprocess runs the real CLI; only the embedding model is swapped for the
deterministic hashing embedder so each run starts in about a second.

The folder holds four shared papers; in a clone without ../shared it holds four
copies of papers/sample_paper.pdf that differ only in their metadata (so in
their bytes, hence their paper ids), reviewed with the LLM cache off so that
each copy costs its own LLM calls as a different paper would.
"""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest
from conftest import ROOT, SAMPLE_PAPER, shared_pdfs
from sqlalchemy import create_engine, text

pytest.importorskip("reader.ingest.pipeline")

BOOTSTRAP = (
    "import reader.index.dense as dense\n"
    "_hashing = dense.HashingEmbedder()\n"
    "dense.load_embedder = lambda settings: _hashing\n"
    "from reader.cli import main\n"
    "main()\n"
)
SHARED_PAPERS = [
    "acl2007_P07-1088.pdf",
    "naacl2018_litgraph_N18-3011.pdf",
    "acl2023_tutorial_goal_awareness_2023.acl-tutorials.1.pdf",
    "acl2014_P14-1059.pdf",
]
AVAILABLE = {p.name: p for p in shared_pdfs()}
USE_SHARED = all(name in AVAILABLE for name in SHARED_PAPERS)
PAPERS = SHARED_PAPERS if USE_SHARED else [f"sample_copy_{i}.pdf" for i in range(1, 5)]


def reader_cmd(*args: str) -> list[str]:
    return [sys.executable, "-c", BOOTSTRAP, *args]


def write_sample_copy(path: Path, n: int) -> None:
    """papers/sample_paper.pdf with its metadata marked as copy n: same text, other bytes."""
    import pymupdf

    with pymupdf.open(SAMPLE_PAPER) as doc:
        doc.set_metadata(
            {
                **{k: v for k, v in doc.metadata.items() if k not in ("format", "encryption")},
                "subject": f"Sample paper for reader, copy {n}",
            }
        )
        doc.save(path)


@pytest.fixture
def folder(tmp_path):
    """Symlinks to four shared papers (nothing copied), or four copies of the
    sample paper, and one broken PDF."""
    folder = tmp_path / "papers"
    folder.mkdir()
    for n, name in enumerate(PAPERS, 1):
        if USE_SHARED:
            (folder / name).symlink_to(AVAILABLE[name])
        else:
            write_sample_copy(folder / name, n)
    assert len({(folder / name).read_bytes() for name in PAPERS}) == len(PAPERS)
    (folder / "broken.pdf").write_bytes(b"%PDF-1.7\nthis file was cut off in transfer")
    return folder


@pytest.fixture
def env(tmp_path, migrated_home):
    env = {k: v for k, v in os.environ.items() if not k.startswith("READER_")}
    env.update(
        {
            "READER_HOME": str(migrated_home(tmp_path / "home")),
            "READER_LLM_BASE_URL": "scripted:latency_ms=80",
            "READER_EMBED_MODEL": "hashing",  # the name the swapped-in embedder is stored under
            "PYTHONPATH": str(ROOT),
            # the follow-up questions run after a review is stored: a kill can stop them midway
            "READER_FOLLOWUP": "off",
        }
    )
    if not USE_SHARED:
        env["READER_CACHE"] = "off"  # the sample copies share their prompts; each must cost its calls
        env["READER_REVIEW_NEAR_DUPLICATES"] = "on"  # the copies stand for four papers: each reviewed
    return env


def query(env, sql: str) -> list[tuple]:
    engine = create_engine(f"sqlite:///{Path(env['READER_HOME']) / 'reader.db'}")
    try:
        with engine.connect() as conn:
            return [tuple(row) for row in conn.execute(text(sql))]
    finally:
        engine.dispose()


def calls_per_paper(env) -> dict[str, int]:
    return dict(query(env, "SELECT paper_id, count(*) FROM llm_calls GROUP BY paper_id"))


def done_papers(env) -> list[str]:
    try:
        return [r[0] for r in query(env, "SELECT paper_id FROM review_jobs WHERE status = 'done'")]
    except Exception:  # the database is not created yet
        return []


def one_done_and_the_next_in_its_read(env) -> bool:
    """The moment for Ctrl-C: a paper is reviewed and the next one is in hand, inside its read."""
    jobs = query(env, "SELECT status, stage FROM review_jobs")
    return ("done", "done") in jobs and ("running", "read") in jobs


def run(env, *args: str, timeout: float = 300) -> subprocess.CompletedProcess:
    return subprocess.run(
        reader_cmd(*args), env=env, capture_output=True, text=True, timeout=timeout, cwd=ROOT
    )


def test_kill_resume_rerun_and_force(folder, env):
    # 1. start, wait until at least one paper is finished, then kill -9 mid-run
    proc = subprocess.Popen(
        reader_cmd("review", str(folder), "--jobs", "1"),
        env=env,
        stdout=subprocess.DEVNULL,
        stderr=subprocess.PIPE,
        text=True,
        cwd=ROOT,
    )
    deadline = time.monotonic() + 240
    while not done_papers(env):
        assert proc.poll() is None, f"review ended before the kill: {proc.stderr.read()}"
        assert time.monotonic() < deadline, "no paper finished in time"
        time.sleep(0.2)
    os.kill(proc.pid, signal.SIGKILL)
    proc.wait()
    proc.stderr.close()
    finished_before = done_papers(env)
    assert 1 <= len(finished_before) < len(PAPERS), "the kill came mid-run"
    calls_before = calls_per_paper(env)

    # 2. the same command again: continues, the broken file is reported, the rest reviewed
    resumed = run(env, "review", str(folder), "--jobs", "1", "--json")
    assert resumed.returncode == 1, resumed.stderr
    report = json.loads(resumed.stdout)
    by_file = {Path(p["source"]).name: p for p in report["papers"]}
    assert by_file["broken.pdf"]["status"] == "error" and by_file["broken.pdf"]["error"]
    assert "broken.pdf" in resumed.stderr
    for paper_id in finished_before:
        row = next(p for p in report["papers"] if p["paper_id"] == paper_id)
        assert row["status"] == "skipped"
    assert (
        sorted(p["status"] for p in report["papers"] if p["source"].endswith(tuple(PAPERS))).count("error")
        == 0
    )

    calls_after = calls_per_paper(env)
    for paper_id in finished_before:
        assert calls_after[paper_id] == calls_before[paper_id], "finished papers made no new calls"

    # every paper reviewed exactly once: one job, one critique, one synthesis
    assert query(env, "SELECT count(*) FROM papers") == [(len(PAPERS),)]
    jobs = query(env, "SELECT paper_id, status FROM review_jobs WHERE paper_id IS NOT NULL")
    assert sorted(s for _, s in jobs) == ["done"] * len(PAPERS)
    assert len({p for p, _ in jobs}) == len(PAPERS)
    per_kind = query(env, "SELECT paper_id, kind, count(*) FROM analyses GROUP BY paper_id, kind")
    assert len(per_kind) == 2 * len(PAPERS) and {n for _, _, n in per_kind} == {1}

    # 3. a finished review re-run does nothing
    calls = query(env, "SELECT count(*) FROM llm_calls")
    again = run(env, "review", str(folder), "--json", "--quiet")
    statuses = {Path(p["source"]).name: p["status"] for p in json.loads(again.stdout)["papers"]}
    assert {statuses[name] for name in PAPERS} == {"skipped"}
    assert query(env, "SELECT count(*) FROM llm_calls") == calls
    assert query(env, "SELECT count(*) FROM analyses") == [(2 * len(PAPERS),)]

    # 4. --force redoes one paper without duplicating the others
    target = folder / PAPERS[0]
    forced = run(env, "review", str(target), "--force", "--json", "--quiet")
    assert forced.returncode == 0, forced.stderr
    (row,) = json.loads(forced.stdout)["papers"]
    assert row["status"] == "reviewed"
    assert query(env, "SELECT count(*) FROM analyses") == [(2 * len(PAPERS),)]
    assert query(env, "SELECT count(*) FROM review_jobs WHERE paper_id IS NOT NULL") == [(len(PAPERS),)]


def test_ctrl_c_then_review_and_export_from_the_command_line(folder, env, tmp_path):
    (folder / "broken.pdf").unlink()
    for name in PAPERS[2:]:
        (folder / name).unlink()
    out = tmp_path / "notes"
    # slower calls while Ctrl-C comes, so the second paper's read lasts a while after it is seen
    slow = {**env, "READER_LLM_BASE_URL": "scripted:latency_ms=300"}
    proc = subprocess.Popen(
        reader_cmd("review", str(folder), "--jobs", "1", "--export", str(out)),
        env=slow,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
        cwd=ROOT,
    )
    deadline = time.monotonic() + 240
    while not one_done_and_the_next_in_its_read(env):
        assert proc.poll() is None and time.monotonic() < deadline
        time.sleep(0.05)
    proc.send_signal(signal.SIGINT)
    _, err = proc.communicate(timeout=60)
    assert proc.returncode == 130
    assert "Interrupted" in err and "run the same command again" in err
    assert not out.exists(), "an interrupted run exports nothing"

    done = run(env, "review", str(folder), "--jobs", "1", "--export", str(out))
    assert done.returncode == 0, done.stderr
    assert "[1/1]" in done.stderr and "ETA" in done.stderr, "only the unfinished paper is redone"
    assert "Notes:" in done.stdout and str(out.resolve()) in done.stdout
    notes = sorted(p.name for p in out.glob("*.md"))
    assert len(notes) == 3 and "index.md" in notes
    assert query(env, "SELECT count(*) FROM analyses") == [(4,)]
