"""What a review records and reports: the result rows, a job's figures, and the steps of an
attempt that a worker (worker.py) takes, for `reader review`, `reader worker` and uploads alike.

deep_read stores a paper's analyses in one transaction at the very end, so the database
holds either all of a paper's new analyses or none of them; `summary["read_since"]` (when
the read started) tells which analyses a job wrote — ids cannot, since SQLite reuses the
ids of deleted rows. Finishing deletes the paper's older analyses in the same transaction
that marks the job done, so a paper never carries two reviews.
"""

from __future__ import annotations

from dataclasses import asdict, dataclass, field
from datetime import datetime

from sqlalchemy import delete, distinct, func, select
from sqlalchemy.orm import Session, sessionmaker

from reader import queue
from reader.audit.record import verdict_counts
from reader.store.db import transaction
from reader.store.tables import (
    Analysis,
    AnalysisIteration,
    LLMCall,
    Paper,
    ReviewJob,
    utcnow,
)
from reader.store.versions import NEAR_DUPLICATE, version_among

ANALYSIS_KINDS = ("critique", "synthesis")
REMOVED = "removed from the library while it was being reviewed (reader rm); not reviewed"


@dataclass
class PaperReview:
    """One row of the final table (and of `--json`)."""

    source: str
    paper_id: str | None = None
    title: str = ""
    # reviewed | skipped | error | busy | removed | near-duplicate (workers: retry | lost)
    status: str = "pending"
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
    # near-duplicate: the reviewed paper it is a version of ({"paper_id", "title", "reason"})
    near_duplicate: dict | None = None

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
    # one line each for what was left out before reviewing (a Zotero item without a PDF, …)
    notes: list[str] = field(default_factory=list)

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
            "near_duplicates": len(self.by_status(NEAR_DUPLICATE)),
            "unchecked": self.unchecked,
            "unanswered": self.unanswered,
            "seconds": round(self.seconds, 2),
            "notes": list(self.notes),
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


# ---------------------------------------------------------------- job table


def analyses_of(session: Session, paper_id: str, since: datetime | None = None) -> list[Analysis]:
    query = select(Analysis).where(Analysis.paper_id == paper_id, Analysis.kind.in_(ANALYSIS_KINDS))
    if since is not None:
        query = query.where(Analysis.created_at >= since)
    return list(session.scalars(query.order_by(Analysis.created_at, Analysis.id)))


def is_reviewed(session: Session, paper_id: str, since: datetime | None = None) -> bool:
    kinds = {a.kind for a in analyses_of(session, paper_id, since)}
    return kinds >= set(ANALYSIS_KINDS)


def reviewed_twin(session: Session, paper_id: str) -> dict | None:
    """The reviewed paper (a critique and a synthesis stored) that `paper_id` looks like a
    version of, the first added first ({"paper_id", "title", "reason"}); None when none."""
    reviewed = (
        select(Analysis.paper_id)
        .where(Analysis.kind.in_(ANALYSIS_KINDS), Analysis.paper_id != paper_id)
        .group_by(Analysis.paper_id)
        .having(func.count(distinct(Analysis.kind)) == len(ANALYSIS_KINDS))
    )
    candidates = session.scalars(
        select(Paper.id).where(Paper.id.in_(reviewed)).order_by(Paper.ingested_at, Paper.id)
    ).all()
    return version_among(session, paper_id, candidates) if candidates else None


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
            select(AnalysisIteration)
            .where(AnalysisIteration.analysis_id == analysis.id)
            .order_by(AnalysisIteration.iteration.desc())
            .limit(1)
        ).first()
        if last is not None:
            sentences += last.n_sentences
            flagged += last.n_flagged
            last_ids.append(last.id)
        regenerations += analysis.regenerations
    counts = verdict_counts(session, last_ids).values()
    calls = session.execute(
        select(LLMCall.cached, func.count())
        .where(LLMCall.paper_id == paper_id, LLMCall.id > calls_above_id)
        .group_by(LLMCall.cached)
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


def since_of(job: ReviewJob) -> datetime | None:
    """When this job's deep read started (analyses from then on are its own)."""
    raw = (job.summary or {}).get("read_since")
    return datetime.fromisoformat(raw) if raw else None


def max_id(session: Session, column) -> int:
    return session.scalar(select(func.max(column))) or 0


def completion(paper_id: str, seconds: float):
    """What marking a job done does, in the transaction that marks it (reader.queue.finish):
    keep only the analyses this job wrote, and sum up its figures."""

    def complete(session: Session, job: ReviewJob) -> dict:
        since = since_of(job)
        if since is not None:
            session.execute(
                delete(Analysis)
                .where(
                    Analysis.paper_id == paper_id,
                    Analysis.created_at < since,
                    Analysis.kind.in_(ANALYSIS_KINDS),
                )
                .execution_options(synchronize_session=False)
            )
        summary = review_figures(session, paper_id, int((job.summary or {}).get("call_floor", 0)))
        summary["seconds"] = round(seconds, 3)
        if since is not None:
            summary["read_since"] = since.isoformat()
        return summary

    return complete


def fill(outcome: PaperReview, summary: dict, status: str) -> None:
    outcome.status = status
    for key in (
        "sentences",
        "flagged",
        "unchecked",
        "unanswered",
        "final_ratio",
        "regenerations",
        "llm_calls",
        "cached_calls",
        "seconds",
    ):
        if key in summary:
            setattr(outcome, key, summary[key])


def job_exists(db: sessionmaker, job_id: int) -> bool:
    with db() as session:
        return session.get(ReviewJob, job_id) is not None


def start_read(db: sessionmaker, claim: queue.Claim, paper_id: str, run: str, source: str) -> None:
    """Tie the held job to its paper and note when its read starts (see since_of)."""
    with transaction(db) as session:
        if session.get(Paper, paper_id) is None:
            raise PaperRemoved(REMOVED)
        job = queue.held_job(session, claim)
        job.paper_id, job.source_path, job.stage = paper_id, source, "read"
        job.summary = {
            **{k: v for k, v in (job.summary or {}).items() if k in ("force", "fresh", "previous")},
            **queue.owner(run),
            "read_since": utcnow().isoformat(),
            "call_floor": max_id(session, LLMCall.id),
        }


def check_stored(db: sessionmaker, claim: queue.Claim, paper_id: str) -> None:
    with transaction(db) as session:
        job = queue.held_job(session, claim)
        if not is_reviewed(session, paper_id, since_of(job)):
            raise PaperFailed("the deep read finished without storing a critique and a synthesis")


class PaperFailed(Exception):
    pass


class PaperRemoved(Exception):
    pass


def reason_of(exc: BaseException) -> str:
    """One line for the paper's row: a database error's SQL and parameters are left out."""
    from reader.errors import ReaderError, describe_error

    if isinstance(exc, PaperFailed | PaperRemoved | ReaderError):
        return str(exc)
    return describe_error(exc)


def job_rows(db: sessionmaker) -> list[dict]:
    """Every job with its status (id, source, paper, status, stage, error, summary)."""
    with db() as session:
        jobs = session.scalars(select(ReviewJob).order_by(ReviewJob.id)).all()
        return [
            {
                "id": j.id,
                "source_path": j.source_path,
                "paper_id": j.paper_id,
                "status": j.status,
                "stage": j.stage,
                "error": j.error,
                "summary": dict(j.summary or {}),
            }
            for j in jobs
        ]
