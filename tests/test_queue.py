"""The review queue (reader/queue.py) on a real database: claims, leases, fencing, retries,
PDF bytes and passage vectors in the database. PostgreSQL tests use a throwaway cluster
(conftest's pg_url); each test gets its own empty database."""

from __future__ import annotations

import itertools
import shutil
import threading
import time
from datetime import timedelta

import pytest
from conftest import SAMPLE_PAPER
from postgres_cluster import empty_database
from sqlalchemy import func, select, update
from sqlalchemy.exc import IntegrityError

from reader import queue
from reader.config import load_settings
from reader.facade import Reader
from reader.index.dense import HashingEmbedder
from reader.store.db import open_database, transaction
from reader.store.tables import Analysis, Chunk, ChunkVector, Paper, PaperFile, ReviewJob

_names = itertools.count()


class CountingEmbedder(HashingEmbedder):
    """The hashing embedder, counting the texts it embeds."""

    def __init__(self):
        super().__init__()
        self.texts = 0
        self.seen: list[str] = []

    def encode(self, texts):
        self.texts += len(texts)
        self.seen += texts
        return super().encode(texts)


@pytest.fixture(params=["sqlite", "postgresql"])
def url(request, tmp_path):
    if request.param == "sqlite":
        return f"sqlite:///{tmp_path / 'shared.db'}"
    return empty_database(request.getfixturevalue("pg_url"), f"queue_{next(_names)}")


@pytest.fixture
def pg(pg_url):
    return empty_database(pg_url, f"queue_{next(_names)}")


def make_reader(home, url, **env) -> Reader:
    settings = load_settings(
        {
            "READER_HOME": str(home),
            "READER_DATABASE_URL": url,
            "READER_LLM_BASE_URL": "scripted:",
            "READER_EMBED_MODEL": "hashing",
            **{f"READER_{k.upper()}": str(v) for k, v in env.items()},
        }
    )
    return Reader(settings, embedder=CountingEmbedder())


def write_papers(folder, n: int, start: int = 0) -> list:
    folder.mkdir(parents=True, exist_ok=True)
    paths = []
    for i in range(start, start + n):
        path = folder / f"paper_{i:02d}.md"
        path.write_text(
            f"# Ranking study {i}\n\n## Introduction\n\nWe study passage ranking "
            f"variant {i}. Our method improves recall from {50 + i}.5% to "
            f"{60 + i}.2% on the benchmark.\n\n## Results\n\nThe gain is largest "
            f"for paraphrased queries in setting {i}.\n"
        )
        paths.append(path)
    return paths


def queue_rows(db, sha: str | None = None) -> list[ReviewJob]:
    with db() as s:
        query = select(ReviewJob).where(ReviewJob.queued_at.is_not(None)).order_by(ReviewJob.id)
        if sha:
            query = query.where(ReviewJob.file_sha256 == sha)
        return list(s.scalars(query))


def expire(db, job_id: int) -> None:
    with transaction(db) as s:
        s.execute(
            update(ReviewJob)
            .where(ReviewJob.id == job_id)
            .values(lease_until=queue.db_now(s) - timedelta(seconds=1))
        )


# ---------------------------------------------------------------- claims and leases


def test_claims_give_each_job_to_one_worker_and_a_lost_lease_commits_nothing(url, tmp_path):
    reader = make_reader(tmp_path / "home", url)
    reader.queue.enqueue(write_papers(tmp_path / "papers", 2))
    db = reader.services.db
    first = queue.claim_next(db, "host-a:1", lease_s=30)
    second = queue.claim_next(db, "host-b:2", lease_s=30)
    assert first.job_id != second.job_id
    assert queue.claim_next(db, "host-c:3", lease_s=30) is None  # both held, leases running

    # host-a stalls; its lease runs out and host-c takes the job over
    expire(db, first.job_id)
    taken = queue.claim_next(db, "host-c:3", lease_s=30)
    assert (taken.job_id, taken.attempt) == (first.job_id, 2)
    # everything host-a still tries to commit is refused, with the job row checked in the commit
    fenced = queue.fenced(db, first)
    with pytest.raises(queue.LeaseLost, match="host-c:3 took the paper over"):
        with transaction(fenced) as s:
            s.add(
                Paper(
                    id="f" * 64, title="written by a stale worker", source_path="x", source_kind="md", pages=1
                )
            )
    with db() as s:
        assert s.get(Paper, "f" * 64) is None
    with pytest.raises(queue.LeaseLost):
        queue.finish(db, first, lambda session, job: {})
    assert queue.fail(db, first, "late failure") == "lost"
    summary = queue.finish(db, taken, lambda session, job: {"by": "host-c"})
    assert summary == {"by": "host-c"}
    (done,) = [j for j in queue_rows(db) if j.id == first.job_id]
    assert (done.status, done.worker, done.attempts, done.claim) == ("done", "host-c:3", 2, None)


