"""The review engine: workers that claim queued papers, on any number of machines sharing one
database — `reader worker`, the threads of `reader review` (run.py) and of the web server.

`run_worker` claims queued papers one after another (reader.queue.claim_next), ingests each
from its bytes in the database when it is not in the library yet, reads it and marks it
done. Every transaction of an attempt is fenced by its claim, so a worker whose lease was
taken over commits nothing; a failure sends the paper back to the queue until it has failed
`max_attempts` times, then it is marked failed with its error.

The stages are injected (WorkerStages: `ingest_data(data, label)`, `read_paper(paper_id,
on_progress=..., db=...)`), so the engine is tested without PDFs or LLMs; the composition root
(reader.services.Services.worker_stages) passes the real ones.
"""

from __future__ import annotations

import signal
import threading
import time
import uuid
from collections.abc import Callable, Collection
from contextlib import contextmanager
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
    reviewed_twin,
    since_of,
    start_read,
)
from reader.store.db import database_away, while_away
from reader.store.tables import Paper, ReviewJob
from reader.store.versions import NEAR_DUPLICATE, near_duplicate_line

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
            "near_duplicates": len(self.by_status(NEAR_DUPLICATE)),
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


@dataclass(frozen=True)
class WorkerStages:
    """What a worker calls: the database and the stages (the composition root, reader.services,
    passes the real ones; tests pass stand-ins). `read_paper(paper_id, on_progress=..., db=...,
    fresh=...)`; `warm_up()` runs before the first claim."""

    db: sessionmaker
    ingest_data: IngestDataFn
    read_paper: Callable[..., object]
    warm_up: Callable[[], None] | None = None
    on_notice: Callable[[str], None] | None = None


@dataclass(frozen=True)
class WorkerOptions:
    """How a worker works off the queue.

    `jobs` papers at a time; `once`: one paper, then return; `until_empty`: return when no
    queued paper is pending or running anywhere; with `job_ids` (a `reader review` run's own
    jobs) only those are claimed, and it returns when none of them is left to claim.
    `poll_s` between looks at an empty queue. Without `drain_on_interrupt` the first Ctrl-C
    hands the papers in hand back and raises KeyboardInterrupt. A claim lasts `lease_s`
    unless renewed; a paper fails for good after `max_attempts`; the database is waited for
    up to `patience_s` seconds. With `skip_near_duplicates` a paper that looks like a version of
    one already reviewed is not reviewed unless it was queued with `force`."""

    jobs: int = 1
    once: bool = False
    until_empty: bool = False
    job_ids: Collection[int] | None = None
    poll_s: float = 2.0
    drain_on_interrupt: bool = True
    lease_s: float = queue.LEASE_S
    max_attempts: int = queue.MAX_ATTEMPTS
    patience_s: float = DATABASE_PATIENCE_S
    skip_near_duplicates: bool = True


def run_worker(
    stages: WorkerStages,
    options: WorkerOptions = WorkerOptions(),
    *,
    stop: threading.Event | None = None,
    abandon: threading.Event | None = None,
    on_event: Callable[[ProgressEvent], None] | None = None,
) -> WorkerReport:
    """Process queued papers until `stop` (or Ctrl-C), as `options` say.

    The first Ctrl-C (KeyboardInterrupt in the calling thread) or `stop` lets the papers in
    hand finish; a second Ctrl-C or `abandon` hands them back to the queue (not counted as an
    attempt) and returns at once.

    A database server that goes away (a restart) is waited for: each step on the queue is
    tried again with back-off for up to `patience_s` seconds, and a paper whose read it broke
    is queued again. Still away after that, the worker stops taking papers and says why in
    `report.error`; what is left stays queued for the next worker."""
    if stages.warm_up is not None:
        stages.warm_up()
    run = _WorkerRun(stages, options, stop or threading.Event(), abandon or threading.Event(), on_event)
    queue.live_runs.add(run.run_id)
    try:
        run.start_threads()
        run.wait()
    finally:
        run.heartbeat.stop()
        queue.live_runs.discard(run.run_id)
    run.report.seconds = time.perf_counter() - run.started
    return run.report


