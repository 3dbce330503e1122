"""The review queue: jobs in the `review_jobs` table, claimed with leases that a heartbeat renews.

The database is the only coordinator (no broker, no extra server). A job is

    pending ──claim──▶ running ──finish──▶ done
       ▲                  ├──fail (attempts < N)──┘ back to pending, the error kept
       │                  ├──fail (attempts = N)──▶ error
       └───hand back──────┤                          (Ctrl-C twice: not counted as an attempt)
                          └──lease ran out──▶ claimed again by any worker (counted; after N: error)

and `finish` ends a job as near-duplicate instead of done when its paper is a version of one
already reviewed: ingested but not reviewed (reader/review/worker.py). Queued again, even
without `force`, it is pending again and its worker looks for the twin again.

Claiming picks the oldest claimable job with `SELECT … FOR UPDATE SKIP LOCKED` on
PostgreSQL (workers never wait on each other's rows) and inside `BEGIN IMMEDIATE` on
SQLite, then gives it a new claim token, the holder's name ("host:pid") and a lease
(`lease_until`, the database server's clock on PostgreSQL, so the machines' clocks do not
matter). A Heartbeat thread renews the leases of the jobs its process holds every
lease/4 seconds; a worker killed with kill -9 stops renewing, its lease runs out and any
worker claims the job again.

Nothing of a job is committed twice: every transaction of an attempt goes through
`fenced(db, claim)`, which locks the job row and checks the claim token before the
commit; a worker whose lease was taken over finds another token and its transaction is
rolled back (LeaseLost). Under that, the schema itself holds one critique and one
synthesis per paper (unique paper_id, kind) and one queued job per file (unique
file_sha256).

`reader review PATHS` is the same thing on one machine: it queues the files, then runs
workers in its own process that claim only the jobs it queued (`claim_next(job_ids=…)`) and
return when none of them is left to claim (reader/review/run.py).
"""

from __future__ import annotations

import logging
import os
import socket
import threading
import uuid
from collections.abc import Collection
from dataclasses import dataclass, field
from datetime import UTC, datetime, timedelta

from sqlalchemy import event, or_, select, update
from sqlalchemy.orm import Session, sessionmaker

from reader.errors import describe_error
from reader.store.db import transaction
from reader.store.tables import Paper, PaperFile, ReviewJob, utcnow
from reader.store.versions import NEAR_DUPLICATE, near_duplicate_line

LEASE_S = 60.0
MAX_ATTEMPTS = 3
QUEUE_LOCK = "reader:queue"

log = logging.getLogger("reader.queue")


class LeaseLost(Exception):
    """This attempt no longer holds its job (the lease ran out and another worker took it,
    or it was handed back); nothing of it is committed."""


@dataclass
class Claim:
    """One attempt at a job, held by this process."""

    job_id: int
    token: str
    worker: str
    source: str
    paper_id: str | None
    file_sha256: str | None
    attempt: int
    previous: dict = field(default_factory=dict)  # the job's summary before this claim
    lost: threading.Event = field(default_factory=threading.Event)


# ---------------------------------------------------------------- holders


def worker_name() -> str:
    return f"{socket.gethostname()}:{os.getpid()}"


def process_start(pid: int) -> str | None:
    """The kernel's start time of a process (with the pid, it names the process uniquely)."""
    try:
        with open(f"/proc/{pid}/stat") as fh:
            fields = fh.read().rsplit(")", 1)[-1].split()
    except OSError:
        return None
    return None if fields[0] == "Z" else fields[19]  # a zombie is dead for our purpose


# The runs going on in this process (a web server reviews uploads in threads); a job
# marked running by this process under another run's id was left by an earlier run.
live_runs: set[str] = set()


def owner(run: str) -> dict:
    """What a worker writes into the summary of a job it holds: its process and run, so that a
    run on this machine tells at once whether the holder is alive (holder_alive)."""
    return {
        "pid": os.getpid(),
        "host": socket.gethostname(),
        "start": process_start(os.getpid()),
        "run": run,
    }


