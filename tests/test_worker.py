"""`reader worker` processes sharing one PostgreSQL database (a throwaway cluster), each with
its own READER_HOME and the hashing embedder, the LLM a loopback OpenAI-compatible server at a
fixed latency (tests/loopback_openai.py answering as the dry-run LLM does) or the scripted LLM
in-process where the test needs one machine to be slow: every
paper reviewed once, a worker killed with kill -9 replaced after its lease, overlapping
`reader review --queue` runs, and three workers reading their papers at the same time (how much
faster than one: benchmarks/bench_workers.py)."""

from __future__ import annotations

import itertools
import json
import os
import select
import signal
import socket
import subprocess
import time

import pytest
from conftest import ROOT
from loopback_openai import LoopbackOpenAI
from postgres_cluster import empty_database
from sqlalchemy import create_engine, text
from test_queue import write_papers
from test_review_cli import reader_cmd

from reader.llm.dryrun import answer_generate, answer_verify

_names = itertools.count()


@pytest.fixture
def shared(pg_url):
    return empty_database(pg_url, f"workers_{next(_names)}")


def machine(
    tmp_path, url: str, name: str, *, latency_ms: int = 100, llm: LoopbackOpenAI | None = None, **extra
) -> dict:
    """The environment of one machine: its own READER_HOME, the shared database; its LLM the
    shared loopback server `llm`, or else the scripted LLM at `latency_ms` per call."""
    env = {k: v for k, v in os.environ.items() if not k.startswith("READER_")}
    endpoint = (
        {"READER_LLM_BASE_URL": llm.base_url, "READER_LLM_MODEL": "test-model", "READER_LLM_API_KEY": "k"}
        if llm is not None
        else {"READER_LLM_BASE_URL": f"scripted:latency_ms={latency_ms}"}
    )
    env.update(
        {
            "READER_HOME": str(tmp_path / name),
            "READER_DATABASE_URL": url,
            # after a review the follow-up questions would ask the LLM a dozen more times
            "READER_FOLLOWUP": "off",
            **endpoint,
            "READER_EMBED_MODEL": "hashing",
            "READER_CACHE": "off",
            "PYTHONPATH": str(ROOT),
            **{f"READER_{k.upper()}": str(v) for k, v in extra.items()},
        }
    )
    return env


def run(env, *args, timeout: float = 180) -> subprocess.CompletedProcess:
    return subprocess.run(
        reader_cmd(*args), env=env, capture_output=True, text=True, timeout=timeout, cwd=ROOT
    )


def start(env, *args) -> subprocess.Popen:
    return subprocess.Popen(
        reader_cmd(*args), env=env, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, cwd=ROOT
    )


def query(url: str, sql: str, **params) -> list[tuple]:
    engine = create_engine(url)
    try:
        with engine.connect() as conn:
            return [tuple(row) for row in conn.execute(text(sql), params)]
    finally:
        engine.dispose()


def dry_run_reply(prompt: str) -> str:
    """What the dry-run LLM answers, chosen from the prompt (an HTTP request has no stage)."""
    return answer_verify(prompt) if "<claims>" in prompt else answer_generate(prompt)


@pytest.fixture
def llm_server():
    with LoopbackOpenAI(dry_run_reply, delay_s=0.1) as server:
        yield server


