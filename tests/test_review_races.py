"""Races between commands on one home (issue 15): a paper removed while it is being
reviewed, several commands migrating an empty database at once, two reviews of
the same folder at once.

The review engine gets injected stages (tests/test_review.py's FakeWorld); the
migration race runs real processes released together by a file barrier.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
import textwrap
import threading
import time
from pathlib import Path

import pytest
from conftest import ROOT
from sqlalchemy import create_engine, text
from sqlalchemy.exc import OperationalError
from test_review import FakeWorld, analyses_per_paper, count, make_files, store_review

from reader.ingest.pipeline import remove_paper
from reader.review import WorkerOptions, WorkerStages, file_sha256, job_rows, run_review
from reader.store.db import transaction
from reader.store.tables import Paper, ReviewJob


def statuses(report) -> dict[str, str]:
    return {Path(p.source).name: p.status for p in report.papers}


# ------------------------------------------------- `reader rm` during a review


def test_a_paper_removed_during_its_read_is_reported_removed_and_the_batch_goes_on(db, tmp_path):
    files = make_files(tmp_path, ["a.pdf", "b.pdf", "c.pdf"])
    world = FakeWorld(db)

    def read_paper(paper_id, on_progress=None, **_):  # `reader rm` uses its own session
        if paper_id == file_sha256(files[1]):
            remove_paper(db, paper_id)  # `reader rm` from another shell, mid-read
            store_review(db, paper_id)  # deep_read's final transaction: the paper is gone
        return world.read_paper(paper_id, on_progress)

    events = []
    report = run_review(
        files,
        WorkerStages(db, world.ingest_data, read_paper),
        options=WorkerOptions(jobs=1),
        on_event=events.append,
    )
    assert statuses(report) == {"a.pdf": "reviewed", "b.pdf": "removed", "c.pdf": "reviewed"}
    removed = report.papers[1]
    assert "removed" in removed.error and "reader rm" in removed.error
    assert report.failed == [] and report.to_json()["removed"] == 1
    assert any(e.stage == "removed" for e in events)
    assert world.read == ["a", "c"]
    assert [r["paper_id"] for r in job_rows(db)] == [file_sha256(files[0]), file_sha256(files[2])]
    assert set(analyses_per_paper(db)) == {file_sha256(files[0]), file_sha256(files[2])}


def test_a_paper_removed_after_its_read_committed_is_reported_removed(db, tmp_path):
    a, b = make_files(tmp_path, ["a.pdf", "b.pdf"])
    world = FakeWorld(db)

    def read_paper(paper_id, on_progress=None, **_):  # `reader rm` uses its own session
        result = world.read_paper(paper_id, on_progress)
        if paper_id == file_sha256(a):
            remove_paper(db, paper_id)  # between deep_read's commit and the job's "done"
        return result

    report = run_review(
        [a, b], WorkerStages(db, world.ingest_data, read_paper), options=WorkerOptions(jobs=1)
    )
    assert statuses(report) == {"a.pdf": "removed", "b.pdf": "reviewed"}
    assert report.failed == []
    with db() as s:
        assert s.get(Paper, file_sha256(a)) is None
    assert [r["status"] for r in job_rows(db)] == ["done"]


def test_a_paper_removed_before_its_turn_to_ingest_is_not_ingested_again(db, tmp_path, monkeypatch):
    import threading

    from reader.review import worker

    a, b = make_files(tmp_path, ["a.pdf", "b.pdf"])
    world = FakeWorld(db)
    world.ingest(b)  # already in the library: its job belongs to the paper from the start
    world.ingested.clear()
    a_ingesting = threading.Event()
    ingested = worker._ingested

    def b_after_a(claim, run, **kwargs):  # b's worker asks for the ingest lock only once a holds it
        if claim.paper_id == file_sha256(b):
            assert a_ingesting.wait(10)
        return ingested(claim, run, **kwargs)

    monkeypatch.setattr(worker, "_ingested", b_after_a)

    def ingest_data(data, label):
        if Path(label).name == a.name:  # b's job is claimed and waits for the ingest lock meanwhile
            a_ingesting.set()
            time.sleep(0.2)
            remove_paper(db, file_sha256(b))
        return world.ingest_data(data, label)

    report = run_review(
        [a, b], WorkerStages(db, ingest_data, world.read_paper), options=WorkerOptions(jobs=2)
    )
    assert statuses(report) == {"a.pdf": "reviewed", "b.pdf": "removed"}
    assert world.ingested == ["a.pdf"], "the removed paper is not put back into the library"
    with db() as s:
        assert s.get(Paper, file_sha256(b)) is None


PAPER_TEXT = """# {title}

