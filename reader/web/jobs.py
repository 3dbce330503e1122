"""Reviews of uploaded PDFs, with progress the pages can poll.

Uploads are stored as READER_HOME/uploads/<sha256>/<the browser's file name reduced to
harmless characters> and go on the database's review queue (reader.queue), where the engine
of `reader worker` reviews them: one worker thread of this server, one paper at a time (a
review is CPU- and LLM-bound, and two at once on a small machine only make both slower), or
`reader worker` processes when READER_WORKERS is set. The list of uploads is read from the
database; the live stage and percent of the paper in hand come from the worker's events.
"""

from __future__ import annotations

import hashlib
import re
import threading
import time
import traceback
import uuid
from collections.abc import Callable
from dataclasses import asdict, dataclass, field, replace
from datetime import UTC, datetime
from pathlib import Path

from reader.errors import ReaderError


@dataclass
class JobProgress:
    id: str
    name: str  # display only
    status: str = "queued"  # queued | running | done | error | near-duplicate (not reviewed)
    stage: str = "queued"
    percent: int = 0
    paper_id: str | None = None
    error: str = ""
    created_at: str = field(default_factory=lambda: datetime.now(UTC).isoformat())
    started: float | None = None  # time.time() when the review began, for time estimates
    finished_at: float | None = None  # done or failed: when (with `started`, how long it took)
    force: bool = False  # "Review again": reviewed even if it was before
    # done: the stored paper it looks like a version of ({"paper_id", "title", "reason"},
    # reader.web.library.versions_of), None when it looks like none; near-duplicate: the
    # reviewed paper whose version it is, which is why it was not reviewed (`note` says so)
    similar: dict | None = None
    note: str = ""

    @property
    def finished(self) -> bool:
        return self.status in FINISHED

    def to_json(self) -> dict:
        return asdict(self)


NEAR_DUPLICATE = "near-duplicate"
FINISHED = ("done", "error", NEAR_DUPLICATE)


def wait_for(
    get: Callable[[str], JobProgress | None], job_id: str, timeout: float, poll_s: float = 0.05
) -> JobProgress | None:
    """`get(job_id)` once the job has finished or is gone, or as it is after `timeout` seconds."""
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        job = get(job_id)
        if job is None or job.finished:
            return job
        time.sleep(poll_s)
    return get(job_id)


# ---------------------------------------------------------------- uploads

_UNSAFE = re.compile(r"[^\w.()\[\] -]+")


def upload_file_name(display: str) -> str:
    """The browser's file name reduced to one harmless path component (letters of any script,
    digits, spaces and . _ - ( ) [ ]), ending in .pdf; it is kept as the paper's file name."""
    name = _UNSAFE.sub("_", display).strip(" ._") or "upload"
    if not name.lower().endswith(".pdf"):
        name += ".pdf"
    if len(name) > 120:
        name = name[:116].rstrip(" ._") + ".pdf"
    return name


def store_named_upload(upload_dir: Path, data: bytes, display: str) -> Path:
    """Write the bytes to upload_dir/<sha256>/<file name> (a file already stored under its
    sha256 is reused, whatever it was called) and return the path."""
    digest = hashlib.sha256(data).hexdigest()
    folder = upload_dir / digest
    folder.mkdir(parents=True, exist_ok=True)
    existing = sorted(p for p in folder.glob("*.pdf") if p.is_file())
    if existing:
        return existing[0]
    path = folder / upload_file_name(display)
    tmp = folder / f".{uuid.uuid4().hex}.part"
    tmp.write_bytes(data)
    tmp.replace(path)
    return path


# job status on the queue -> the upload page's status
_QUEUE_STATUS = {
    "queued": "queued",
    "running": "running",
    "stale": "running",
    "done": "done",
    "failed": "error",
    NEAR_DUPLICATE: NEAR_DUPLICATE,
}