def test_three_workers_review_every_paper_exactly_once(shared, tmp_path, llm_server):
    papers = write_papers(tmp_path / "inbox", 12)
    queued = run(machine(tmp_path, shared, "laptop"), "review", str(tmp_path / "inbox"), "--queue", "--json")
    assert queued.returncode == 0, queued.stderr
    assert json.loads(queued.stdout)["queued"] == 12
    workers = [
        start(
            machine(tmp_path, shared, f"node{i}", llm=llm_server),
            "worker",
            "--until-empty",
            "--poll",
            "0.1",
            "--json",
            "--quiet",
        )
        for i in range(3)
    ]
    reports = []
    for proc in workers:
        out, err = proc.communicate(timeout=240)
        assert proc.returncode == 0, err
        reports.append(json.loads(out))

    assert sum(r["reviewed"] for r in reports) == 12
    assert sum(1 for r in reports if r["reviewed"]) >= 2, [r["reviewed"] for r in reports]
    jobs = query(shared, "SELECT status, attempts, worker FROM review_jobs")
    assert sorted(j[:2] for j in jobs) == [("done", 1)] * 12
    # each paper read once: one first draft of each kind (a call per heading), one analysis of each kind
    drafts = query(
        shared,
        "SELECT paper_id, stage, count(*) FROM llm_calls "
        "WHERE stage IN ('critique', 'synthesis') GROUP BY paper_id, stage",
    )
    assert len(drafts) == 24 and {n for *_, n in drafts} == {6}, drafts
    analyses = query(shared, "SELECT paper_id, count(*) FROM analyses GROUP BY paper_id")
    assert len(analyses) == 12 and {n for _, n in analyses} == {2}
    # the file bytes were the only copy the workers had: their homes hold no paper files
    for i in range(3):
        assert not list((tmp_path / f"node{i}").rglob("*.md"))

    # notes exported on any machine are the same bytes
    notes = {}
    for name in ("laptop", "node2"):
        out = tmp_path / f"notes_{name}"
        done = run(machine(tmp_path, shared, name), "export", "--all", "--out", str(out))
        assert done.returncode == 0, done.stderr
        notes[name] = {p.name: p.read_bytes() for p in sorted(out.iterdir())}
    assert len(notes["laptop"]) == 13 and notes["laptop"] == notes["node2"]
    assert len(papers) == 12


def test_a_worker_killed_mid_paper_loses_it_to_another_after_its_lease(shared, tmp_path):
    """kill -9 while the paper is being read (2 s lease): the second worker takes it over
    when the lease has run out and finishes it; one set of analyses, two attempts."""
    write_papers(tmp_path / "inbox", 1)
    lease = 2.0
    run(machine(tmp_path, shared, "laptop"), "review", str(tmp_path / "inbox"), "--queue")
    doomed = start(
        machine(tmp_path, shared, "node1", latency_ms=1500, queue_lease=lease), "worker", "--quiet"
    )
    deadline = time.monotonic() + 60
    while True:
        assert doomed.poll() is None and time.monotonic() < deadline, doomed.stderr.read()
        rows = query(shared, "SELECT stage FROM review_jobs")
        if rows and rows[0][0] == "read":
            break
        time.sleep(0.05)
    time.sleep(0.5)  # inside its first LLM call
    os.kill(doomed.pid, signal.SIGKILL)
    doomed.wait(10)
    killed_at = time.monotonic()

    heir = start(
        machine(tmp_path, shared, "node2", latency_ms=100, queue_lease=lease),
        "worker",
        "--until-empty",
        "--poll",
        "0.1",
        "--json",
        "--quiet",
    )
    out, err = heir.communicate(timeout=120)
    took = time.monotonic() - killed_at
    assert heir.returncode == 0, err
    report = json.loads(out)
    assert report["reviewed"] == 1, report
    ((status, attempts, worker),) = query(shared, "SELECT status, attempts, worker FROM review_jobs")
    assert (status, attempts) == ("done", 2)
    assert worker == f"{socket.gethostname()}:{heir.pid}"
    ((n_analyses,),) = query(shared, "SELECT count(*) FROM analyses")
    assert n_analyses == 2
    # the lease (2 s) plus one paper's work at 100 ms per call (a few rounds) plus start-up
    assert took < lease + 15, took
    print(f"\nkilled worker's paper finished by the other {took:.1f} s after kill -9 (lease {lease:g} s)")


def test_overlapping_review_queue_runs_queue_each_paper_once(shared, tmp_path):
    papers = write_papers(tmp_path / "inbox", 8)
    env = machine(tmp_path, shared, "laptop")
    run(env, "jobs")  # migrate first: the race is about queueing
    procs = [
        start(env, "review", str(tmp_path / "inbox"), "--queue", "--json"),
        start(machine(tmp_path, shared, "desk"), "review", *map(str, papers[3:]), "--queue", "--json"),
    ]
    results = []
    for proc in procs:
        out, err = proc.communicate(timeout=120)
        assert proc.returncode == 0, err
        results.append(json.loads(out))
    assert sum(r["queued"] for r in results) == 8
    rows = query(shared, "SELECT file_sha256, status FROM review_jobs")
    assert len(rows) == 8 and len({sha for sha, _ in rows}) == 8
    assert {status for _, status in rows} == {"pending"}
    ((files,),) = query(shared, "SELECT count(*) FROM paper_files")
    assert files == 8