def _pid_alive(summary: dict) -> bool:
    """Whether the process that marked a job running on this machine is still alive."""
    pid = summary.get("pid")
    if not pid:
        return False
    if pid == os.getpid():
        return summary.get("run") in live_runs
    try:
        os.kill(int(pid), 0)
    except (OSError, ValueError):
        return False
    if not os.path.isdir("/proc"):
        return True
    start = process_start(int(pid))
    # A recycled pid belongs to another process: its start time differs.
    return start is not None and summary.get("start") in (None, start)


def holder_of(job: ReviewJob) -> str:
    """Who holds a running job, for the row of a run that finds it busy."""
    summary = job.summary or {}
    if summary.get("host") == socket.gethostname() and summary.get("pid"):
        return f"being reviewed by another run (pid {summary['pid']})"
    return f"being reviewed by {job.worker or 'another run'}"


def holder_alive(session: Session, job: ReviewJob) -> bool:
    """Whether the run or worker holding a running job is alive.

    On this machine the process itself tells (a run killed here is redone at once);
    a holder on another machine is alive while its lease runs."""
    summary = job.summary or {}
    if summary.get("host") == socket.gethostname() and summary.get("pid"):
        return _pid_alive(summary)
    if job.lease_until is None:  # marked running before leases existed, or by an older version
        return False
    return _aware(job.lease_until) > db_now(session)


def _aware(moment: datetime) -> datetime:

    return moment if moment.tzinfo else moment.replace(tzinfo=UTC)


def db_now(session: Session) -> datetime:
    """Now on the database server's clock (PostgreSQL), or this machine's (SQLite: one machine)."""
    if session.get_bind().dialect.name == "postgresql":
        from sqlalchemy import func

        return _aware(session.scalar(select(func.clock_timestamp())))
    return utcnow()


# ---------------------------------------------------------------- putting files on the queue


@dataclass
class Queued:
    """What enqueue did with one file."""

    job_id: int
    status: str  # queued | requeued | already queued | running | done
    detail: str = ""


def enqueue_file(
    session: Session,
    *,
    sha256: str,
    name: str,
    data: bytes,
    paper_exists: bool,
    force: bool,
    fresh: bool = False,
) -> Queued:
    """Put one file on the queue inside the caller's transaction (lock it on the paper).

    Its bytes go into paper_files (unless the paper is already ingested: its passages are
    in the database), and its job becomes pending; a job already pending or running is
    left alone, a finished one is queued again only with `force`, a failed one always.
    `fresh`: its read asks the LLMs again instead of taking their cached answers."""
    if not paper_exists and session.get(PaperFile, sha256) is None:
        session.add(PaperFile(sha256=sha256, name=name, size=len(data), data=data))
        session.flush()
    job = session.scalars(
        select(ReviewJob)
        .where(or_(ReviewJob.file_sha256 == sha256, ReviewJob.paper_id == sha256))
        .order_by(ReviewJob.file_sha256.is_(None), ReviewJob.id.desc())
        .limit(1)
    ).first()
    has_file = session.get(PaperFile, sha256) is not None
    if job is None:
        job = ReviewJob(
            source_path=name,
            paper_id=sha256 if paper_exists else None,
            file_sha256=sha256 if has_file else None,
        )
        session.add(job)
        status, kept = "queued", {}
    else:
        if job.file_sha256 is None and has_file:
            job.file_sha256 = sha256
        if (left_alone := _left_alone(session, job, force)) is not None:
            return left_alone
        status = "requeued" if job.status in ("error", "done", NEAR_DUPLICATE) else "queued"
        # A holder that died mid-read: when its read started, so that the next attempt
        # finishes the job without reading again if the analyses were stored.
        kept = (
            {k: v for k, v in (job.summary or {}).items() if k in ("read_since", "call_floor")}
            if job.status == "running"
            else {}
        )
    job.source_path = name
    _make_pending(session, job, kept, force=force, fresh=fresh)
    return Queued(job.id, status)


def _make_pending(session: Session, job: ReviewJob, kept: dict, *, force: bool, fresh: bool) -> None:
    """The job pending on the queue, unclaimed, with no attempt yet; its summary `kept`, and
    whether it was queued with `force` or to be read `fresh`."""
    job.status, job.stage, job.error, job.summary = "pending", "", "", kept
    job.queued_at, job.started_at, job.finished_at = db_now(session), None, None
    job.claim, job.worker, job.lease_until, job.heartbeat_at, job.attempts = None, "", None, None, 0
    if force:
        job.summary = {**kept, "force": True}
    if fresh:
        job.summary = {**job.summary, "fresh": True}
    session.flush()


