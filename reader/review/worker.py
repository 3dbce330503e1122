"""The review engine: workers that claim queued papers, on any number of machines sharing one
database — `reader worker`, the threads of `reader review` (run.py) and of the web server.

`run_worker` claims queued papers one after another (reader.queue.claim_next), ingests each
from its bytes in the database when it is not in the library yet, reads it and marks it
done. Every transaction of an attempt is fenced by its claim, so a worker whose lease was
taken over commits nothing; a failure sends the paper back to the queue until it has failed
`max_attempts` times, then it is marked failed with its error.

The stages are injected (`ingest_data(data, label)`, `read_paper(paper_id, on_progress=...,
db=...)`), so the engine is tested without PDFs or LLMs; reader.facade.Reader passes the
real ones.
"""

from __future__ import annotations

import threading
import time
import uuid
from collections.abc import Callable, Collection
from dataclasses import dataclass, field

from sqlalchemy import func, select
from sqlalchemy.orm import sessionmaker

from reader import queue
from reader.errors import describe_error
from reader.review.records import (
    REMOVED,
    PaperFailed,
    PaperReview,
    ProgressEvent,
    check_stored,
    completion,
    fill,
    is_reviewed,
    job_exists,
    reason_of,
    since_of,
    start_read,
)
from reader.store.db import database_away, while_away
from reader.store.tables import Paper, ReviewJob

IngestDataFn = Callable[[bytes, str], object]  # -> reader.ingest.pipeline.IngestResult
DATABASE_PATIENCE_S = 300.0


@dataclass
class WorkerReport:
    worker: str
    papers: list[PaperReview] = field(default_factory=list)
    handed_back: list[str] = field(default_factory=list)
    seconds: float = 0.0
    last: dict[int, PaperReview] = field(default_factory=dict)  # job id -> its last attempt here
    error: str = ""  # why the worker stopped before its work was done (the database stayed away)

    def by_status(self, status: str) -> list[PaperReview]:
        return [p for p in self.papers if p.status == status]

    def to_json(self) -> dict:
        return {
            "worker": self.worker,
            "papers": [p.to_json() for p in self.papers],
            "reviewed": len(self.by_status("reviewed")),
            "retrying": len(self.by_status("retry")),
            "failed": len(self.by_status("error")),
            "lost": len(self.by_status("lost")),
            "handed_back": self.handed_back,
            "seconds": round(self.seconds, 2),
            "error": self.error,
        }


def queue_busy(db: sessionmaker) -> bool:
    """Whether any queued job is pending or running (held by any worker)."""
    with db() as session:
        return bool(
            session.scalar(
                select(func.count())
                .select_from(ReviewJob)
                .where(ReviewJob.queued_at.is_not(None), ReviewJob.status.in_(("pending", "running")))
            )
        )


