"""`reader review PATHS` on one machine: queue the files (enqueue.py), then work off the jobs
this run queued with `jobs` workers in this process (worker.py), and report one row per file.

Each job is claimed by one worker of any run (this one, another `reader review`, a
`reader worker` elsewhere, the web server); this run reports the ones it did not do as
skipped (reviewed before or meanwhile), busy (held by another run) or failed elsewhere.
A run killed with kill -9 leaves its jobs running with a dead holder: the next run
queues them again, and one whose analyses were stored is finished without reading again.
"""

from __future__ import annotations

import dataclasses
import threading
import time
from collections.abc import Callable
from pathlib import Path

from sqlalchemy.orm import sessionmaker

from reader import queue
from reader.review.enqueue import EnqueueRow, enqueue_sources
from reader.review.records import (
    REMOVED,
    PaperReview,
    ProgressEvent,
    ReviewReport,
    fill,
    review_figures,
)
from reader.review.worker import WorkerOptions, WorkerStages, run_worker
from reader.store.tables import Paper, ReviewJob
from reader.store.versions import NEAR_DUPLICATE, near_duplicate_line

MINE = ("queued", "requeued", "already queued")  # enqueue statuses of the jobs this run works off
LEFT_AT = ("retry", "lost")  # a last attempt here that did not settle the job


def run_review(
    sources: list[Path],
    stages: WorkerStages,
    options: WorkerOptions = WorkerOptions(jobs=2),
    *,
    read_limits=None,
    force: bool = False,
    on_event: Callable[[ProgressEvent], None] | None = None,
    stop: threading.Event | None = None,
) -> ReviewReport:
    """Review every source file with `options.jobs` workers; a failing paper is reported in its
    row (after `options.max_attempts` attempts) and never stops the others. Ctrl-C hands the
    papers in hand back to the queue and raises KeyboardInterrupt; `stop` lets them finish and
    claims no other. The files are read within `read_limits` (reader.ingest.limits.IngestLimits;
    default: its defaults)."""
    started = time.perf_counter()
    db = stages.db
    enqueued = enqueue_sources(db, sources, force=force, limits=read_limits).rows
    rows = [_first_row(db, row) for row in enqueued]
    mine = {row.job_id: n for n, row in enumerate(enqueued) if row.status in MINE}
    if not mine:
        return ReviewReport(rows, time.perf_counter() - started)
    own_jobs = dataclasses.replace(options, until_empty=True, job_ids=list(mine), drain_on_interrupt=False)
    worked = run_worker(stages, own_jobs, stop=stop, on_event=_with_eta(on_event, len(mine)))
    stopped = stop is not None and stop.is_set()
    for job_id, n in mine.items():
        outcome = worked.last.get(job_id)
        if outcome is not None and outcome.status not in LEFT_AT:
            rows[n] = dataclasses.replace(outcome, source=rows[n].source)
        elif worked.error:  # the database stayed away or is gone: the job cannot be looked up
            rows[n].status, rows[n].error = "error", f"not reviewed: {worked.error}"
        else:
            rows[n] = _row_from_job(db, job_id, rows[n], after_run=True, stopped=stopped)
    return ReviewReport(rows, time.perf_counter() - started)


def _first_row(db: sessionmaker, row: EnqueueRow) -> PaperReview:
    """The file's row as queueing left it: pending for the jobs this run works off."""
    paper = PaperReview(source=row.source, paper_id=row.paper_id)
    if row.status in MINE:
        return paper
    if row.status in ("error", "skipped"):  # unreadable, or the same bytes as another file
        paper.status, paper.error = row.status, row.detail
        return paper
    return _row_from_job(db, row.job_id, paper)


def _row_from_job(
    db: sessionmaker, job_id: int | None, row: PaperReview, *, after_run: bool = False, stopped: bool = False
) -> PaperReview:
    """The row of a job this run did not settle: as the job stands in the database (before
    the run, or `after_run`)."""
    with db() as session:
        job = session.get(ReviewJob, job_id) if job_id is not None else None
        if job is None:
            row.status, row.error = "removed", REMOVED
            return row
        paper = session.get(Paper, job.paper_id) if job.paper_id else None
        row.title = paper.title if paper is not None else row.title
        if job.status == "done":
            summary = job.summary or {}
            if paper is not None and "unchecked" not in summary:  # written before these counts
                summary = {**review_figures(session, paper.id), **summary}
            fill(row, summary, "skipped")
            row.llm_calls = row.cached_calls = 0
            row.seconds = 0.0
            row.error = "reviewed by another run meanwhile" if after_run else ""
        elif job.status == "error":
            row.status, row.error = "error", f"failed in another run: {job.error}"
        elif job.status == NEAR_DUPLICATE:
            row.near_duplicate = (job.summary or {}).get("near_duplicate") or {}
            row.status, row.error = NEAR_DUPLICATE, near_duplicate_line(row.near_duplicate)
        elif job.status == "running":
            row.status, row.error = "busy", queue.holder_of(job)
        elif stopped:
            row.status, row.error = "error", "interrupted before it started (still queued)"
        else:
            row.status, row.error = "busy", "queued again by another run"
    return row


def _with_eta(on_event: Callable[[ProgressEvent], None] | None, total: int):
    """The workers' events with this run's number of papers, its elapsed time and an ETA from
    the papers finished so far."""
    if on_event is None:
        return None
    started = time.perf_counter()
    finished: set[int] = set()
    lock = threading.Lock()

    def emit(event: ProgressEvent) -> None:
        with lock:
            if event.stage not in ("ingest", "read", "retry"):
                finished.add(event.index)
            elapsed = time.perf_counter() - started
            eta = elapsed / len(finished) * (total - len(finished)) if finished else None
            on_event(dataclasses.replace(event, total=total, elapsed_s=elapsed, eta_s=eta))

    return emit
