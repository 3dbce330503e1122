"""Reviewing papers: on one machine (`reader review`, batch.py) or by workers on any number of
machines sharing one database (`reader worker`, worker.py); both claim jobs through
reader.queue. records.py holds what they share: the result rows and a job's figures."""

from reader.review.batch import run_review
from reader.review.records import (
    ANALYSIS_KINDS,
    REMOVED,
    PaperReview,
    ProgressEvent,
    ReviewReport,
    analyses_of,
    find_job,
    is_reviewed,
    job_rows,
    review_figures,
)
from reader.review.worker import (
    EnqueueReport,
    WorkerReport,
    enqueue_sources,
    run_worker,
)
from reader.text.digest import file_sha256

__all__ = [
    "ANALYSIS_KINDS", "REMOVED", "EnqueueReport", "PaperReview", "ProgressEvent", "ReviewReport",
    "WorkerReport", "analyses_of", "enqueue_sources", "file_sha256", "find_job", "is_reviewed",
    "job_rows", "review_figures", "run_review", "run_worker",
]