def run_worker(
    *,
    db: sessionmaker,
    ingest_data: IngestDataFn,
    read_paper: Callable[..., object],
    lease_s: float = queue.LEASE_S,
    max_attempts: int = queue.MAX_ATTEMPTS,
    jobs: int = 1,
    once: bool = False,
    until_empty: bool = False,
    job_ids: Collection[int] | None = None,
    poll_s: float = 2.0,
    patience_s: float = DATABASE_PATIENCE_S,
    stop: threading.Event | None = None,
    abandon: threading.Event | None = None,
    drain_on_interrupt: bool = True,
    on_event: Callable[[ProgressEvent], None] | None = None,
    on_notice: Callable[[str], None] | None = None,
    warm_up: Callable[[], None] | None = None,
) -> WorkerReport:
    """Process queued papers until `stop` (or Ctrl-C) — `jobs` papers at a time.

    `once`: one paper, then return. `until_empty`: return when no queued paper is pending
    or running anywhere; with `job_ids` (a `reader review` run's own jobs) only those are
    claimed, and it returns when none of them is left to claim. The first Ctrl-C
    (KeyboardInterrupt in the calling thread) or `stop` lets the papers in hand finish; a
    second Ctrl-C or `abandon` hands them back to the queue (not counted as an attempt) and
    returns at once. Without `drain_on_interrupt` the first Ctrl-C hands them back and
    raises KeyboardInterrupt. `warm_up()` runs first, before any claim.

    A database server that goes away (a restart) is waited for: each step on the queue is
    tried again with back-off for up to `patience_s` seconds, and a paper whose read it broke
    is queued again. Still away after that, the worker stops taking papers and says why in
    `report.error`; what is left stays queued for the next worker."""
    if warm_up is not None:
        warm_up()
    started = time.perf_counter()
    run = uuid.uuid4().hex
    worker = queue.worker_name()
    report = WorkerReport(worker)
    stop = stop or threading.Event()
    abandon = abandon or threading.Event()
    notice = on_notice or (lambda message: None)
    heartbeat = queue.Heartbeat(db, lease_s)
    ingest_lock = threading.Lock()
    report_lock = threading.Lock()
    indexes: dict[int, int] = {}  # job id -> its number in the progress lines
    queue.live_runs.add(run)
    away = threading.Event()  # set while the database is unreachable: said once per outage

    def waiting(exc: BaseException, delay: float) -> None:
        if not away.is_set():
            away.set()
            notice(
                f"the database is unreachable ({describe_error(exc)}); trying again with back-off "
                f"for up to {patience_s:g} s"
            )

    def patient(action: Callable[[], object]):
        result = while_away(action, patience_s=patience_s, on_wait=waiting)
        if away.is_set():
            away.clear()
            notice("the database is reachable again; going on")
        return result

    def loop() -> None:
        while not stop.is_set():
            claim = patient(
                lambda: queue.claim_next(
                    db,
                    worker,
                    lease_s=lease_s,
                    max_attempts=max_attempts,
                    summary=queue.owner(run),
                    job_ids=job_ids,
                )
            )
            if claim is None:
                if once or job_ids is not None or (until_empty and not patient(lambda: queue_busy(db))):
                    return
                stop.wait(poll_s)
                continue
            if once:
                stop.set()
            with report_lock:
                index = indexes.setdefault(claim.job_id, len(indexes) + 1)
            outcome = _work_one(
                claim,
                run,
                index,
                db=db,
                ingest_data=ingest_data,
                read_paper=read_paper,
                ingest_lock=ingest_lock,
                heartbeat=heartbeat,
                max_attempts=max_attempts,
                on_event=on_event,
                started=started,
                patient=patient,
            )
            with report_lock:
                report.papers.append(outcome)
                report.last[claim.job_id] = outcome

    n_threads = 1 if once else max(1, jobs)
    remaining = [n_threads]
    all_done = threading.Event()

    def run_loop() -> None:
        try:
            loop()
        except Exception as exc:  # noqa: BLE001 - said in the report; the queue keeps the papers
            if database_away(exc):
                why = (
                    f"the database stayed unreachable for {patience_s:g} s ({describe_error(exc)}); "
                    "the papers left stay queued"
                )
            else:
                why = reason_of(exc)
            with report_lock:
                report.error = report.error or why
            stop.set()
        finally:
            with report_lock:
                remaining[0] -= 1
                if not remaining[0]:
                    all_done.set()

    threads = [threading.Thread(target=run_loop, name=f"worker-{n}", daemon=True) for n in range(n_threads)]
    for thread in threads:
        thread.start()
    try:
        # An Event, not Thread.join: a join interrupted by Ctrl-C can leave the thread
        # looking finished while it still reads.
        while not all_done.is_set() and not abandon.is_set():
            try:
                all_done.wait(0.2)
            except KeyboardInterrupt:
                if not drain_on_interrupt:
                    stop.set()
                    _hand_back(db, heartbeat, report)
                    raise
                if stop.is_set():
                    abandon.set()
                else:
                    stop.set()
                    notice("finishing the paper in hand; press Ctrl-C again to hand it back to the queue")
        if abandon.is_set():
            _hand_back(db, heartbeat, report)
    finally:
        heartbeat.stop()
        queue.live_runs.discard(run)
    report.seconds = time.perf_counter() - started
    return report


def _hand_back(db: sessionmaker, heartbeat: queue.Heartbeat, report: WorkerReport) -> None:
    for claim in heartbeat.held():
        if queue.hand_back(db, claim):
            report.handed_back.append(claim.source)