## Introduction

We study {topic} in scientific reading tools. Our method ranks passages by term statistics
and citation context. On our benchmark it improves recall at ten from 61.5% to 70.2%.

## Results

The gain is largest for queries that paraphrase the passage wording. Ranking one query
takes about four milliseconds on a laptop processor.
"""


def test_reader_rm_during_reader_review_from_the_command_line(tmp_path):
    """The real commands: `reader rm` of the paper being read; the review reports it removed,
    reviews the other and exits 0."""
    from test_review_cli import reader_cmd

    folder = tmp_path / "papers"
    folder.mkdir()
    first, second = folder / "a_first.md", folder / "b_second.md"
    first.write_text(PAPER_TEXT.format(title="Passage ranking A", topic="passage ranking"))
    second.write_text(PAPER_TEXT.format(title="Passage ranking B", topic="citation context"))
    env = {k: v for k, v in os.environ.items() if not k.startswith("READER_")}
    env.update(
        {
            "READER_HOME": str(tmp_path / "home"),
            "READER_EMBED_MODEL": "hashing",
            "READER_LLM_BASE_URL": "scripted:latency_ms=1500",
            "READER_FOLLOWUP": "off",  # each scripted call takes 1.5 s; the questions are not what is tested
            "PYTHONPATH": str(ROOT),
        }
    )
    review = subprocess.Popen(
        reader_cmd("review", str(folder), "--jobs", "1", "--json"),
        env=env,
        cwd=ROOT,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )
    paper_id = file_sha256(first)
    engine = create_engine(f"sqlite:///{tmp_path / 'home' / 'reader.db'}")
    deadline = time.monotonic() + 120
    while True:  # wait until the first paper is being read
        assert review.poll() is None and time.monotonic() < deadline, review.stderr.read()
        try:
            with engine.connect() as conn:
                stage = conn.execute(
                    text("SELECT stage FROM review_jobs WHERE paper_id = :p"), {"p": paper_id}
                ).scalar()
        except OperationalError:  # not created yet
            stage = None
        if stage == "read":
            break
        time.sleep(0.1)
    gone = subprocess.run(
        reader_cmd("rm", paper_id, "--yes"),
        env=env,
        cwd=ROOT,
        check=False,
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert gone.returncode == 0, gone.stderr
    out, err = review.communicate(timeout=300)
    assert review.returncode == 0, err
    rows = {Path(p["source"]).name: p for p in json.loads(out)["papers"]}
    assert rows["a_first.md"]["status"] == "removed", rows["a_first.md"]
    assert rows["b_second.md"]["status"] == "reviewed", rows["b_second.md"]
    assert f"removed: {first}: removed from the library" in err
    assert "Traceback" not in err
    with engine.connect() as conn:
        assert conn.execute(text("SELECT count(*) FROM papers WHERE id = :p"), {"p": paper_id}).scalar() == 0
        assert conn.execute(text("SELECT status FROM review_jobs")).scalars().all() == ["done"]
    engine.dispose()


# ------------------------------------------------- migrations on first use

MIGRATE_AT_ONCE = textwrap.dedent("""
    import sys, time
    from pathlib import Path
    import alembic.command  # imported before the barrier: every process is ready to migrate
    from reader.store.db import open_database
    from reader.store.tables import Paper
    url, barrier, me, total = sys.argv[1], Path(sys.argv[2]), sys.argv[3], int(sys.argv[4])
    (barrier / me).touch()
    while len(list(barrier.iterdir())) < total:
        time.sleep(0.002)
    factory = open_database(url)
    with factory() as s:
        s.query(Paper).count()
    print("ok")