def _left_alone(session: Session, job: ReviewJob, force: bool) -> Queued | None:
    """What enqueue_file says of a job it does not queue again (pending, running, or done
    without `force`); None when it queues it."""
    if job.status == "pending" and job.queued_at is not None:
        return Queued(job.id, "already queued")
    if job.status == "running" and holder_alive(session, job):
        return Queued(job.id, "running", holder_of(job))
    if job.status == "done" and not force:
        return Queued(job.id, "done", "reviewed already (--force queues it again)")
    return None


def file_bytes(db: sessionmaker, sha256: str) -> tuple[str, bytes] | None:
    """(label, bytes) of a queued file; None when it is not in the database."""
    with db() as session:
        row = session.execute(
            select(PaperFile.name, PaperFile.data).where(PaperFile.sha256 == sha256)
        ).first()
    return (row.name, bytes(row.data)) if row else None


# ---------------------------------------------------------------- claiming


def _grant(
    session: Session, job: ReviewJob, worker: str, lease_s: float, now: datetime, summary: dict | None = None
) -> Claim:
    previous = dict(job.summary or {})
    job.status, job.stage, job.error = "running", "claimed", job.error if job.attempts else ""
    job.worker, job.claim = worker, uuid.uuid4().hex
    job.lease_until, job.heartbeat_at = now + timedelta(seconds=lease_s), now
    job.started_at, job.finished_at = now, None
    job.attempts = (job.attempts or 0) + 1
    job.summary = {**(summary or {}), **{k: True for k in ("force", "fresh") if previous.get(k)}}
    if previous.get("read_since"):  # a takeover: what the earlier attempt had done
        job.summary["previous"] = {k: previous[k] for k in ("read_since", "call_floor") if k in previous}
    session.flush()
    return Claim(
        job.id, job.claim, worker, job.source_path, job.paper_id, job.file_sha256, job.attempts, previous
    )


def claim_next(
    db: sessionmaker,
    worker: str,
    *,
    lease_s: float = LEASE_S,
    max_attempts: int = MAX_ATTEMPTS,
    summary: dict | None = None,
    job_ids: Collection[int] | None = None,
) -> Claim | None:
    """Claim the oldest queued job that is pending, or running with its lease run out; only
    among `job_ids` when given (a `reader review` run takes the jobs it queued).

    A job whose lease ran out `max_attempts` times (its workers died on it) is marked failed
    instead of being claimed again. None when there is nothing to claim."""
    while True:
        with transaction(db, lock=QUEUE_LOCK if _is_sqlite(db) else None) as session:
            now = db_now(session)
            query = select(ReviewJob).where(
                ReviewJob.queued_at.is_not(None),
                or_(
                    ReviewJob.status == "pending",
                    (ReviewJob.status == "running") & (ReviewJob.lease_until < now),
                ),
            )
            if job_ids is not None:
                query = query.where(ReviewJob.id.in_(list(job_ids)))
            job = session.scalars(
                query.order_by(ReviewJob.queued_at, ReviewJob.id).limit(1).with_for_update(skip_locked=True)
            ).first()
            if job is None:
                return None
            if job.status == "running" and job.attempts >= max_attempts:
                job.status, job.finished_at, job.claim, job.lease_until = "error", now, None, None
                job.error = (
                    f"abandoned {job.attempts} times: its worker stopped renewing the lease "
                    f"(last {job.worker}){'; last error: ' + job.error if job.error else ''}"
                )
                continue
            if job.status == "running":
                log.warning("job %s: the lease of %s ran out; taking it over", job.id, job.worker)
            return _grant(session, job, worker, lease_s, now, summary)


def _is_sqlite(db: sessionmaker) -> bool:
    bind = getattr(db, "kw", {}).get("bind")
    return bind is not None and bind.dialect.name == "sqlite"


# ---------------------------------------------------------------- holding a claim


