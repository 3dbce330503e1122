"""Putting files on the review queue: each file's bytes go into the database (paper_files) and
its job becomes pending, once per content; a worker on any machine then reviews it
(worker.py). `reader review --queue`, `reader review`, the web page's uploads."""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

from sqlalchemy import select
from sqlalchemy.orm import sessionmaker

from reader import queue
from reader.errors import IngestError
from reader.ingest.limits import IngestLimits, read_source
from reader.review.records import is_reviewed, review_figures
from reader.store.db import transaction
from reader.store.tables import Paper, ReviewJob, utcnow
from reader.text.digest import sha256_bytes
from reader.text.paths import stored_path


@dataclass
class EnqueueRow:
    source: str
    paper_id: str | None
    status: str  # queued | requeued | already queued | running | done | skipped | error
    detail: str = ""
    job_id: int | None = None

    def to_json(self) -> dict:
        return {k: getattr(self, k) for k in self.__dataclass_fields__}


@dataclass
class EnqueueReport:
    rows: list[EnqueueRow]

    def count(self, *statuses: str) -> int:
        return sum(1 for r in self.rows if r.status in statuses)

    @property
    def failed(self) -> list[EnqueueRow]:
        return [r for r in self.rows if r.status == "error"]

    def to_json(self) -> dict:
        return {
            "papers": [r.to_json() for r in self.rows],
            "queued": self.count("queued", "requeued"),
            "already_queued": self.count("already queued", "running"),
            "skipped": self.count("done", "skipped"),
            "failed": len(self.failed),
        }


def enqueue_sources(
    db: sessionmaker,
    sources: list[Path],
    force: bool = False,
    limits: IngestLimits | None = None,
    fresh: bool = False,
) -> EnqueueReport:
    """Put each file on the queue once (by content); its bytes go into the database. Only
    regular files within `limits` are read (reader.ingest.limits). `fresh`: their reads skip
    the LLM cache."""
    rows: list[EnqueueRow] = []
    seen: dict[str, str] = {}
    for source in sources:
        source = Path(source)
        try:
            data = read_source(source, limits)
        except IngestError as exc:
            rows.append(EnqueueRow(str(source), None, "error", f"{exc.reason}; nothing queued"))
            continue
        sha = sha256_bytes(data)
        if sha in seen:
            rows.append(EnqueueRow(str(source), sha, "skipped", f"same content as {seen[sha]}"))
            continue
        seen[sha] = str(source)
        rows.append(_enqueue_one(db, source, sha, data, force, fresh))
    return EnqueueReport(rows)


def _enqueue_one(
    db: sessionmaker, source: Path, sha: str, data: bytes, force: bool, fresh: bool = False
) -> EnqueueRow:
    with transaction(db, lock=f"reader:review:{sha}") as session:
        paper = session.get(Paper, sha)
        if paper is not None and not force and is_reviewed(session, sha):
            job = session.scalars(
                select(ReviewJob).where(ReviewJob.paper_id == sha).order_by(ReviewJob.id.desc()).limit(1)
            ).first()
            if job is None:  # reviewed outside any review (`reader read`): its job says so
                job = ReviewJob(
                    source_path=stored_path(source),
                    paper_id=sha,
                    status="done",
                    stage="done",
                    summary=review_figures(session, sha),
                    started_at=utcnow(),
                    finished_at=utcnow(),
                )
                session.add(job)
                session.flush()
            if job.status not in ("pending", "running"):
                return EnqueueRow(
                    str(source), sha, "done", "reviewed already (--force queues it again)", job.id
                )
        done = queue.enqueue_file(
            session,
            sha256=sha,
            name=stored_path(source),
            data=data,
            paper_exists=paper is not None,
            force=force,
            fresh=fresh,
        )
    return EnqueueRow(str(source), sha, done.status, done.detail, done.job_id)