""")


def migrate_at_once(url: str, tmp_path: Path, processes: int = 5) -> list[subprocess.CompletedProcess]:
    """`processes` Python processes that call open_database(url) at the same moment."""
    barrier = tmp_path / "barrier"
    barrier.mkdir()
    env = {**os.environ, "PYTHONPATH": str(ROOT)}
    procs = [
        subprocess.Popen(
            [sys.executable, "-c", MIGRATE_AT_ONCE, url, str(barrier), str(i), str(processes)],
            env=env,
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            text=True,
        )
        for i in range(processes)
    ]
    done = []
    for proc in procs:
        out, err = proc.communicate(timeout=180)
        done.append(subprocess.CompletedProcess(proc.args, proc.returncode, out, err))
    return done


def test_processes_opening_an_empty_sqlite_database_at_once_all_succeed(tmp_path):
    from reader.store.db import HEAD_REVISION

    db_file = tmp_path / "home" / "reader.db"
    results = migrate_at_once(f"sqlite:///{db_file}", tmp_path)
    failures = [
        [line for line in r.stderr.splitlines() if "Error" in line][-1:] for r in results if r.returncode != 0
    ]
    assert failures == [], failures
    assert all(r.stdout.strip() == "ok" for r in results)
    with create_engine(f"sqlite:///{db_file}").connect() as conn:
        assert conn.execute(text("SELECT version_num FROM alembic_version")).scalars().all() == [
            HEAD_REVISION
        ]


def test_reader_commands_started_at_once_on_an_empty_home_all_succeed(tmp_path):
    env = {k: v for k, v in os.environ.items() if not k.startswith("READER_")}
    env.update({"READER_HOME": str(tmp_path / "home"), "PYTHONPATH": str(ROOT)})
    procs = [
        subprocess.Popen(
            [sys.executable, "-m", "reader", "papers", "--json"],
            env=env,
            cwd=ROOT,
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            text=True,
        )
        for _ in range(4)
    ]
    results = [(p.wait(timeout=180), p.stdout.read(), p.stderr.read()) for p in procs]
    assert [code for code, _, _ in results] == [0] * 4, [err for _, _, err in results]
    assert all(json.loads(out) == [] for _, out, _ in results)


# ------------------------------------------------- two reviews of one folder


def test_two_reviews_of_one_folder_at_once_read_each_paper_once(db, tmp_path):
    files = make_files(tmp_path, ["a.pdf", "b.pdf", "c.pdf"])
    world = FakeWorld(db, read_delay=0.3)  # one world: `read` lists every read of both runs
    start = threading.Barrier(2)
    reports = [None, None]

    def one_run(slot: int) -> None:
        start.wait()
        reports[slot] = run_review(
            files, WorkerStages(db, world.ingest_data, world.read_paper), options=WorkerOptions(jobs=3)
        )

    threads = [threading.Thread(target=one_run, args=(slot,)) for slot in (0, 1)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join(timeout=60)
    assert sorted(world.read) == ["a", "b", "c"], "every paper is read by one run only"
    for name in ("a.pdf", "b.pdf", "c.pdf"):
        pair = sorted(statuses(report)[name] for report in reports)
        assert pair in (["busy", "reviewed"], ["reviewed", "skipped"]), (name, pair)
    busy = [p for report in reports for p in report.papers if p.status == "busy"]
    assert all("another run" in p.error for p in busy)
    assert count(db, ReviewJob) == 3
    assert {r["status"] for r in job_rows(db)} == {"done"}
    assert set(analyses_per_paper(db).values()) == {2}


REVIEW_AT_ONCE = textwrap.dedent("""
    import faulthandler, json, sys, time
    from pathlib import Path
    faulthandler.dump_traceback_later(90, exit=True)  # a hang shows where every thread waits
    url, barrier, me, total, tests = sys.argv[1], Path(sys.argv[2]), sys.argv[3], int(sys.argv[4]), sys.argv[5]
    sys.path.insert(0, tests)
    from test_review import FakeWorld
    from reader.review import WorkerOptions, WorkerStages, run_review
    from reader.store.db import open_database
    files = [Path(name) for name in sys.argv[6:]]
    db = open_database(url)
    world = FakeWorld(db, read_delay=0.3)
    (barrier / me).touch()
    while len(list(barrier.iterdir())) < total:
        time.sleep(0.002)
    report = run_review(files, WorkerStages(db, world.ingest_data, world.read_paper), options=WorkerOptions(jobs=3))
    print(json.dumps({"read": world.read,
                      "papers": {Path(p.source).name: [p.status, p.error] for p in report.papers}}))