class QueueRunner:
    """Uploads as rows of the database's review queue (reader.queue): the list is read from
    the database, so it survives a restart of the server, and a job left pending or running
    by a stopped server is picked up again. Reviews run in a worker thread of this server
    (`reader.queue.work`, the engine of `reader worker`), unless READER_WORKERS is set: then
    `reader worker` processes do them. The worker thread's events give the live stage and
    percent."""

    def __init__(self, ctx, *, start_worker: bool | None = None):
        self.ctx = ctx
        self._live: dict[str, dict] = {}  # job source path -> {"stage", "percent", "started"}
        self._lock = threading.Lock()
        self._stop = threading.Event()
        self._abandon = threading.Event()
        self._thread: threading.Thread | None = None
        self._creeps: dict[str, object] = {}
        self._versions: dict[str, dict | None] = {}  # paper id -> versions_of's answer, once
        self.runs_worker = (not ctx.settings.workers) if start_worker is None else start_worker

    # ---- the worker thread
    def start(self) -> None:
        if not self.runs_worker or self._thread is not None:
            return
        self._thread = threading.Thread(target=self._work, name="upload-worker", daemon=True)
        self._thread.start()

    def _work(self) -> None:
        try:
            self.ctx.queue.work(
                jobs=1, poll_s=1.0, stop=self._stop, abandon=self._abandon, on_event=self._on_event
            )
        except Exception:  # the pages still list the jobs; a restart resumes them
            traceback.print_exc()

    def shutdown(self) -> None:
        """Stop taking jobs; a review in hand is handed back to the queue (not counted as an
        attempt), so the next start of the server resumes it."""
        self._stop.set()
        self._abandon.set()
        for creep in list(self._creeps.values()):
            creep.stop()
        if self._thread is not None:
            self._thread.join(5)

    def _on_event(self, event) -> None:
        import time

        from reader.web import progress as bar

        source = event.source
        with self._lock:
            live = self._live.setdefault(
                source, {"stage": "", "percent": 1, "started": time.time(), "details": []}
            )

        def progress(stage: str, fraction: float | None = None) -> None:
            with self._lock:
                live["stage"] = stage
                if fraction is not None:
                    live["percent"] = max(live["percent"], min(99, int(round(fraction * 100))))

        if event.stage != "ingest" and source in self._creeps:
            self._creeps.pop(source).stop()
        if event.stage == "ingest":
            creep = self._creeps[source] = bar.IngestCreep(progress)
            creep.start()
        elif event.stage == "read" and event.detail:
            progress(f"read: {event.detail}", bar.read_fraction(event.detail, live["details"]))
        elif event.stage == "read":
            progress("read", bar.STAGE_FRACTIONS["read"])
        else:  # the outcome: reviewed | error | retry | lost
            with self._lock:
                self._live.pop(source, None)

    # ---- jobs
    def submit(self, pdf_path: Path, name: str, *, force: bool = False, fresh: bool = False) -> JobProgress:
        """Queue a stored upload; `force` reviews it again, `fresh` without the LLM cache."""
        report = self.ctx.queue.enqueue([pdf_path], force=force, fresh=fresh)
        [row] = report.rows
        if row.status == "error":
            raise ReaderError(f"{name}: {row.detail or 'could not be queued'}")
        self.start()
        job = self.get(str(row.job_id)) if row.job_id else None
        # the answer to the upload names the file as it was sent (the page escapes it); the
        # list shows the stored file name
        return replace(job, name=name) if job else JobProgress(id=str(row.job_id), name=name)

    def active_for(self, pdf_path: Path) -> JobProgress | None:
        """The queued or running job of this stored upload (uploads/<sha256>/<name>), if any."""
        digest = pdf_path.parent.name if pdf_path.parent.name != "uploads" else pdf_path.stem
        for row in self._rows():
            if digest in (row.paper_id, Path(row.source).parent.name, Path(row.source).stem):
                job = self._progress(row)
                if not job.finished:
                    return job
        return None

    def _rows(self):
        return self.ctx.queue.jobs(queued_only=True).rows

    def _progress(self, row) -> JobProgress:
        status = _QUEUE_STATUS.get(row.status, row.status)
        with self._lock:
            live = dict(self._live.get(row.source, {}))
        if status == "done":
            percent, stage = 100, "done"
        elif status == NEAR_DUPLICATE:
            percent, stage = 100, "not reviewed"
        elif status == "running":
            percent, stage = live.get("percent", 1), live.get("stage") or row.stage or "running"
        elif status == "error":
            percent, stage = 0, "failed"
        else:
            percent, stage = 0, "queued" + (f" (attempt {row.attempts + 1})" if row.attempts else "")
        since = row.since.isoformat() if row.since else ""
        return JobProgress(
            id=str(row.id),
            name=Path(row.source).name,
            status=status,
            stage=stage,
            percent=percent,
            paper_id=row.paper_id,
            error=row.error if status == "error" else "",
            created_at=since,
            started=live.get("started") or (row.started.timestamp() if row.started else None),
            finished_at=row.since.timestamp() if status in FINISHED and row.since else None,
            similar=row.near_duplicate if status == NEAR_DUPLICATE else None,
            note=row.note if status == NEAR_DUPLICATE else "",
        )

    def get(self, job_id: str) -> JobProgress | None:
        for row in self._rows():
            if str(row.id) == str(job_id):
                return self._with_versions([self._progress(row)])[0]
        return None

    def all(self) -> list[JobProgress]:
        """Every upload on the queue, newest first (read from the database)."""
        return self._with_versions([self._progress(row) for row in reversed(self._rows())])

    def _with_versions(self, jobs: list[JobProgress]) -> list[JobProgress]:
        """Each finished job with the paper it looks like a version of, worked out once per paper."""
        from reader.web import library

        done = [j.paper_id for j in jobs if j.status == "done" and j.paper_id]
        new = [pid for pid in dict.fromkeys(done) if pid not in self._versions]
        if new:
            self._versions.update(self.ctx.library.view(library.versions_of, new))
        for job in jobs:
            if job.status == "done" and job.paper_id:
                job.similar = self._versions.get(job.paper_id)
        return jobs

    def wait(self, job_id: str, timeout: float) -> JobProgress | None:
        return wait_for(self.get, job_id, timeout)
