"""Read-side lookups over the library (papers by id, prefix, path or title; listings), used through the façade."""

from __future__ import annotations

import difflib
import re
from dataclasses import asdict, dataclass, field
from pathlib import Path

from sqlalchemy import func, select
from sqlalchemy.orm import Session

from reader.errors import PaperNotFound
from reader.store.tables import Analysis, Chunk, Paper, ReviewJob
from reader.store.versions import told_apart
from reader.text.digest import file_sha256

MIN_PREFIX = 6


def _describe(papers) -> str:
    return "; ".join(f"{p.id[:12]} {p.title[:60]!r}" for p in papers[:5])


def resolve_paper(session: Session, ref: str) -> Paper:
    """A stored paper from a full id, a unique id prefix (6+ hex characters),
    a file path (by content hash, else by stored source path) or a
    case-insensitive title prefix. PaperNotFound lists the candidates."""
    ref = (ref or "").strip()
    if not ref:
        raise PaperNotFound("no paper given; pass an id, id prefix, file path or title (see `reader papers`)")
    for find in (_by_id, _by_id_prefix, _by_path, _by_title):
        paper = find(session, ref)
        if paper is not None:
            return paper
    raise _not_found(session, ref)


def _by_id(session: Session, ref: str) -> Paper | None:
    return session.get(Paper, ref.lower())


def _by_id_prefix(session: Session, ref: str) -> Paper | None:
    lowered = ref.lower()
    if not (re.fullmatch(r"[0-9a-f]+", lowered) and len(lowered) >= MIN_PREFIX):
        return None
    matches = session.scalars(select(Paper).where(Paper.id.startswith(lowered)).limit(6)).all()
    if len(matches) > 1:
        raise PaperNotFound(
            f"id prefix {ref!r} matches several papers: {_describe(matches)}; give more characters"
        )
    return matches[0] if matches else None


def _by_path(session: Session, ref: str) -> Paper | None:
    """The paper of a file: by its content's hash, else by the source path stored with it."""
    path = Path(ref).expanduser()
    if path.is_file():
        try:
            digest = file_sha256(path)
        except OSError:
            digest = None
        paper = session.get(Paper, digest) if digest else None
        if paper is not None:
            return paper
    if not (path.suffix or "/" in ref):
        return None
    candidates = {str(path), str(path.resolve())} if path.exists() else {str(path)}
    matches = session.scalars(select(Paper).where(Paper.source_path.in_(candidates))).all()
    if len(matches) == 1:
        return matches[0]
    if not matches and path.is_file():
        raise PaperNotFound(
            f"{ref}: this file is not in the library; ingest it first with `reader ingest {ref}`"
        )
    return None


def _by_title(session: Session, ref: str) -> Paper | None:
    """The one paper whose title starts with `ref` (any case), or whose title it is."""
    lowered = ref.lower()
    escaped = lowered.replace("\\", "\\\\").replace("%", "\\%").replace("_", "\\_")
    matches = session.scalars(
        select(Paper).where(func.lower(Paper.title).like(escaped + "%", escape="\\")).limit(6)
    ).all()
    if len(matches) <= 1:
        return matches[0] if matches else None
    exact = [p for p in matches if p.title.lower() == lowered]
    if len(exact) == 1:
        return exact[0]
    raise PaperNotFound(f"{ref!r} matches several titles: {_describe(matches)}; give an id prefix instead")


def _not_found(session: Session, ref: str) -> PaperNotFound:
    """The error for a reference nothing matched, with the titles it comes close to."""
    lowered = ref.lower()
    titles = {p.title: p for p in session.scalars(select(Paper)).all()}
    close = difflib.get_close_matches(ref, list(titles), n=3, cutoff=0.4)
    if not close:
        close = [t for t in titles if lowered in t.lower()][:3]
    hint = f"; did you mean: {_describe([titles[t] for t in close])}" if close else ""
    if re.fullmatch(r"[0-9a-f]+", lowered) and len(lowered) < MIN_PREFIX:
        hint += f"; an id prefix needs {MIN_PREFIX} or more characters"
    return PaperNotFound(f"no paper matches {ref!r}{hint}; see `reader papers` for ids and titles")


def resolve_paper_id(db, ref: str) -> str:
    """resolve_paper's id, in a session of its own."""
    with db() as session:
        return resolve_paper(session, ref).id