""")


def review_at_once(url: str, files: list[Path], tmp_path: Path, processes: int = 2) -> list[dict]:
    """`processes` runs of run_review over `files` (FakeWorld stages, 0.3 s per read),
    started at the same moment; what each read and reported."""
    barrier = tmp_path / "review-barrier"
    barrier.mkdir()
    env = {**os.environ, "PYTHONPATH": str(ROOT)}
    procs = [
        subprocess.Popen(
            [
                sys.executable,
                "-c",
                REVIEW_AT_ONCE,
                url,
                str(barrier),
                str(i),
                str(processes),
                str(ROOT / "tests"),
                *map(str, files),
            ],
            env=env,
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            text=True,
        )
        for i in range(processes)
    ]
    results = []
    for proc in procs:
        out, err = proc.communicate(timeout=180)
        assert proc.returncode == 0, err
        results.append(json.loads(out))
    return results


def assert_each_paper_read_once(results: list[dict], names: list[str]) -> None:
    assert sorted(title for r in results for title in r["read"]) == sorted(Path(n).stem for n in names)
    for name in names:
        rows = sorted(r["papers"][name][0] for r in results)
        assert rows in (["busy", "reviewed"], ["reviewed", "skipped"]), (name, rows)


@pytest.mark.xfail(
    reason="one of the two processes hung (no reply in 180 s) in one fresh-clone CI run "
    "on a loaded machine; not reproduced in 16 runs; open defect, see docs/design/reliability.md",
    strict=False,
)
def test_two_review_processes_on_one_home_read_each_paper_once(tmp_path):
    files = make_files(tmp_path / "papers", ["a.pdf", "b.pdf", "c.pdf"])
    results = review_at_once(f"sqlite:///{tmp_path / 'home' / 'reader.db'}", files, tmp_path)
    assert_each_paper_read_once(results, [f.name for f in files])


def test_a_job_left_running_by_an_earlier_run_of_this_process_is_redone(db, tmp_path):
    """A web server reviews in-process: its own finished (or crashed) run's job is stale,
    only the runs still going in the process hold their jobs."""
    import socket

    from reader.queue import process_start

    (a,) = make_files(tmp_path, ["a.pdf"])
    world = FakeWorld(db)
    world.ingest(a)
    with transaction(db) as s:
        s.add(
            ReviewJob(
                source_path=str(a),
                paper_id=file_sha256(a),
                status="running",
                stage="read",
                summary={
                    "pid": os.getpid(),
                    "host": socket.gethostname(),
                    "start": process_start(os.getpid()),
                    "run": "finished-long-ago",
                },
            )
        )
    report = run_review([a], WorkerStages(db, world.ingest_data, world.read_paper))
    assert statuses(report) == {"a.pdf": "reviewed"} and world.read == ["a"]