def test_the_heartbeat_renews_leases_and_notices_a_takeover(url, tmp_path):
    reader = make_reader(tmp_path / "home", url)
    reader.queue.enqueue(write_papers(tmp_path / "papers", 1))
    db = reader.services.db
    claim = queue.claim_next(db, "me:1", lease_s=0.6)
    heartbeat = queue.Heartbeat(db, lease_s=0.6)
    heartbeat.hold(claim)
    try:
        (job,) = queue_rows(db)
        first_lease = job.lease_until
        time.sleep(1.5)  # well past the lease: only the heartbeat keeps it
        assert queue.claim_next(db, "other:2", lease_s=0.6) is None
        (job,) = queue_rows(db)
        assert job.lease_until > first_lease and job.status == "running"
        # a stall longer than the lease (simulated): another worker takes it, the beat notices
        heartbeat.release(claim)
        time.sleep(0.8)
        taken = queue.claim_next(db, "other:2", lease_s=30)
        assert taken is not None
        heartbeat.hold(claim)
        assert claim.lost.wait(3)
    finally:
        heartbeat.stop()


def test_a_failing_paper_is_retried_then_marked_failed_with_its_error(url, tmp_path):
    """A corrupt PDF on the queue: READER_QUEUE_ATTEMPTS=2 tries, then failed with the reason."""
    folder = tmp_path / "papers"
    folder.mkdir()
    (folder / "broken.pdf").write_bytes(b"%PDF-1.7\nthis file was cut off in transfer")
    reader = make_reader(tmp_path / "home", url, queue_attempts=2)
    reader.queue.enqueue([folder])
    report = reader.queue.work(until_empty=True, poll_s=0.05)
    assert [p.status for p in report.papers] == ["retry", "error"]
    (job,) = queue_rows(reader.services.db)
    assert (job.status, job.attempts) == ("error", 2)
    assert "PDF" in job.error and "attempt" not in job.error, job.error
    rows = reader.queue.jobs().to_json()["jobs"]
    assert [(r["status"], r["attempts"]) for r in rows] == [("failed", 2)]
    # queued again by hand: a fresh set of attempts
    assert reader.queue.enqueue([folder]).rows[0].status == "requeued"


def test_a_job_whose_workers_keep_dying_is_marked_failed(url, tmp_path):
    reader = make_reader(tmp_path / "home", url)
    reader.queue.enqueue(write_papers(tmp_path / "papers", 1))
    db = reader.services.db
    for attempt in range(1, 4):
        claim = queue.claim_next(db, f"doomed:{attempt}", lease_s=30, max_attempts=3)
        assert claim.attempt == attempt
        expire(db, claim.job_id)  # killed: no heartbeat, the lease runs out
    assert queue.claim_next(db, "next:9", lease_s=30, max_attempts=3) is None
    (job,) = queue_rows(db)
    assert job.status == "error" and "abandoned 3 times" in job.error and "doomed:3" in job.error


def test_ctrl_c_twice_hands_the_paper_back_uncounted(url, tmp_path):
    reader = make_reader(tmp_path / "home", url)
    reader.queue.enqueue(write_papers(tmp_path / "papers", 1))
    db = reader.services.db
    claim = queue.claim_next(db, "me:1", lease_s=30)
    assert queue.hand_back(db, claim)
    (job,) = queue_rows(db)
    assert (job.status, job.attempts, job.claim) == ("pending", 0, None)
    with pytest.raises(queue.LeaseLost):
        queue.update_job(db, claim, stage="read")


