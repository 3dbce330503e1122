"""Batch review of a collection on one machine: ingest, deep read and audit every paper, resumably.

The `review_jobs` table is the run's memory. One row per paper (or, for a file
that never became a paper, per source path):

    pending ──claim──▶ running ──finish──▶ done
                          ├──────fail────▶ error      (retried by the next run)
                          └───`reader rm`──▶ (row deleted with its paper: reported "removed")

Several runs may work on one database at once (two `reader review` of one folder,
web uploads, runs on other machines sharing PostgreSQL): a run plans each job and
claims it in transactions locked on the paper (reader.store.db.transaction with a
lock), and claiming (reader.queue.claim_job) is a conditional UPDATE pending → running
with a lease that the run's heartbeat renews, so one run only reads a paper; another
finds the job claimed and reports it "busy".

A row found "running" at start belongs to a live run, or to a run that was killed:
on this machine its process tells, on another its lease (reader.queue.holder_alive).
Reconciling a killed run's row means: new analyses present → finish it without
redoing anything; absent → redo it.

The stages are injected (`ingest(path)`, `read_paper(paper_id, on_progress)`),
so the runner is tested without PDFs or LLMs; reader.facade.Reader.review passes
the real ones.
"""

from __future__ import annotations

import socket
import threading
import time
import uuid
from collections.abc import Callable
from concurrent.futures import ThreadPoolExecutor, wait
from dataclasses import dataclass, field
from pathlib import Path

from sqlalchemy.orm import Session, sessionmaker

from reader import queue
from reader.review.records import (
    REMOVED,
    IngestFn,
    PaperFailed,
    PaperRemoved,
    PaperReview,
    ProgressEvent,
    ReadFn,
    ReviewReport,
    check_stored,
    completion,
    fill,
    find_job,
    is_reviewed,
    job_exists,
    mark_done,
    reason_of,
    record_failure,
    review_figures,
    since_of,
    start_read,
)
from reader.store.db import transaction
from reader.store.tables import Paper, ReviewJob, utcnow
from reader.text.digest import file_sha256
from reader.text.paths import stored_path


@dataclass
class _Planned:
    index: int
    source: Path
    sha256: str | None
    job_id: int | None = None
    outcome: PaperReview = field(default_factory=lambda: PaperReview(source=""))

    @property
    def lock(self) -> str:
        """What the transactions that plan and claim this paper's job lock on."""
        return f"reader:review:{self.sha256 or self.source}"


# ---------------------------------------------------------------- the runner


class _Clock:
    """Elapsed time and a running ETA from the papers finished so far."""

    def __init__(self, total: int):
        self.start = time.perf_counter()
        self.total = total
        self.finished = 0
        self.lock = threading.Lock()

    def elapsed(self) -> float:
        return time.perf_counter() - self.start

    def eta(self) -> float | None:
        with self.lock:
            if not self.finished:
                return None
            return self.elapsed() / self.finished * (self.total - self.finished)

    def one_finished(self) -> None:
        with self.lock:
            self.finished += 1


def run_review(
    sources: list[Path],
    *,
    db: sessionmaker,
    ingest: IngestFn,
    read_paper: ReadFn,
    force: bool = False,
    max_papers: int = 2,
    on_event: Callable[[ProgressEvent], None] | None = None,
    stop: threading.Event | None = None,
    lease_s: float = queue.LEASE_S,
) -> ReviewReport:
    """Review every source file; failures are recorded per paper and never stop the batch.

    `ingest` is serialized (PDF parsing and index writes are not thread-safe);
    up to `max_papers` deep reads run at once, each bounded further by the LLM's
    own concurrency limit. Setting `stop` lets running papers finish their
    current stage's bookkeeping and skips the rest. The jobs this run holds keep
    their leases renewed (reader.queue.Heartbeat), so a run on another machine sharing
    the database sees them held.
    """
    started = time.perf_counter()
    run = uuid.uuid4().hex
    queue.live_runs.add(run)
    heartbeat = queue.Heartbeat(db, lease_s)
    try:
        return _run(sources, run, db=db, ingest=ingest, read_paper=read_paper, force=force,
                    max_papers=max_papers, on_event=on_event, stop=stop, started=started,
                    heartbeat=heartbeat)
    finally:
        heartbeat.stop()
        queue.live_runs.discard(run)