def _cpu_seconds(pid: int) -> float:
    with open(f"/proc/{pid}/stat") as fh:
        fields = fh.read().rsplit(")", 1)[1].split()
    return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")


def _wait_until_idle(procs: list[subprocess.Popen], deadline: float, window_s: float = 0.5) -> None:
    """Until every worker uses under a fifth of a core over `window_s`: warmed up (the LLM
    client, the index, the stages' modules loaded) and polling the empty queue."""
    while True:
        assert time.monotonic() < deadline and all(p.poll() is None for p in procs)
        before = [_cpu_seconds(p.pid) for p in procs]
        time.sleep(window_s)
        used = [_cpu_seconds(p.pid) - b for p, b in zip(procs, before)]
        if max(used) < window_s / 5:
            return


def throughput(tmp_path, url: str, workers: int, n_papers: int, llm: LoopbackOpenAI) -> float:
    """Papers per minute from the first claim to the last finish. The workers are started,
    connected and warmed up before anything is queued, and paused while it is, so neither
    their start-up nor the queueing is counted."""
    database = url.rsplit("/", 1)[1]
    assert run(machine(tmp_path, url, "laptop"), "jobs").returncode == 0  # migrated before
    procs = [
        start(machine(tmp_path, url, f"w{workers}_{i}", llm=llm), "worker", "--poll", "0.05", "--quiet")
        for i in range(workers)
    ]
    try:
        deadline = time.monotonic() + 60
        while (
            query(
                url,
                "SELECT count(*) FROM pg_stat_activity WHERE datname = :d AND pid <> pg_backend_pid()",
                d=database,
            )[0][0]
            < workers
        ):
            assert time.monotonic() < deadline and all(p.poll() is None for p in procs)
            time.sleep(0.1)
        _wait_until_idle(procs, deadline)
        write_papers(tmp_path / f"inbox_{workers}", n_papers, start=100 * workers)
        for proc in procs:  # paused while the papers are queued: all start from a full queue
            proc.send_signal(signal.SIGSTOP)
        queued = run(
            machine(tmp_path, url, "laptop"),
            "review",
            str(tmp_path / f"inbox_{workers}"),
            "--queue",
            timeout=60,
        )
        for proc in procs:
            proc.send_signal(signal.SIGCONT)
        assert queued.returncode == 0, queued.stderr
        engine = create_engine(url)  # one connection, looked at 4 times a second: the
        try:  # test's own load stays out of the figures
            with engine.connect() as conn:
                while (
                    conn.execute(text("SELECT count(*) FROM review_jobs WHERE status = 'done'")).scalar()
                    < n_papers
                ):
                    conn.rollback()
                    assert time.monotonic() < deadline + 240 and all(p.poll() is None for p in procs)
                    time.sleep(0.25)
        finally:
            engine.dispose()
    finally:
        for proc in procs:
            proc.send_signal(signal.SIGTERM)  # drain: nothing in hand, so it exits at once
        for proc in procs:
            proc.communicate(timeout=60)
    assert [p.returncode for p in procs] == [0] * workers
    ((first, last, done),) = query(
        url,
        "SELECT min(started_at), max(finished_at), count(*) FROM review_jobs "
        "WHERE status = 'done' AND attempts = 1",
    )
    assert done == n_papers
    spans = query(
        url,
        "SELECT worker, count(*), sum(extract(epoch FROM finished_at - started_at)), "
        "min(started_at), max(finished_at) FROM review_jobs GROUP BY worker",
    )
    for worker, count, busy, a, b in spans:
        print(f"  {worker}: {count} papers, {float(busy):.1f} s busy, span {(b - a).total_seconds():.1f} s")
    return n_papers / (last - first).total_seconds() * 60


def test_three_workers_read_their_papers_at_the_same_time(pg_url, tmp_path):
    """Three papers queued while three warmed-up workers wait: the workers' papers overlap in
    time. By how much one worker's rate is beaten is measured by benchmarks/bench_workers.py, out
    of the suite (a timed assertion fails whenever the machine is shared)."""
    with LoopbackOpenAI(dry_run_reply, delay_s=0.5) as llm:
        url = empty_database(pg_url, f"overlap_{next(_names)}")
        throughput(tmp_path, url, 3, 3, llm)
    spans = query(url, "SELECT worker, started_at, finished_at FROM review_jobs WHERE status = 'done'")
    overlapping = [
        (a, b) for a, b in itertools.combinations(spans, 2) if a[0] != b[0] and a[1] < b[2] and b[1] < a[2]
    ]
    assert overlapping, spans