def _work_one(
    claim: queue.Claim,
    run: str,
    index: int,
    *,
    db,
    ingest_data,
    read_paper,
    ingest_lock,
    heartbeat,
    max_attempts,
    on_event,
    started,
    patient,
) -> PaperReview:
    outcome = PaperReview(source=claim.source, paper_id=claim.paper_id or claim.file_sha256)
    began = time.perf_counter()

    def emit(stage: str, detail: str = "") -> None:
        if on_event is not None:
            on_event(
                ProgressEvent(
                    index=index,
                    total=0,
                    source=claim.source,
                    stage=stage,
                    elapsed_s=time.perf_counter() - started,
                    eta_s=None,
                    detail=detail,
                )
            )

    heartbeat.hold(claim)
    try:
        paper_id = _ingested(
            claim, db=db, ingest_data=ingest_data, ingest_lock=ingest_lock, outcome=outcome, emit=emit
        )
        outcome.paper_id = paper_id
        if _finished_before(db, claim, paper_id):
            summary = queue.finish(db, claim, completion(paper_id, 0.0))
            fill(outcome, summary, "reviewed")
            outcome.error = "finished by an earlier attempt"
            return outcome
        start_read(db, claim, paper_id, run, claim.source)
        emit("read")
        read_started = time.perf_counter()
        fresh = {"fresh": True} if claim.previous.get("fresh") else {}  # "Review again" afresh
        read_paper(
            paper_id, on_progress=lambda message: emit("read", message), db=queue.fenced(db, claim), **fresh
        )
        outcome.read_seconds = time.perf_counter() - read_started
        check_stored(db, claim, paper_id)
        summary = queue.finish(db, claim, completion(paper_id, time.perf_counter() - began))
        fill(outcome, summary, "reviewed")
    except queue.LeaseLost as exc:
        if patient(lambda: job_exists(db, claim.job_id)):
            outcome.status, outcome.error = "lost", str(exc)
        else:  # `reader rm` took the paper, and its job, away
            outcome.status, outcome.error = "removed", REMOVED
    except Exception as exc:  # noqa: BLE001 - one paper's failure never stops the worker
        reason = reason_of(exc)
        if database_away(exc):
            reason = f"the database went away during it ({reason})"
        outcome.status, outcome.error = "error", reason  # unless the failure is recorded below
        status = patient(lambda: queue.fail(db, claim, reason, max_attempts=max_attempts))
        outcome.status = {"pending": "retry", "error": "error"}.get(status, status)
        outcome.error = {
            "pending": f"attempt {claim.attempt} of {max_attempts} failed: {reason}; queued again",
            "removed": REMOVED,
        }.get(status, reason)
    finally:
        heartbeat.release(claim)
        outcome.seconds = time.perf_counter() - began
        emit(outcome.status, outcome.error)
    return outcome


def _ingested(claim: queue.Claim, *, db, ingest_data, ingest_lock, outcome, emit) -> str:
    """The claimed paper's id, ingesting it from its bytes in the database first if needed.
    Under the ingest lock (parsing and index writes are not thread-safe), so a paper removed
    while another one was being ingested is seen removed here, not ingested again."""
    with ingest_lock:
        with db() as session:
            paper = session.get(Paper, claim.paper_id or claim.file_sha256 or "")
            if paper is not None:
                outcome.title = paper.title
                return paper.id
        stored = queue.file_bytes(db, claim.file_sha256) if claim.file_sha256 else None
        if stored is None:  # (a paper removed meanwhile took its job along: reported removed)
            raise PaperFailed(
                "its file is not in the database (queued before files were stored, "
                "or removed); queue it again with `reader review PATH --queue`"
            )
        label, data = stored
        emit("ingest")
        ingest_started = time.perf_counter()
        result = ingest_data(data, label)
        outcome.ingest_seconds = time.perf_counter() - ingest_started
    if result.status == "error" or not result.paper_id:
        raise PaperFailed(result.error or "ingest failed")
    outcome.title = result.title
    queue.update_job(db, claim, paper_id=result.paper_id, stage="ingested")
    return result.paper_id


def _finished_before(db, claim: queue.Claim, paper_id: str) -> bool:
    """An earlier attempt stored the analyses, then died before marking the job done."""
    previous = (claim.previous or {}).get("read_since")
    if not previous:
        return False
    with db() as session:
        job = session.get(ReviewJob, claim.job_id)
        since = since_of(ReviewJob(summary={"read_since": previous})) if job is not None else None
        return since is not None and is_reviewed(session, paper_id, since)