def _run(sources, run, *, db, ingest, read_paper, force, max_papers, on_event, stop, started,
         heartbeat):
    plan, duplicates = _plan(db, sources, force)
    todo = [p for p in plan if p.outcome.status == "pending"]
    clock = _Clock(len(todo))
    ingest_lock = threading.Lock()
    stop = stop or threading.Event()

    def emit(item: _Planned, stage: str, detail: str = "") -> None:
        if on_event is not None:
            on_event(ProgressEvent(
                index=item.index, total=len(todo), source=str(item.source), stage=stage,
                elapsed_s=clock.elapsed(), eta_s=clock.eta(), detail=detail,
            ))

    for position, item in enumerate(todo, start=1):
        item.index = position

    def work(item: _Planned) -> None:
        if stop.is_set():
            item.outcome.status, item.outcome.error = "error", "interrupted before it started"
            return
        try:
            _review_one(item, run, db=db, ingest=ingest, read_paper=read_paper,
                        ingest_lock=ingest_lock, emit=emit, heartbeat=heartbeat)
        finally:
            clock.one_finished()
            emit(item, item.outcome.status, item.outcome.error)

    if todo:
        pool = ThreadPoolExecutor(max_workers=max(1, max_papers), thread_name_prefix="review")
        futures = [pool.submit(work, item) for item in todo]
        try:
            # Short waits keep the main thread responsive to Ctrl-C.
            while not all(f.done() for f in futures):
                wait(futures, timeout=0.2)
        except BaseException:
            stop.set()
            pool.shutdown(wait=False, cancel_futures=True)
            raise
        pool.shutdown()
        for future in futures:
            future.result()
    return ReviewReport(
        papers=[p.outcome for p in plan] + duplicates,
        seconds=time.perf_counter() - started,
    )


def _plan(db: sessionmaker, sources: list[Path], force: bool) -> tuple[list[_Planned], list[PaperReview]]:
    """One job per distinct paper: reconcile killed runs, skip finished work, queue the rest."""
    plan: list[_Planned] = []
    duplicates: list[PaperReview] = []
    seen: dict[str, Path] = {}
    for source in sources:
        source = Path(source)
        try:
            sha = file_sha256(source)
        except OSError as exc:
            sha = None
            unreadable = f"cannot read it ({exc.strerror or exc})"
        else:
            unreadable = ""
        if sha and sha in seen:
            duplicates.append(PaperReview(
                source=str(source), paper_id=sha, status="skipped",
                error=f"same content as {seen[sha]}",
            ))
            continue
        if sha:
            seen[sha] = source
        item = _Planned(index=0, source=source, sha256=sha)
        item.outcome = PaperReview(source=str(source), paper_id=sha)
        # Locked: another run planning or claiming this paper now waits, so what this
        # one reads of the job is what it overwrites.
        with transaction(db, lock=item.lock) as session:
            _plan_one(session, item, force)
            if unreadable and item.outcome.status == "pending":
                item.outcome.status, item.outcome.error = "error", unreadable
                job = session.get(ReviewJob, item.job_id)
                job.status, job.error, job.finished_at = "error", unreadable, utcnow()
        plan.append(item)
    return plan, duplicates


def _busy(job: ReviewJob) -> str:
    pid = (job.summary or {}).get("pid")
    if (job.summary or {}).get("host") == socket.gethostname() and pid:
        return f"being reviewed by another run (pid {pid})"
    return f"being reviewed by {job.worker or 'another run'}"