def _wait_for_read(url: str, proc: subprocess.Popen) -> None:
    deadline = time.monotonic() + 60
    while "read" not in {stage for (stage,) in query(url, "SELECT stage FROM review_jobs")}:
        assert proc.poll() is None and time.monotonic() < deadline, proc.stderr.read()
        time.sleep(0.05)


def _wait_for_notice(proc: subprocess.Popen, words: str, timeout_s: float = 60) -> None:
    """Until the process has written `words` to its stderr (read straight from the pipe, so
    nothing is left buffered for communicate): the signal before has been handled."""
    deadline = time.monotonic() + timeout_s
    fd, seen = proc.stderr.fileno(), b""
    while words.encode() not in seen:
        left = deadline - time.monotonic()
        assert left > 0 and select.select([fd], [], [], left)[0], seen
        chunk = os.read(fd, 4096)
        assert chunk, seen  # the process ended first
        seen += chunk


def test_ctrl_c_finishes_the_paper_in_hand_and_twice_hands_it_back(shared, tmp_path):
    write_papers(tmp_path / "inbox", 2)
    run(machine(tmp_path, shared, "laptop"), "review", str(tmp_path / "inbox"), "--queue")
    env = machine(tmp_path, shared, "node1", latency_ms=800)

    once = start(env, "worker", "--quiet", "--json")
    _wait_for_read(shared, once)
    once.send_signal(signal.SIGINT)  # finish this paper, take no other
    out, err = once.communicate(timeout=60)
    assert once.returncode == 0, err
    assert json.loads(out)["reviewed"] == 1 and "press Ctrl-C again" in err, (out, err)
    assert sorted(query(shared, "SELECT status, attempts FROM review_jobs")) == [("done", 1), ("pending", 0)]

    twice = start(env, "worker", "--quiet", "--json")
    _wait_for_read(shared, twice)
    twice.send_signal(signal.SIGINT)
    _wait_for_notice(twice, "press Ctrl-C again")  # two signals at once would count as one
    twice.send_signal(signal.SIGINT)  # hand it back now, while the notice is still being answered
    out, err = twice.communicate(timeout=60)
    assert twice.returncode == 130, err
    assert len(json.loads(out)["handed_back"]) == 1
    assert sorted(query(shared, "SELECT status, attempts, claim FROM review_jobs")) == [
        ("done", 1, None),
        ("pending", 0, None),
    ]
    ((n_analyses,),) = query(shared, "SELECT count(*) FROM analyses")
    assert n_analyses == 2  # the handed-back paper committed nothing


def test_a_database_restart_under_until_empty_is_waited_out_and_the_queue_finished(
    pg_cluster,
    tmp_path,
):
    """PostgreSQL stopped for 2 s while the worker reads: it reconnects with back-off,
    every queued paper is reviewed, nothing is left running, no traceback, exit 0."""
    url = empty_database(pg_cluster.url, f"restart_{next(_names)}")
    write_papers(tmp_path / "inbox", 6)
    queued = run(machine(tmp_path, url, "laptop"), "review", str(tmp_path / "inbox"), "--queue")
    assert queued.returncode == 0, queued.stderr
    worker = start(
        machine(tmp_path, url, "node1", latency_ms=150), "worker", "--until-empty", "--poll", "0.1", "--json"
    )
    deadline = time.monotonic() + 90
    while not query(url, "SELECT id FROM review_jobs WHERE status = 'done'"):
        assert worker.poll() is None and time.monotonic() < deadline, worker.stderr.read()
        time.sleep(0.05)
    pg_cluster.stop()
    time.sleep(2)
    pg_cluster.start()
    out, err = worker.communicate(timeout=240)
    assert "Traceback" not in err, err
    assert worker.returncode == 0, err
    assert "database" in err  # the wait was said, in a line
    jobs = query(url, "SELECT status, claim FROM review_jobs")
    assert sorted(jobs) == [("done", None)] * 6, jobs
    analyses = query(url, "SELECT paper_id, count(*) FROM analyses GROUP BY paper_id")
    assert len(analyses) == 6 and {n for _, n in analyses} == {2}
    report = json.loads(out)
    assert report["reviewed"] + report["retrying"] >= 6 and report["failed"] == 0, report