def test_overlapping_enqueues_queue_each_file_once(url, tmp_path):
    """Two threads queue overlapping folders at once; the same bytes under another name too."""
    papers = write_papers(tmp_path / "papers", 6)
    shutil.copy(papers[0], tmp_path / "papers" / "copy_of_0.md")
    reader = make_reader(tmp_path / "home", url)
    assert reader.services.db is not None  # migrated once before the race
    results = []

    def enqueue(paths):
        results.append(make_reader(tmp_path / "home", url).queue.enqueue(paths))

    threads = [
        threading.Thread(target=enqueue, args=([tmp_path / "papers"],)),
        threading.Thread(target=enqueue, args=(papers[2:],)),
    ]
    for t in threads:
        t.start()
    for t in threads:
        t.join(60)
    jobs = queue_rows(reader.services.db)
    assert len(jobs) == 6 and len({j.file_sha256 for j in jobs}) == 6
    queued = sum(r.to_json()["queued"] for r in results)
    assert queued == 6, [r.to_json() for r in results]
    with reader.services.db() as s:
        assert s.scalar(select(func.count()).select_from(PaperFile)) == 6
        # one queued job per file, by the schema
        with pytest.raises(IntegrityError):
            with transaction(reader.services.db) as t:
                t.add(ReviewJob(source_path="again", file_sha256=jobs[0].file_sha256))


def test_one_critique_per_paper_by_the_schema(url, tmp_path):
    reader = make_reader(tmp_path / "home", url)
    with transaction(reader.services.db) as s:
        s.add(Paper(id="a" * 64, title="A", source_path="a", source_kind="md", pages=1))
    with transaction(reader.services.db) as s:
        s.add(Analysis(paper_id="a" * 64, kind="critique", final_text="one"))
    with pytest.raises(IntegrityError):
        with transaction(reader.services.db) as s:
            s.add(Analysis(paper_id="a" * 64, kind="critique", final_text="two"))


# ---------------------------------------------------------------- nothing tied to one machine


def test_a_worker_on_a_fresh_home_reads_a_paper_queued_elsewhere(pg, tmp_path):
    """Queued from machine A, whose file is then gone; a worker with an empty READER_HOME
    ingests it from the bytes in the database; a third machine searches it without
    embedding a single passage (the vectors are in the database)."""
    pdf = tmp_path / "inbox" / "paper.pdf"
    pdf.parent.mkdir()
    shutil.copy(SAMPLE_PAPER, pdf)
    queued = make_reader(tmp_path / "machine_a", pg).queue.enqueue([pdf])
    assert [r.status for r in queued.rows] == ["queued"]
    pdf.unlink()

    worker = make_reader(tmp_path / "machine_b", pg)
    report = worker.queue.work(once=True)
    assert [(p.status, p.error) for p in report.papers] == [("reviewed", "")]
    paper_id = report.papers[0].paper_id
    with worker.services.db() as s:
        paper = s.get(Paper, paper_id)
        assert paper.source_path == str(pdf)  # the label it was queued under
        n_chunks = len(paper.chunks)
        assert s.scalar(select(func.count()).select_from(ChunkVector)) == n_chunks
        assert {a.kind for a in s.scalars(select(Analysis))} == {"critique", "synthesis"}
    assert worker.services._embedder.texts >= n_chunks  # machine B embedded the passages once

    reader_c = make_reader(tmp_path / "machine_c", pg)
    hits = reader_c.search("reading order two-column pages").hits
    assert hits and hits[0].paper_id == paper_id
    assert reader_c.services._embedder.texts == 1  # the query only
    assert (tmp_path / "machine_c" / "index" / "CURRENT").is_file()  # the on-disk cache

    # a worker whose index was loaded before another machine ingested a paper still finds it
    other = write_papers(tmp_path / "more", 1)
    make_reader(tmp_path / "machine_a", pg).ingest(other)
    reader_c.queue.enqueue(other)
    assert [p.status for p in reader_c.queue.work(once=True).papers] == ["reviewed"]
    with reader_c.services.db() as s:  # queries only (the audit's, the checklist's), no passage
        passages = {c.text for c in s.scalars(select(Chunk))}
    assert passages and not passages & set(reader_c.services._embedder.seen)


