"""Batch review of a collection: ingest, deep read and audit every paper, resumably.

The `review_jobs` table is the run's memory. One row per paper (or, for a file
that never became a paper, per source path):

    pending ──claim──▶ running ──finish──▶ done
                          ├──────fail────▶ error      (retried by the next run)
                          └───`reader rm`──▶ (row deleted with its paper: reported "removed")

Several runs may work on one database at once (two `reader review` of one folder,
web uploads): a run plans each job and claims it in transactions locked on the
paper (reader.store.db.transaction with a lock), and claiming is a conditional UPDATE
pending → running, so one run only reads a paper; another finds the job claimed
and reports it "busy".

A row found "running" at start belongs to a run that was killed. deep_read
stores its analyses in one transaction at the very end, so the database holds
either all of a paper's new analyses or none of them; `summary["read_since"]`
(when the read started) tells which analyses a run wrote — ids cannot, since
SQLite reuses the ids of deleted rows. Reconciling a stale row therefore means: new analyses present → finish
it without redoing anything; absent → redo it. Finishing deletes the paper's
older analyses in the same transaction that marks the job done, so a paper
never carries two reviews.

The stages are injected (`ingest(path)`, `read_paper(paper_id, on_progress)`),
so the runner is tested without PDFs or LLMs; reader.facade.Reader.review passes
the real ones.
"""

from __future__ import annotations

import os
import socket
import threading
import time
import uuid
from collections.abc import Callable
from concurrent.futures import ThreadPoolExecutor, wait
from dataclasses import asdict, dataclass, field
from datetime import datetime
from pathlib import Path
from typing import Any, Protocol

from sqlalchemy import delete, func, or_, select, update
from sqlalchemy.orm import Session, sessionmaker

from reader.audit.record import verdict_counts
from reader.text.digest import file_sha256
from reader.text.paths import stored_path
from reader.store.db import transaction
from reader.store.tables import Analysis, AnalysisIteration, LLMCall, Paper, ReviewJob, utcnow

ANALYSIS_KINDS = ("critique", "synthesis")
REMOVED = "removed from the library while it was being reviewed (reader rm); not reviewed"


class IngestOutcome(Protocol):
    """What review needs from reader.ingest.pipeline.IngestResult."""

    paper_id: str | None
    status: str  # ingested | unchanged | error
    error: str
    title: str


IngestFn = Callable[[Path], IngestOutcome]
ReadFn = Callable[..., Any]  # read_paper(paper_id, on_progress=callable(str)) -> anything


@dataclass
class PaperReview:
    """One row of the final table (and of `--json`)."""

    source: str
    paper_id: str | None = None
    title: str = ""
    status: str = "pending"  # reviewed | skipped | error | busy | removed
    error: str = ""
    sentences: int = 0
    flagged: int = 0
    unchecked: int = 0  # the verifier's replies could not be read: neither supported nor flagged
    unanswered: int = 0  # left out of a reply that answered others; counted as supported
    final_ratio: float = 0.0
    regenerations: int = 0
    llm_calls: int = 0
    cached_calls: int = 0
    seconds: float = 0.0
    ingest_seconds: float = 0.0
    read_seconds: float = 0.0

    def to_json(self) -> dict:
        data = asdict(self)
        data["final_ratio"] = round(self.final_ratio, 4)
        data["seconds"] = round(self.seconds, 2)
        data["ingest_seconds"] = round(self.ingest_seconds, 2)
        data["read_seconds"] = round(self.read_seconds, 2)
        return data


@dataclass
class ReviewReport:
    papers: list[PaperReview]
    seconds: float

    def by_status(self, status: str) -> list[PaperReview]:
        return [p for p in self.papers if p.status == status]

    @property
    def failed(self) -> list[PaperReview]:
        return self.by_status("error")

    @property
    def unchecked(self) -> int:
        """Sentences whose verification could not be read, over every paper in the table."""
        return sum(p.unchecked for p in self.papers)

    @property
    def unanswered(self) -> int:
        return sum(p.unanswered for p in self.papers)

    def to_json(self) -> dict:
        return {
            "papers": [p.to_json() for p in self.papers],
            "reviewed": len(self.by_status("reviewed")),
            "skipped": len(self.by_status("skipped")),
            "failed": len(self.failed),
            "removed": len(self.by_status("removed")),
            "unchecked": self.unchecked,
            "unanswered": self.unanswered,
            "seconds": round(self.seconds, 2),
        }


