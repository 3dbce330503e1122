"""Background reviews for uploaded PDFs, with progress the pages can poll.

Uploads are stored under READER_HOME/uploads by the sha256 of their bytes (the
name the browser sent is only ever displayed). One worker thread runs reviews
one after another: a review is CPU- and LLM-bound, and running two at once on a
small machine only makes both slower. Progress lives in memory (stage, percent)
for the live view; the review itself records its ReviewJob row.
"""

from __future__ import annotations

import hashlib
import threading
import traceback
import uuid
from collections.abc import Callable
from concurrent.futures import ThreadPoolExecutor
from dataclasses import asdict, dataclass, field
from datetime import datetime, timezone
from pathlib import Path

from reader.errors import ReaderError

# review(pdf_path, ctx, on_progress) -> paper_id; on_progress(stage, fraction 0..1 or None)
ReviewFn = Callable[[Path, object, Callable[[str, float | None], None]], str]


@dataclass
class JobProgress:
    id: str
    name: str  # display only
    status: str = "queued"  # queued | running | done | error
    stage: str = "queued"
    percent: int = 0
    paper_id: str | None = None
    error: str = ""
    created_at: str = field(default_factory=lambda: datetime.now(timezone.utc).isoformat())
    started: float | None = None  # time.time() when the review began, for time estimates
    finished_at: float | None = None
    force: bool = False  # "Review again": reviewed even if it was before

    @property
    def finished(self) -> bool:
        return self.status in ("done", "error")

    def to_json(self) -> dict:
        return asdict(self)


def store_upload(upload_dir: Path, data: bytes) -> Path:
    """Write the bytes to upload_dir/<sha256>.pdf (idempotent) and return the path."""
    upload_dir.mkdir(parents=True, exist_ok=True)
    digest = hashlib.sha256(data).hexdigest()
    path = upload_dir / f"{digest}.pdf"
    if not path.exists():
        tmp = upload_dir / f".{digest}.{uuid.uuid4().hex}.part"
        tmp.write_bytes(data)
        tmp.replace(path)
    return path


class ReviewRunner:
    def __init__(self, ctx, review: ReviewFn, *, max_workers: int = 1, keep: int = 200):
        self.ctx = ctx
        self.review = review
        self.keep = keep
        self._jobs: dict[str, JobProgress] = {}
        self._paths: dict[str, Path] = {}
        self._lock = threading.Lock()
        self._pool = ThreadPoolExecutor(max_workers=max_workers, thread_name_prefix="review")

    def submit(self, pdf_path: Path, name: str, *, force: bool = False) -> JobProgress:
        job = JobProgress(id=uuid.uuid4().hex[:12], name=name, force=force)
        with self._lock:
            self._jobs[job.id] = job
            self._paths[job.id] = pdf_path
            self._forget_old()
        self._pool.submit(self._run, job, pdf_path)
        return self.get(job.id)

    def get(self, job_id: str) -> JobProgress | None:
        with self._lock:
            job = self._jobs.get(job_id)
            return JobProgress(**job.to_json()) if job else None

    def all(self) -> list[JobProgress]:
        """Every job, newest first."""
        with self._lock:
            jobs = [JobProgress(**j.to_json()) for j in self._jobs.values()]
        return sorted(jobs, key=lambda j: j.created_at, reverse=True)

    def active_for(self, pdf_path: Path) -> JobProgress | None:
        """The queued or running job of this stored file, if there is one."""
        with self._lock:
            for job, path in self._paths.items():
                current = self._jobs.get(job)
                if path == pdf_path and current is not None and not current.finished:
                    return JobProgress(**current.to_json())
        return None

    def wait(self, job_id: str, timeout: float) -> JobProgress | None:
        """Block until the job finishes (for the CLI and tests)."""
        import time

        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            job = self.get(job_id)
            if job is None or job.finished:
                return job
            time.sleep(0.05)
        return self.get(job_id)

    def shutdown(self) -> None:
        self._pool.shutdown(wait=False, cancel_futures=True)

    def _update(self, job: JobProgress, **changes) -> None:
        with self._lock:
            for key, value in changes.items():
                setattr(job, key, value)

    def _forget_old(self) -> None:
        finished = [j for j in self._jobs.values() if j.finished]
        for job in finished[: max(0, len(self._jobs) - self.keep)]:
            del self._jobs[job.id]
            self._paths.pop(job.id, None)

    def _run(self, job: JobProgress, pdf_path: Path) -> None:
        import time

        self._update(job, status="running", stage="starting", percent=1, started=time.time())

        def on_progress(stage: str, fraction: float | None = None) -> None:
            changes = {"stage": stage}
            if fraction is not None:
                # Never move backwards, never claim 100 before the review returns.
                changes["percent"] = max(job.percent, min(99, int(round(fraction * 100))))
            self._update(job, **changes)

        def shown(message: str) -> str:
            # The stored path means nothing to the person who uploaded; their file name does.
            return message.replace(str(pdf_path), job.name)

        try:
            paper_id = self.review(pdf_path, self.ctx, on_progress, **({"force": True} if job.force else {}))
            # the name the file was uploaded with, not its stored <sha256>.pdf
            name_paper = getattr(self.ctx, "name_paper", None)
            if name_paper is not None and paper_id:
                try:
                    name_paper(paper_id, job.name)
                except Exception:  # the name is a nicety; the review stands
                    traceback.print_exc()
        except ReaderError as exc:
            self._update(job, status="error", stage="failed", error=shown(str(exc)), finished_at=time.time())
        except Exception as exc:  # a bug, but one upload must not take the server down
            traceback.print_exc()
            self._update(job, status="error", stage="failed", finished_at=time.time(),
                         error=shown(f"internal error: {type(exc).__name__}: {exc}"))
        else:
            self._update(job, status="done", stage="done", percent=100, paper_id=paper_id,
                         finished_at=time.time())