def held_job(session: Session, claim: Claim) -> ReviewJob:
    """The job row, locked until the transaction ends, if this claim still holds it;
    raises LeaseLost otherwise."""
    job = session.scalars(select(ReviewJob).where(ReviewJob.id == claim.job_id).with_for_update()).first()
    if job is None or job.claim != claim.token or job.status != "running":
        claim.lost.set()
        raise LeaseLost(_lost_reason(job))
    return job


def _lost_reason(job: ReviewJob | None) -> str:
    if job is None:
        return "the job was removed (reader rm)"
    if job.status == "running":
        return f"the lease ran out and {job.worker or 'another worker'} took the paper over"
    return f"the job is {job.status} now"


def fenced(db: sessionmaker, claim: Claim) -> sessionmaker:
    """A session factory like `db` whose every commit first checks, with the job row locked,
    that this claim still holds the job: an attempt that lost its lease commits nothing."""
    factory = sessionmaker(db.kw["bind"], expire_on_commit=False)

    def check(session: Session) -> None:
        held_job(session, claim)

    event.listen(factory, "before_commit", check)
    return factory


def update_job(db: sessionmaker, claim: Claim, **values) -> None:
    """Set columns of the held job (stage, paper_id, summary …); LeaseLost if it is not held."""
    with transaction(db) as session:
        job = held_job(session, claim)
        for key, value in values.items():
            setattr(job, key, value)


def finish(db: sessionmaker, claim: Claim, complete, status: str = "done") -> dict:
    """Mark the held job done (or `status`: "near-duplicate", its review skipped) in one
    transaction with `complete(session, job) -> summary` (which may delete older analyses);
    LeaseLost when the claim no longer holds it."""
    with transaction(db) as session:
        job = held_job(session, claim)
        summary = complete(session, job)
        job.summary = summary
        job.status, job.stage, job.error = status, status, ""
        job.finished_at = db_now(session)
        job.claim, job.lease_until = None, None
        return summary


def fail(
    db: sessionmaker, claim: Claim, reason: str, *, max_attempts: int = MAX_ATTEMPTS, retry: bool = True
) -> str:
    """Record a failed attempt -> the job's status now: 'pending' again (retried by any
    worker) while attempts < max_attempts and `retry`, else 'error' with the reason;
    'lost' when the claim no longer held it, 'removed' when the job is gone."""
    with transaction(db) as session:
        job = session.scalars(select(ReviewJob).where(ReviewJob.id == claim.job_id).with_for_update()).first()
        if job is None:
            return "removed"
        if job.claim != claim.token or job.status != "running":
            return "lost"
        final = not retry or job.attempts >= max_attempts
        job.status = "error" if final else "pending"
        job.error = reason if final or not retry else f"attempt {job.attempts} failed: {reason}"
        job.claim, job.lease_until = None, None
        job.finished_at = db_now(session) if final else None
        return job.status


def hand_back(db: sessionmaker, claim: Claim) -> bool:
    """Give a held job back to the queue (Ctrl-C twice): pending again, not counted as an attempt."""
    with transaction(db) as session:
        done = (
            session.execute(
                update(ReviewJob)
                .where(
                    ReviewJob.id == claim.job_id,
                    ReviewJob.claim == claim.token,
                    ReviewJob.status == "running",
                )
                .values(
                    status="pending",
                    stage="",
                    claim=None,
                    lease_until=None,
                    worker="",
                    attempts=ReviewJob.attempts - 1,
                )
                .execution_options(synchronize_session=False)
            ).rowcount
            == 1
        )
    claim.lost.set()
    return done