@dataclass
class ProgressEvent:
    """Paper `index` of `total` entered `stage`; ETA is None until a paper has finished."""

    index: int
    total: int
    source: str
    stage: str
    elapsed_s: float
    eta_s: float | None
    detail: str = ""


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


# ---------------------------------------------------------------- job table


def _process_start(pid: int) -> str | None:
    """The kernel's start time of a process (with the pid, it names the process uniquely)."""
    try:
        with open(f"/proc/{pid}/stat") as fh:
            fields = fh.read().rsplit(")", 1)[-1].split()
    except OSError:
        return None
    return None if fields[0] == "Z" else fields[19]  # a zombie is dead for our purpose


# The runs going on in this process (a web server reviews uploads in threads); a job
# marked running by this process under another run's id was left by an earlier run.
_live_runs: set[str] = set()


def _owner(run: str) -> dict:
    return {"pid": os.getpid(), "host": socket.gethostname(), "start": _process_start(os.getpid()),
            "run": run}


def _owner_alive(summary: dict) -> bool:
    """Whether the run that marked a job running is still alive on this machine."""
    pid, host = summary.get("pid"), summary.get("host")
    if not pid or host != socket.gethostname():
        return False
    if pid == os.getpid():
        return summary.get("run") in _live_runs
    try:
        os.kill(int(pid), 0)
    except (OSError, ValueError):
        return False
    if not os.path.isdir("/proc"):
        return True
    start = _process_start(int(pid))
    # A recycled pid belongs to another process: its start time differs.
    return start is not None and summary.get("start") in (None, start)


def find_job(session: Session, source: Path, sha256: str | None) -> ReviewJob | None:
    """The job for this paper (by content hash) or for this never-ingested file (by path)."""
    clauses = [(ReviewJob.paper_id.is_(None)) & (ReviewJob.source_path == stored_path(source))]
    if sha256:
        clauses.append(ReviewJob.paper_id == sha256)
    return session.scalars(
        select(ReviewJob).where(or_(*clauses)).order_by(ReviewJob.id.desc()).limit(1)
    ).first()


def analyses_of(session: Session, paper_id: str, since: datetime | None = None) -> list[Analysis]:
    query = select(Analysis).where(Analysis.paper_id == paper_id, Analysis.kind.in_(ANALYSIS_KINDS))
    if since is not None:
        query = query.where(Analysis.created_at >= since)
    return list(session.scalars(query.order_by(Analysis.created_at, Analysis.id)))


def is_reviewed(session: Session, paper_id: str, since: datetime | None = None) -> bool:
    kinds = {a.kind for a in analyses_of(session, paper_id, since)}
    return kinds >= set(ANALYSIS_KINDS)


def review_figures(session: Session, paper_id: str, calls_above_id: int = 0) -> dict:
    """Sentences, flagged, unchecked, unanswered, ratio and regenerations of the paper's newest
    analyses, plus its LLM calls."""
    newest: dict[str, Analysis] = {}
    for analysis in analyses_of(session, paper_id):
        newest[analysis.kind] = analysis
    sentences = flagged = regenerations = 0
    last_ids = []
    for analysis in newest.values():
        last = session.scalars(
            select(AnalysisIteration).where(AnalysisIteration.analysis_id == analysis.id)
            .order_by(AnalysisIteration.iteration.desc()).limit(1)
        ).first()
        if last is not None:
            sentences += last.n_sentences
            flagged += last.n_flagged
            last_ids.append(last.id)
        regenerations += analysis.regenerations
    counts = verdict_counts(session, last_ids).values()
    calls = session.execute(
        select(LLMCall.cached, func.count()).where(
            LLMCall.paper_id == paper_id, LLMCall.id > calls_above_id
        ).group_by(LLMCall.cached)
    ).all()
    by_cached = {bool(cached): n for cached, n in calls}
    return {
        "sentences": sentences,
        "flagged": flagged,
        "unchecked": sum(c.get("unchecked", 0) for c in counts),
        "unanswered": sum(c.get("unanswered", 0) for c in counts),
        "final_ratio": flagged / sentences if sentences else 0.0,
        "regenerations": regenerations,
        "llm_calls": by_cached.get(False, 0),
        "cached_calls": by_cached.get(True, 0),
    }