@dataclass
class PaperInfo:
    """One stored paper as `reader papers` lists it."""

    id: str
    title: str
    authors: list[str] = field(default_factory=list)
    year: int | None = None
    pages: int = 0
    chunks: int = 0
    language: str = ""
    source_path: str = ""
    ingested_at: str | None = None
    status: str = "ingested"  # the latest review job's status, else 'analysed' or 'ingested'
    # for a paper whose title another has too (or a near-duplicate): what tells them apart
    # (reader.store.versions.told_apart); "" otherwise
    apart: str = ""

    def to_json(self) -> dict:
        return asdict(self)


def list_papers(session: Session, paper_id: str | None = None) -> list[PaperInfo]:
    """Every stored paper, newest first (only the one with `paper_id` when given)."""

    def only(query, column):
        return query if paper_id is None else query.where(column == paper_id)

    chunk_counts = dict(
        session.execute(
            only(select(Chunk.paper_id, func.count()), Chunk.paper_id).group_by(Chunk.paper_id)
        ).all()
    )
    analysed = set(session.scalars(only(select(Analysis.paper_id), Analysis.paper_id).distinct()).all())
    latest_job = {}
    for pid, status in session.execute(
        only(select(ReviewJob.paper_id, ReviewJob.status), ReviewJob.paper_id)
        .where(ReviewJob.paper_id.is_not(None))
        .order_by(ReviewJob.id)
    ).all():
        latest_job[pid] = status
    papers = session.scalars(
        only(select(Paper), Paper.id).order_by(Paper.ingested_at.desc(), Paper.title)
    ).all()
    apart = told_apart(session, [p.id for p in papers]) if paper_id is None else {}
    rows = []
    for paper in papers:
        rows.append(
            PaperInfo(
                id=paper.id,
                title=paper.title,
                authors=list(paper.authors or []),
                year=paper.year,
                pages=paper.pages,
                chunks=chunk_counts.get(paper.id, 0),
                language=paper.language,
                source_path=paper.source_path,
                ingested_at=paper.ingested_at.isoformat() if paper.ingested_at else None,
                status=latest_job.get(paper.id) or ("analysed" if paper.id in analysed else "ingested"),
                apart=apart.get(paper.id, ""),
            )
        )
    return rows


def library_titles(session: Session) -> dict[str, str]:
    """paper id -> title, for every stored paper."""
    return {pid: title for pid, title in session.execute(select(Paper.id, Paper.title))}


def paper_keys(session: Session) -> dict[str, str]:
    """sha256 and source file name -> paper id (how labelled question files name papers)."""
    keys: dict[str, str] = {}
    for pid, source in session.execute(select(Paper.id, Paper.source_path)):
        keys[pid] = pid
        keys[Path(source).name] = pid
    return keys


@dataclass
class FollowUpItem:
    """One follow-up question of a paper's review as stored (questions.origin "followup"): its
    answer, whether the papers did not say, and its sources' labels, pages and quotes."""

    question: str
    answer: str
    not_found: bool
    grounded: bool
    sources: list[dict] = field(default_factory=list)  # {"label", "pages", "text"}

    def to_json(self) -> dict:
        return asdict(self)


def followups_of(session: Session, paper_id: str) -> list[FollowUpItem]:
    """The paper's follow-up questions in the order they were asked."""
    from reader.store.tables import Question

    rows = session.scalars(
        select(Question)
        .where(Question.paper_id == paper_id, Question.origin == "followup")
        .order_by(Question.id)
    )
    items = []
    for row in rows:
        details = row.details or {}
        sources = [
            {
                "label": s.get("label") or "",
                "pages": s.get("pages") or "",
                "text": " ".join(str(s.get("text") or "").split()),
            }
            for s in details.get("sources") or []
            if isinstance(s, dict)
        ]
        # a withheld draft keeps the passages it was checked against; rows stored before
        # "not_found" was kept in the details fall back on having no sources
        not_found = bool(details.get("not_found", not sources))
        items.append(FollowUpItem(row.question, row.answer, not_found, bool(row.grounded), sources))
    return items


__all__ = ["resolve_paper", "list_papers", "library_titles", "paper_keys", "followups_of", "FollowUpItem"]