class _WorkerRun:
    """One run_worker call: its threads, its report and what they share."""

    def __init__(self, stages: WorkerStages, options: WorkerOptions, stop, abandon, on_event):
        self.stages, self.options = stages, options
        self.stop, self.abandon, self.on_event = stop, abandon, on_event
        self.started = time.perf_counter()
        self.run_id = uuid.uuid4().hex
        self.worker = queue.worker_name()
        self.report = WorkerReport(self.worker)
        self.notice = stages.on_notice or (lambda message: None)
        self.heartbeat = queue.Heartbeat(stages.db, options.lease_s)
        self.ingest_lock = threading.Lock()
        self.report_lock = threading.Lock()
        self.indexes: dict[int, int] = {}  # job id -> its number in the progress lines
        self.away = threading.Event()  # set while the database is unreachable: said once per outage
        self.remaining = 1 if options.once else max(1, options.jobs)
        self.all_done = threading.Event()

    def waiting(self, exc: BaseException, delay: float) -> None:
        if not self.away.is_set():
            self.away.set()
            self.notice(
                f"the database is unreachable ({describe_error(exc)}); trying again with back-off "
                f"for up to {self.options.patience_s:g} s"
            )

    def patient(self, action: Callable[[], object]):
        result = while_away(action, patience_s=self.options.patience_s, on_wait=self.waiting)
        if self.away.is_set():
            self.away.clear()
            self.notice("the database is reachable again; going on")
        return result

    def claim_next(self):
        options, db = self.options, self.stages.db
        return self.patient(
            lambda: queue.claim_next(
                db,
                self.worker,
                lease_s=options.lease_s,
                max_attempts=options.max_attempts,
                summary=queue.owner(self.run_id),
                job_ids=options.job_ids,
            )
        )

    def nothing_left(self) -> bool:
        """An empty look at the queue ends this loop (else it waits and looks again)."""
        options = self.options
        if options.once or options.job_ids is not None:
            return True
        return options.until_empty and not self.patient(lambda: queue_busy(self.stages.db))

    def loop(self) -> None:
        while not self.stop.is_set():
            claim = self.claim_next()
            if claim is None:
                if self.nothing_left():
                    return
                self.stop.wait(self.options.poll_s)
                continue
            if self.options.once:
                self.stop.set()
            with self.report_lock:
                index = self.indexes.setdefault(claim.job_id, len(self.indexes) + 1)
            outcome = _work_one(claim, index, self)
            with self.report_lock:
                self.report.papers.append(outcome)
                self.report.last[claim.job_id] = outcome

    def run_loop(self) -> None:
        try:
            self.loop()
        except Exception as exc:  # noqa: BLE001 - said in the report; the queue keeps the papers
            if database_away(exc):
                why = (
                    f"the database stayed unreachable for {self.options.patience_s:g} s "
                    f"({describe_error(exc)}); the papers left stay queued"
                )
            else:
                why = reason_of(exc)
            with self.report_lock:
                self.report.error = self.report.error or why
            self.stop.set()
        finally:
            with self.report_lock:
                self.remaining -= 1
                if not self.remaining:
                    self.all_done.set()

    def start_threads(self) -> None:
        for n in range(self.remaining):
            threading.Thread(target=self.run_loop, name=f"worker-{n}", daemon=True).start()

    def wait(self) -> None:
        """Until the threads are done, or the papers in hand are handed back (a second Ctrl-C,
        `abandon`). An Event, not Thread.join: a join interrupted by Ctrl-C can leave the
        thread looking finished while it still reads. Ctrl-C is counted by a signal handler
        rather than caught as KeyboardInterrupt, so a second press that comes while the first is
        being answered is counted too instead of escaping."""
        pressed: list[int] = []
        answered = 0
        with _counting_ctrl_c(pressed):
            while not self.all_done.is_set() and not self.abandon.is_set():
                self.all_done.wait(0.2)
                if pressed and not self.options.drain_on_interrupt:
                    self.stop.set()
                    _hand_back(self.stages.db, self.heartbeat, self.report)
                    raise KeyboardInterrupt
                while answered < len(pressed):
                    answered += 1
                    self._answer_ctrl_c()
        if self.abandon.is_set():
            _hand_back(self.stages.db, self.heartbeat, self.report)

    def _answer_ctrl_c(self) -> None:
        if self.stop.is_set():
            self.abandon.set()
        else:
            self.stop.set()
            self.notice("finishing the paper in hand; press Ctrl-C again to hand it back to the queue")


@contextmanager
def _counting_ctrl_c(pressed: list[int]):
    """SIGINT appends to `pressed` while inside (in the main thread, where signals arrive)."""
    if threading.current_thread() is not threading.main_thread():
        yield
        return
    previous = signal.signal(signal.SIGINT, lambda signum, frame: pressed.append(signum))
    try:
        yield
    finally:
        signal.signal(signal.SIGINT, previous)


def _hand_back(db: sessionmaker, heartbeat: queue.Heartbeat, report: WorkerReport) -> None:
    for claim in heartbeat.held():
        if queue.hand_back(db, claim):
            report.handed_back.append(claim.source)