def _since(job: ReviewJob) -> datetime | None:
    """When this job's deep read started (analyses from then on are its own)."""
    raw = (job.summary or {}).get("read_since")
    return datetime.fromisoformat(raw) if raw else None


def _max_id(session: Session, column) -> int:
    return session.scalar(select(func.max(column))) or 0


def finish_job(factory: sessionmaker, job_id: int, paper_id: str, seconds: float) -> dict:
    """Keep only the analyses this job wrote, and mark it done — one transaction."""
    with transaction(factory) as session:
        job = session.get(ReviewJob, job_id)
        if job is None:  # deleted with its paper
            raise _PaperRemoved(REMOVED)
        return _finish(session, job, paper_id, seconds)


def _finish(session: Session, job: ReviewJob, paper_id: str, seconds: float) -> dict:
    since = _since(job)
    if since is not None:
        session.execute(
            delete(Analysis).where(
                Analysis.paper_id == paper_id, Analysis.created_at < since,
                Analysis.kind.in_(ANALYSIS_KINDS),
            ).execution_options(synchronize_session=False)
        )
    summary = review_figures(session, paper_id, int((job.summary or {}).get("call_floor", 0)))
    summary["seconds"] = round(seconds, 3)
    if since is not None:
        summary["read_since"] = since.isoformat()
    job.summary = summary
    job.status, job.stage, job.error = "done", "done", ""
    job.finished_at = utcnow()
    return summary


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
) -> ReviewReport:
    """Review every source file; failures are recorded per paper and never stop the batch.

    `ingest` is serialized (PDF parsing and index writes are not thread-safe);
    up to `max_papers` deep reads run at once, each bounded further by the LLM's
    own concurrency limit. Setting `stop` lets running papers finish their
    current stage's bookkeeping and skips the rest.
    """
    started = time.perf_counter()
    run = uuid.uuid4().hex
    _live_runs.add(run)
    try:
        return _run(sources, run, db=db, ingest=ingest, read_paper=read_paper, force=force,
                    max_papers=max_papers, on_event=on_event, stop=stop, started=started)
    finally:
        _live_runs.discard(run)


def _run(sources, run, *, db, ingest, read_paper, force, max_papers, on_event, stop, started):
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
                        ingest_lock=ingest_lock, emit=emit)
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


def _plan_one(session: Session, item: _Planned, force: bool) -> None:
    outcome = item.outcome
    paper = session.get(Paper, item.sha256) if item.sha256 else None
    job = find_job(session, item.source, item.sha256)
    if job is not None and job.paper_id is None and paper is not None:
        job.paper_id = paper.id
    if paper is not None:
        outcome.title = paper.title

    if job is not None and job.status == "running":
        if _owner_alive(job.summary or {}):
            outcome.status = "busy"
            outcome.error = f"being reviewed by another run (pid {job.summary.get('pid')})"
            item.job_id = job.id
            return
        since = _since(job)
        if paper is not None and since is not None and not force and is_reviewed(session, paper.id, since):
            # Killed after deep_read committed but before the job was marked done.
            item.job_id = job.id
            summary = _finish(session, job, paper.id, 0.0)
            _fill(outcome, summary, "reviewed")
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
        _fill(outcome, job.summary, "skipped")
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


def _fill(outcome: PaperReview, summary: dict, status: str) -> None:
    outcome.status = status
    for key in ("sentences", "flagged", "unchecked", "unanswered", "final_ratio", "regenerations",
                "llm_calls", "cached_calls", "seconds"):
        if key in summary:
            setattr(outcome, key, summary[key])


def _claim(db: sessionmaker, item: _Planned, run: str) -> bool:
    """Mark the job running for this run if it is still pending: True when this run got it.
    Otherwise the outcome says why not (busy, done, failed elsewhere, or removed)."""
    with transaction(db, lock=item.lock) as session:
        claimed = session.execute(
            update(ReviewJob)
            .where(ReviewJob.id == item.job_id, ReviewJob.status == "pending")
            .values(status="running", stage="ingest", started_at=utcnow(), summary=_owner(run))
            .execution_options(synchronize_session=False)
        ).rowcount == 1
        if claimed:
            return True
        job = session.get(ReviewJob, item.job_id)
        outcome = item.outcome
        if job is None:
            outcome.status, outcome.error = "removed", REMOVED
        elif job.status == "done":
            _fill(outcome, job.summary or {}, "skipped")
            outcome.llm_calls = outcome.cached_calls = 0
            outcome.seconds, outcome.error = 0.0, "reviewed by another run meanwhile"
        elif job.status == "error":
            outcome.status, outcome.error = "error", f"failed in another run: {job.error}"
        else:
            outcome.status = "busy"
            outcome.error = f"being reviewed by another run (pid {(job.summary or {}).get('pid')})"
        return False