def test_a_takeover_after_the_analyses_were_stored_finishes_without_reading_again(pg, tmp_path):
    reader = make_reader(tmp_path / "home", pg)
    reader.queue.enqueue(write_papers(tmp_path / "papers", 1))
    first = reader.queue.work(once=True)
    assert first.papers[0].status == "reviewed"
    db = reader.services.db
    # as if the worker had been killed right after deep_read committed
    with transaction(db) as s:
        job = s.scalars(select(ReviewJob)).one()
        job.status, job.claim, job.worker = "running", "dead", "gone:1"
        job.lease_until = queue.db_now(s) - timedelta(seconds=1)
        job.summary = {**job.summary, "read_since": "2000-01-01T00:00:00+00:00"}
    calls_before = reader.stats().total.calls
    again = reader.queue.work(once=True)
    assert [(p.status, p.error) for p in again.papers] == [("reviewed", "finished by an earlier attempt")]
    assert reader.stats().total.calls == calls_before


def test_a_0004_database_keeps_its_newest_analysis_of_each_kind(url, tmp_path):
    """Migration 0005 on SQLite and PostgreSQL: duplicate analyses left by older races are
    reduced to the newest of each kind before the unique constraint; old jobs get no lease."""
    from alembic import command
    from sqlalchemy import create_engine, text

    from reader.store.db import alembic_config

    command.upgrade(alembic_config(url), "0004")
    engine = create_engine(url)
    with engine.begin() as conn:
        conn.execute(
            text(
                "INSERT INTO papers (id, title, authors, abstract, source_path, source_kind, "
                "language, pages, text_chars, sections, ingested_at) VALUES "
                "(:id, 'A', '[]', '', 'a.pdf', 'pdf', 'en', 1, 0, '[]', :now)"
            ),
            {"id": "a" * 64, "now": "2026-01-01 00:00:00"},
        )
        for final in ("old critique", "new critique", "only synthesis"):
            kind = "synthesis" if "synthesis" in final else "critique"
            conn.execute(
                text(
                    "INSERT INTO analyses (paper_id, kind, final_text, flagged_ratio, "
                    "regenerations, generator_model, verifier_model, left_out_sections, "
                    "created_at) VALUES (:p, :k, :t, 0, 0, '', '', '[]', :now)"
                ),
                {"p": "a" * 64, "k": kind, "t": final, "now": "2026-01-01 00:00:00"},
            )
        conn.execute(
            text(
                "INSERT INTO review_jobs (source_path, paper_id, status, stage, error, "
                "summary) VALUES ('a.pdf', :p, 'done', 'done', '', '{}')"
            ),
            {"p": "a" * 64},
        )
    engine.dispose()
    db = open_database(url)
    with db() as s:
        assert sorted(s.scalars(select(Analysis.final_text))) == ["new critique", "only synthesis"]
        job = s.scalars(select(ReviewJob)).one()
        assert (job.attempts, job.worker, job.lease_until, job.queued_at) == (0, "", None, None)


def test_a_review_on_another_host_is_busy_while_its_lease_runs(url, tmp_path):
    """One-machine `reader review` runs on two hosts sharing a database: the other host's job
    is left alone while its lease runs, and redone once it ran out (it used to be redone at once)."""
    from test_review import FakeWorld, make_files

    from reader.review import WorkerStages, file_sha256, run_review

    a, b = make_files(tmp_path / "papers", ["a.pdf", "b.pdf"])
    db = open_database(url)
    world = FakeWorld(db)
    world.ingest(a)
    world.ingest(b)
    with transaction(db) as s:
        now = queue.db_now(s)
        for path, lease in ((a, now + timedelta(seconds=60)), (b, now - timedelta(seconds=1))):
            s.add(
                ReviewJob(
                    source_path=str(path),
                    paper_id=file_sha256(path),
                    status="running",
                    stage="read",
                    worker="other-host:77",
                    claim="theirs",
                    lease_until=lease,
                    summary={"pid": 77, "host": "other-host", "run": "x"},
                )
            )
    here = FakeWorld(db)
    report = run_review([a, b], WorkerStages(db, here.ingest_data, here.read_paper))
    assert [(p.status, p.error) for p in report.papers] == [
        ("busy", "being reviewed by other-host:77"),
        ("reviewed", ""),
    ]
    assert here.read == ["b"]