def _work_one(claim: queue.Claim, index: int, run: _WorkerRun) -> PaperReview:
    """One claimed paper, ingested when new, read and marked done -> its row; a failure is
    recorded on the queue (retried or failed) and in the row, never raised."""
    db = run.stages.db
    outcome = PaperReview(source=claim.source, paper_id=claim.paper_id or claim.file_sha256)
    began = time.perf_counter()
    emit = _emitter(claim, index, run)
    run.heartbeat.hold(claim)
    try:
        _review_claimed(claim, run, outcome, emit, began)
    except queue.LeaseLost as exc:
        if run.patient(lambda: job_exists(db, claim.job_id)):
            outcome.status, outcome.error = "lost", str(exc)
        else:  # `reader rm` took the paper, and its job, away
            outcome.status, outcome.error = "removed", REMOVED
    except Exception as exc:  # noqa: BLE001 - one paper's failure never stops the worker
        _record_failure(claim, run, outcome, exc)
    finally:
        run.heartbeat.release(claim)
        outcome.seconds = time.perf_counter() - began
        emit(outcome.status, outcome.error)
    return outcome


def _emitter(claim: queue.Claim, index: int, run: _WorkerRun) -> Callable[..., None]:
    """emit(stage, detail) -> the run's on_event, as a ProgressEvent of this claim."""

    def emit(stage: str, detail: str = "") -> None:
        if run.on_event is not None:
            run.on_event(
                ProgressEvent(
                    index=index,
                    total=0,
                    source=claim.source,
                    stage=stage,
                    elapsed_s=time.perf_counter() - run.started,
                    eta_s=None,
                    detail=detail,
                )
            )

    return emit


def _review_claimed(claim: queue.Claim, run: _WorkerRun, outcome: PaperReview, emit, began: float) -> None:
    db = run.stages.db
    paper_id = _ingested(claim, run, outcome=outcome, emit=emit)
    outcome.paper_id = paper_id
    if _finished_before(db, claim, paper_id):
        summary = queue.finish(db, claim, completion(paper_id, 0.0))
        fill(outcome, summary, "reviewed")
        outcome.error = "finished by an earlier attempt"
        return
    skip = run.options.skip_near_duplicates and not claim.previous.get("force")
    if skip and _set_aside_as_near_duplicate(db, claim, paper_id, outcome):
        return
    start_read(db, claim, paper_id, run.run_id, claim.source)
    emit("read")
    read_started = time.perf_counter()
    fresh = {"fresh": True} if claim.previous.get("fresh") else {}  # "Review again" afresh
    run.stages.read_paper(
        paper_id, on_progress=lambda message: emit("read", message), db=queue.fenced(db, claim), **fresh
    )
    outcome.read_seconds = time.perf_counter() - read_started
    check_stored(db, claim, paper_id)
    summary = queue.finish(db, claim, completion(paper_id, time.perf_counter() - began))
    fill(outcome, summary, "reviewed")


def _set_aside_as_near_duplicate(db, claim: queue.Claim, paper_id: str, outcome: PaperReview) -> bool:
    """A paper that looks like a version of one already reviewed is not reviewed again: its job
    ends as a near-duplicate naming the twin (`--force`, or the web page's "Review anyway",
    reviews it). Whether it was set aside."""
    with db() as session:
        twin = reviewed_twin(session, paper_id)
    if twin is None:
        return False

    def complete(session, job) -> dict:
        job.paper_id = paper_id
        return {"near_duplicate": twin}

    queue.finish(db, claim, complete, status=NEAR_DUPLICATE)
    outcome.status, outcome.error, outcome.near_duplicate = NEAR_DUPLICATE, near_duplicate_line(twin), twin
    return True


def _record_failure(claim: queue.Claim, run: _WorkerRun, outcome: PaperReview, exc: Exception) -> None:
    """The paper goes back to the queue, or is failed after its last attempt."""
    max_attempts = run.options.max_attempts
    reason = reason_of(exc)
    if database_away(exc):
        reason = f"the database went away during it ({reason})"
    outcome.status, outcome.error = "error", reason  # unless the failure is recorded below
    status = run.patient(lambda: queue.fail(run.stages.db, claim, reason, max_attempts=max_attempts))
    outcome.status = {"pending": "retry", "error": "error"}.get(status, status)
    outcome.error = {
        "pending": f"attempt {claim.attempt} of {max_attempts} failed: {reason}; queued again",
        "removed": REMOVED,
    }.get(status, reason)


def _ingested(claim: queue.Claim, run: _WorkerRun, *, outcome, emit) -> str:
    """The claimed paper's id, ingesting it from its bytes in the database first if needed.
    Under the ingest lock (parsing and index writes are not thread-safe), so a paper removed
    while another one was being ingested is seen removed here, not ingested again."""
    db = run.stages.db
    with run.ingest_lock:
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
        result = run.stages.ingest_data(data, label)
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