def _job_exists(db: sessionmaker, job_id: int) -> bool:
    with db() as session:
        return session.get(ReviewJob, job_id) is not None


def _review_one(item: _Planned, run: str, *, db, ingest, read_paper, ingest_lock, emit) -> None:
    outcome = item.outcome
    started = time.perf_counter()
    if not _claim(db, item, run):
        return
    emit(item, "ingest")
    paper_id = None
    try:
        with ingest_lock:
            if not _job_exists(db, item.job_id):  # removed while waiting for its turn
                raise _PaperRemoved(REMOVED)
            ingest_started = time.perf_counter()
            result = ingest(item.source)
            outcome.ingest_seconds = time.perf_counter() - ingest_started
        if result.status == "error" or not result.paper_id:
            raise _PaperFailed(result.error or "ingest failed")
        paper_id = result.paper_id
        outcome.paper_id, outcome.title = result.paper_id, result.title or outcome.title

        with transaction(db) as session:
            job = session.get(ReviewJob, item.job_id)
            if job is None or session.get(Paper, paper_id) is None:
                raise _PaperRemoved(REMOVED)
            job.paper_id = result.paper_id
            job.source_path = stored_path(item.source)
            job.stage = "read"
            job.summary = {
                **_owner(run),
                "read_since": utcnow().isoformat(),
                "call_floor": _max_id(session, LLMCall.id),
            }

        def on_progress(message: str) -> None:
            emit(item, "read", message)

        emit(item, "read")
        read_started = time.perf_counter()
        read_paper(result.paper_id, on_progress=on_progress)
        outcome.read_seconds = time.perf_counter() - read_started
        with transaction(db) as session:
            job = session.get(ReviewJob, item.job_id)
            if job is None:
                raise _PaperRemoved(REMOVED)
            if not is_reviewed(session, result.paper_id, _since(job)):
                raise _PaperFailed("the deep read finished without storing a critique and a synthesis")
        summary = finish_job(db, item.job_id, result.paper_id, time.perf_counter() - started)
        _fill(outcome, summary, "reviewed")
    except Exception as exc:  # one paper's failure never stops the batch
        reason = str(exc) if isinstance(exc, _PaperFailed | _PaperRemoved) else _describe(exc)
        outcome.seconds = time.perf_counter() - started
        if _record_failure(db, item.job_id, paper_id, reason):
            outcome.status, outcome.error = "error", reason
        else:  # `reader rm` took the paper (and its job) away: the read failed for that reason
            outcome.status, outcome.error = "removed", REMOVED


def _record_failure(db: sessionmaker, job_id: int, paper_id: str | None, reason: str) -> bool:
    """Mark the job failed -> True; False when its paper was removed meanwhile (the job is
    then deleted too, if it was not yet tied to the paper)."""
    with transaction(db) as session:
        job = session.get(ReviewJob, job_id)
        if job is None:
            return False
        if paper_id is not None and session.get(Paper, paper_id) is None:
            session.delete(job)
            return False
        job.status, job.error, job.finished_at = "error", reason, utcnow()
        return True


class _PaperFailed(Exception):
    pass


class _PaperRemoved(Exception):
    pass


def _describe(exc: BaseException) -> str:
    """One line for the paper's row: a database error's SQL and parameters are left out."""
    from reader.errors import ReaderError, describe_error

    if isinstance(exc, ReaderError):
        return str(exc)
    return describe_error(exc)


def job_rows(db: sessionmaker) -> list[dict]:
    """Every job with its status (id, source, paper, status, stage, error, summary)."""
    with db() as session:
        jobs = session.scalars(select(ReviewJob).order_by(ReviewJob.id)).all()
        return [
            {"id": j.id, "source_path": j.source_path, "paper_id": j.paper_id, "status": j.status,
             "stage": j.stage, "error": j.error, "summary": dict(j.summary or {})}
            for j in jobs
        ]
