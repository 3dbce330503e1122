"""Reviewing papers with one engine: files are queued in the database (enqueue.py) and workers
claim them (worker.py) — `reader worker` on any number of machines, the web server's thread,
and `reader review`, which queues its files and works them off in its own process (run.py).
records.py holds the result rows and a job's figures."""

from reader.review.enqueue import EnqueueReport, EnqueueRow, enqueue_sources
from reader.review.records import (
    ANALYSIS_KINDS,
    REMOVED,
    PaperReview,
    ProgressEvent,
    ReviewReport,
    analyses_of,
    is_reviewed,
    job_rows,
    review_figures,
)
from reader.review.run import run_review
from reader.review.worker import WorkerOptions, WorkerReport, WorkerStages, run_worker
from reader.text.digest import file_sha256

__all__ = [
    "ANALYSIS_KINDS",
    "REMOVED",
    "EnqueueReport",
    "EnqueueRow",
    "PaperReview",
    "ProgressEvent",
    "ReviewReport",
    "WorkerOptions",
    "WorkerReport",
    "WorkerStages",
    "analyses_of",
    "enqueue_sources",
    "file_sha256",
    "is_reviewed",
    "job_rows",
    "review_figures",
    "run_review",
    "run_worker",
]