def test_a_database_that_stays_away_ends_the_worker_with_work_left_and_exit_1(
    pg_cluster,
    tmp_path,
):
    """Down for longer than READER_DATABASE_PATIENCE: one line saying the database is away and
    how many papers are left, exit 1; the queue is finished by the next worker."""
    url = empty_database(pg_cluster.url, f"away_{next(_names)}")
    write_papers(tmp_path / "inbox", 3)
    assert run(machine(tmp_path, url, "laptop"), "review", str(tmp_path / "inbox"), "--queue").returncode == 0
    # a short lease: the paper in hand when the worker gave up stays claimed until it runs out,
    # and the next worker takes it over then (at the default 60 s the test waited most of that)
    env = machine(tmp_path, url, "node1", latency_ms=150, database_patience=2, queue_lease=5)
    worker = start(env, "worker", "--until-empty", "--poll", "0.1", "--quiet")
    deadline = time.monotonic() + 90
    while not query(url, "SELECT id FROM review_jobs WHERE status = 'done'"):
        assert worker.poll() is None and time.monotonic() < deadline, worker.stderr.read()
        time.sleep(0.05)
    pg_cluster.stop()
    try:
        out, err = worker.communicate(timeout=120)
    finally:
        pg_cluster.start()
    assert "Traceback" not in err, err
    assert worker.returncode == 1, err
    assert "database" in err and "left" in err, err
    again = run(env, "worker", "--until-empty", "--poll", "0.1", "--quiet")
    assert again.returncode == 0, again.stderr
    assert sorted(query(url, "SELECT status FROM review_jobs")) == [("done",)] * 3


# ---------------------------------------------------------------- waiting for the database (no server)


def _db_error(driver_error: Exception, cls=None):
    from sqlalchemy.exc import OperationalError

    return (cls or OperationalError)("SELECT 1", {}, driver_error)


class _Clock:
    def __init__(self):
        self.now, self.slept = 0.0, []

    def sleep(self, seconds: float) -> None:
        self.slept.append(seconds)
        self.now += seconds


def test_database_away_tells_a_restart_from_a_wrong_statement():
    import sqlite3

    import psycopg
    import psycopg.errors
    from sqlalchemy.exc import IntegrityError

    from reader.store.db import database_away

    assert database_away(_db_error(psycopg.OperationalError("connection refused")))
    assert database_away(_db_error(psycopg.errors.AdminShutdown("terminating connection")))
    assert not database_away(_db_error(psycopg.errors.DiskFull("no space left")))
    assert not database_away(_db_error(psycopg.errors.UniqueViolation("duplicate key"), IntegrityError))
    assert not database_away(_db_error(sqlite3.OperationalError("no such table: papers")))
    assert not database_away(ValueError("not a database error"))


def test_while_away_backs_off_until_the_database_answers():
    import psycopg

    from reader.store.db import while_away

    clock, waits = _Clock(), []
    replies = iter([_db_error(psycopg.OperationalError("refused"))] * 5 + ["claimed"])

    def action():
        reply = next(replies)
        if isinstance(reply, Exception):
            raise reply
        return reply

    result = while_away(
        action,
        patience_s=60,
        on_wait=lambda exc, delay: waits.append(delay),
        sleep=clock.sleep,
        clock=lambda: clock.now,
    )
    assert result == "claimed"
    assert clock.slept == waits == [0.5, 1, 2, 4, 8]


def test_while_away_gives_up_after_its_patience_and_never_waits_on_other_errors():
    import sqlite3

    import psycopg
    import pytest
    from sqlalchemy.exc import OperationalError

    from reader.store.db import while_away

    clock = _Clock()
    away = _db_error(psycopg.OperationalError("refused"))

    def always_away():
        raise away

    with pytest.raises(OperationalError) as raised:
        while_away(always_away, patience_s=30, sleep=clock.sleep, clock=lambda: clock.now)
    assert raised.value is away
    assert clock.slept == [0.5, 1, 2, 4, 8, 10, 4.5] and clock.now == 30  # capped at 10 s, then the rest

    clock = _Clock()
    wrong = _db_error(sqlite3.OperationalError("no such table: review_jobs"))

    def no_table():
        raise wrong

    with pytest.raises(OperationalError) as raised:
        while_away(no_table, patience_s=30, sleep=clock.sleep, clock=lambda: clock.now)
    assert raised.value is wrong and clock.slept == []