def _plan_one(session: Session, item: _Planned, force: bool) -> None:
    outcome = item.outcome
    paper = session.get(Paper, item.sha256) if item.sha256 else None
    job = find_job(session, item.source, item.sha256)
    if job is not None and job.paper_id is None and paper is not None:
        job.paper_id = paper.id
    if paper is not None:
        outcome.title = paper.title

    if job is not None and job.status == "running":
        if queue.holder_alive(session, job):
            outcome.status, outcome.error = "busy", _busy(job)
            item.job_id = job.id
            return
        since = since_of(job)
        if paper is not None and since is not None and not force and is_reviewed(session, paper.id, since):
            # Killed after deep_read committed but before the job was marked done.
            item.job_id = job.id
            summary = mark_done(session, job, paper.id)
            fill(outcome, summary, "reviewed")
            outcome.error = "finished by an interrupted run"
            return

    if not force and paper is not None and is_reviewed(session, paper.id):
        if job is None:
            job = ReviewJob(source_path=stored_path(item.source), paper_id=paper.id,
                            started_at=utcnow(), finished_at=utcnow())
            session.add(job)
        if job.status != "done" or not job.summary:
            job.status, job.stage, job.error = "done", "done", ""
            job.summary = review_figures(session, paper.id)
        elif "unchecked" not in job.summary:  # a summary written before these counts existed
            figures = review_figures(session, paper.id)
            job.summary = {**job.summary, "unchecked": figures["unchecked"],
                           "unanswered": figures["unanswered"]}
        session.flush()
        item.job_id = job.id
        fill(outcome, job.summary, "skipped")
        outcome.llm_calls = outcome.cached_calls = 0
        outcome.seconds = 0.0
        return

    if job is None:
        job = ReviewJob(source_path=stored_path(item.source), paper_id=paper.id if paper else None)
        session.add(job)
    job.status, job.stage, job.error = "pending", "", ""
    job.source_path = stored_path(item.source)
    job.summary, job.started_at, job.finished_at = {}, None, None
    session.flush()
    item.job_id = job.id


def _claim(db: sessionmaker, item: _Planned, run: str, lease_s: float) -> queue.Claim | None:
    """Claim the job if it is still pending -> the claim; otherwise None, and the outcome
    says why not (busy, done, failed elsewhere, or removed)."""
    with transaction(db, lock=item.lock) as session:
        claim = queue.claim_job(session, item.job_id, queue.worker_name(), lease_s=lease_s,
                                summary=queue.owner(run))
        if claim is not None:
            return claim
        job = session.get(ReviewJob, item.job_id)
        outcome = item.outcome
        if job is None:
            outcome.status, outcome.error = "removed", REMOVED
        elif job.status == "done":
            fill(outcome, job.summary or {}, "skipped")
            outcome.llm_calls = outcome.cached_calls = 0
            outcome.seconds, outcome.error = 0.0, "reviewed by another run meanwhile"
        elif job.status == "error":
            outcome.status, outcome.error = "error", f"failed in another run: {job.error}"
        else:
            outcome.status, outcome.error = "busy", _busy(job)
        return None


def _review_one(item: _Planned, run: str, *, db, ingest, read_paper, ingest_lock, emit,
                heartbeat) -> None:
    outcome = item.outcome
    started = time.perf_counter()
    claim = _claim(db, item, run, heartbeat.lease_s)
    if claim is None:
        return
    heartbeat.hold(claim)
    emit(item, "ingest")
    paper_id = None
    try:
        with ingest_lock:
            if not job_exists(db, item.job_id):  # removed while waiting for its turn
                raise PaperRemoved(REMOVED)
            ingest_started = time.perf_counter()
            result = ingest(item.source)
            outcome.ingest_seconds = time.perf_counter() - ingest_started
        if result.status == "error" or not result.paper_id:
            raise PaperFailed(result.error or "ingest failed")
        paper_id = result.paper_id
        outcome.paper_id, outcome.title = result.paper_id, result.title or outcome.title
        start_read(db, claim, paper_id, run, stored_path(item.source))

        def on_progress(message: str) -> None:
            emit(item, "read", message)

        emit(item, "read")
        read_started = time.perf_counter()
        read_paper(result.paper_id, on_progress=on_progress)
        outcome.read_seconds = time.perf_counter() - read_started
        check_stored(db, claim, paper_id)
        summary = queue.finish(db, claim, completion(paper_id, time.perf_counter() - started))
        fill(outcome, summary, "reviewed")
    except Exception as exc:  # one paper's failure never stops the batch
        outcome.seconds = time.perf_counter() - started
        if isinstance(exc, queue.LeaseLost) and not job_exists(db, item.job_id):
            outcome.status, outcome.error = "removed", REMOVED
        elif isinstance(exc, queue.LeaseLost):
            outcome.status, outcome.error = "busy", f"not finished here: {exc}"
        elif record_failure(db, claim, paper_id, reason_of(exc)):
            outcome.status, outcome.error = "error", reason_of(exc)
        else:  # `reader rm` took the paper (and its job) away: the read failed for that reason
            outcome.status, outcome.error = "removed", REMOVED
    finally:
        heartbeat.release(claim)