class Heartbeat:
    """A thread renewing the leases of the claims this process holds, every lease/4 seconds.

    A claim whose renewal finds the job no longer held (taken over after a stall, handed
    back, removed) gets its `lost` event set."""

    def __init__(self, db: sessionmaker, lease_s: float = LEASE_S):
        self.db = db
        self.lease_s = lease_s
        self.every = max(0.05, lease_s / 4)
        self._held: dict[int, Claim] = {}
        self._lock = threading.Lock()
        self._stop = threading.Event()
        self._thread: threading.Thread | None = None

    def hold(self, claim: Claim) -> None:
        with self._lock:
            self._held[claim.job_id] = claim
            if self._thread is None:
                self._thread = threading.Thread(target=self._run, name="reader-heartbeat", daemon=True)
                self._thread.start()

    def release(self, claim: Claim) -> None:
        with self._lock:
            if self._held.get(claim.job_id) is claim:
                del self._held[claim.job_id]

    def held(self) -> list[Claim]:
        with self._lock:
            return list(self._held.values())

    def stop(self) -> None:
        self._stop.set()
        if self._thread is not None:
            self._thread.join(5)

    def beat(self) -> None:
        """Renew every held lease once."""
        claims = self.held()
        if not claims:
            return
        with transaction(self.db) as session:
            now = db_now(session)
            for claim in claims:
                renewed = session.execute(
                    update(ReviewJob)
                    .where(
                        ReviewJob.id == claim.job_id,
                        ReviewJob.claim == claim.token,
                        ReviewJob.status == "running",
                    )
                    .values(lease_until=now + timedelta(seconds=self.lease_s), heartbeat_at=now)
                    .execution_options(synchronize_session=False)
                ).rowcount
                if not renewed:
                    claim.lost.set()
                    self.release(claim)

    def _run(self) -> None:
        while not self._stop.wait(self.every):
            try:
                self.beat()
            except Exception as exc:  # noqa: BLE001 - the database away for a moment: try again
                log.warning("heartbeat failed (%s); retrying in %.0f s", describe_error(exc), self.every)


# ---------------------------------------------------------------- status


@dataclass
class JobRow:
    id: int
    source: str
    paper_id: str | None
    title: str
    status: str  # queued | running | done | failed | stale (running, lease run out)
    stage: str
    worker: str
    since: datetime | None  # running: claimed at; done/failed: finished at; queued: queued at
    heartbeat_at: datetime | None
    lease_until: datetime | None
    attempts: int
    error: str
    started: datetime | None = None  # claimed at (running, done, failed): a review's duration
    # near-duplicate: the reviewed paper it is a version of ({"paper_id", "title", "reason"}),
    # and that in words
    near_duplicate: dict | None = None
    note: str = ""

    def to_json(self) -> dict:
        data = {k: getattr(self, k) for k in self.__dataclass_fields__}
        for key in ("since", "heartbeat_at", "lease_until", "started"):
            data[key] = data[key].isoformat() if data[key] else None
        return data


STATUS_NAMES = {
    "pending": "queued",
    "running": "running",
    "done": "done",
    "error": "failed",
    NEAR_DUPLICATE: NEAR_DUPLICATE,  # its review skipped: a version of a reviewed paper
}


def _near_duplicate_of(job: ReviewJob) -> dict:
    """A near-duplicate job's twin and its line, as JobRow's fields."""
    twin = (job.summary or {}).get("near_duplicate") if job.status == NEAR_DUPLICATE else None
    return {"near_duplicate": twin, "note": near_duplicate_line(twin)} if isinstance(twin, dict) else {}


def job_status(db: sessionmaker, *, queued_only: bool = False) -> list[JobRow]:
    """Every job (or only those that went through the queue), oldest first."""
    with db() as session:
        now = db_now(session)
        query = select(ReviewJob, Paper.title).outerjoin(Paper, Paper.id == ReviewJob.paper_id)
        if queued_only:
            query = query.where(ReviewJob.queued_at.is_not(None))
        rows = []
        for job, title in session.execute(query.order_by(ReviewJob.id)):
            status = STATUS_NAMES.get(job.status, job.status)
            if job.status == "running" and job.lease_until is not None and _aware(job.lease_until) < now:
                status = "stale"
            since = {"pending": job.queued_at, "running": job.started_at}.get(job.status, job.finished_at)
            rows.append(
                JobRow(
                    id=job.id,
                    source=job.source_path,
                    paper_id=job.paper_id,
                    title=title or "",
                    status=status,
                    stage=job.stage,
                    worker=job.worker or "",
                    since=_aware(since) if since else None,
                    heartbeat_at=_aware(job.heartbeat_at) if job.heartbeat_at else None,
                    lease_until=_aware(job.lease_until) if job.lease_until else None,
                    attempts=job.attempts or 0,
                    error=job.error or "",
                    started=_aware(job.started_at) if job.started_at else None,
                    **_near_duplicate_of(job),
                )
            )
        return rows
