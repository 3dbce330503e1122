"""The library table as plain data read from the database: each paper's status and audit
figures, its sort orders, the full-text search over passages and analyses, and what the
library page does besides reading: deleting a paper with its files, zipping the notes."""

from __future__ import annotations

import io
import tempfile
import zipfile
from dataclasses import dataclass, field
from datetime import datetime
from pathlib import Path

from sqlalchemy import func, select
from sqlalchemy.orm import Session

from reader.audit.loop import UNANSWERED, UNCHECKED
from reader.store.tables import Analysis, AnalysisIteration, Paper, ReviewJob, SentenceVerdict
from reader.store.versions import NEAR_DUPLICATE, told_apart
from reader.store.versions import versions_of as versions_of  # the upload page's jobs (web/jobs.py)


@dataclass
class LibraryRow:
    id: str
    title: str
    status: str
    sentences: int
    flagged: int
    flagged_ratio: float | None  # None until an analysis exists
    regenerations: int
    ingested_at: datetime | None
    unchecked: int = 0
    unanswered: int = 0
    authors: list[str] = field(default_factory=list)
    year: int | None = None
    match: str = ""  # for a full-text search: where the words were found
    # for a row whose title another row has too: what tells them apart (file, pages, when added)
    apart: str = ""


def paper_file_name(paper: Paper) -> str:
    """The name the paper's file came in with (before migration 0004: its stored name)."""
    from pathlib import PurePath

    return paper.file_name or PurePath(paper.source_path or "").name or f"{paper.id[:12]}.pdf"


def paper_status_of(session: Session, paper_id: str) -> str | None:
    """The library's status of one paper, None when there is no such paper."""
    if session.get(Paper, paper_id) is None:
        return None
    job = session.scalars(
        select(ReviewJob).where(ReviewJob.paper_id == paper_id).order_by(ReviewJob.id.desc()).limit(1)
    ).first()
    has_analysis = (
        session.scalar(select(func.count()).select_from(Analysis).where(Analysis.paper_id == paper_id)) > 0
    )
    return paper_status(job, has_analysis)


def _latest_jobs(session: Session) -> dict[str, ReviewJob]:
    latest: dict[str, ReviewJob] = {}
    for job in session.scalars(
        select(ReviewJob).where(ReviewJob.paper_id.is_not(None)).order_by(ReviewJob.id)
    ):
        latest[job.paper_id] = job
    return latest


def paper_status(job: ReviewJob | None, has_analysis: bool) -> str:
    if job is not None and job.status in ("pending", "running"):
        return f"{job.status}: {job.stage}" if job.stage else job.status
    if job is not None and job.status == "error":
        return "error"
    if has_analysis:
        return "reviewed"
    return NEAR_DUPLICATE if job is not None and job.status == NEAR_DUPLICATE else "ingested"


SORT_KEYS = {
    "title": lambda r: r.title.lower(),
    "status": lambda r: r.status,
    "sentences": lambda r: r.sentences,
    "flagged": lambda r: -1.0 if r.flagged_ratio is None else r.flagged_ratio,
    "unchecked": lambda r: r.unchecked,
    "unanswered": lambda r: r.unanswered,
    "regenerations": lambda r: r.regenerations,
    "authors": lambda r: r.authors[0].split()[-1].lower() if r.authors and r.authors[0].split() else "~",
    "year": lambda r: r.year or 0,
    "added": lambda r: r.ingested_at.timestamp() if r.ingested_at else 0.0,
}


@dataclass
class _Figures:
    sentences: int = 0
    flagged: int = 0
    unchecked: int = 0
    unanswered: int = 0
    regenerations: int = 0
    has_analysis: bool = False


def _audit_figures(session: Session, paper_ids: list[str]) -> dict[str, _Figures]:
    """paper id -> its figures over the newest analysis of each kind, in four queries whatever
    the library's size."""
    newest: dict[tuple[str, str], tuple[int, int]] = {}
    wanted = set(paper_ids)
    for aid, pid, kind, regenerations in session.execute(
        select(Analysis.id, Analysis.paper_id, Analysis.kind, Analysis.regenerations).order_by(Analysis.id)
    ):
        if pid in wanted:
            newest[(pid, kind)] = (aid, regenerations or 0)
    last = (
        select(AnalysisIteration.analysis_id, func.max(AnalysisIteration.iteration).label("n"))
        .group_by(AnalysisIteration.analysis_id)
        .subquery()
    )
    is_last = (last.c.analysis_id == AnalysisIteration.analysis_id) & (
        last.c.n == AnalysisIteration.iteration
    )
    counts = {
        aid: (n_sentences, n_flagged)
        for aid, n_sentences, n_flagged in session.execute(
            select(
                AnalysisIteration.analysis_id, AnalysisIteration.n_sentences, AnalysisIteration.n_flagged
            ).join(last, is_last)
        )
    }
    # unchecked and unanswered: counted from the final iterations' stored verdicts
    by_verdict: dict[int, dict[str, int]] = {}
    for aid, verdict, n in session.execute(
        select(AnalysisIteration.analysis_id, SentenceVerdict.verdict, func.count())
        .join(last, is_last)
        .join(SentenceVerdict, SentenceVerdict.iteration_id == AnalysisIteration.id)
        .where(SentenceVerdict.verdict.in_((UNCHECKED, UNANSWERED)))
        .group_by(AnalysisIteration.analysis_id, SentenceVerdict.verdict)
    ):
        by_verdict.setdefault(aid, {})[verdict] = n
    figures: dict[str, _Figures] = {}
    for (pid, _kind), (aid, regenerations) in newest.items():
        f = figures.setdefault(pid, _Figures(has_analysis=True))
        n_sentences, n_flagged = counts.get(aid, (0, 0))
        verdicts = by_verdict.get(aid, {})
        f.sentences += n_sentences
        f.flagged += n_flagged
        f.unchecked += verdicts.get(UNCHECKED, 0)
        f.unanswered += verdicts.get(UNANSWERED, 0)
        f.regenerations += regenerations
    _follow_judgements(session, figures)
    return figures


def _follow_judgements(session: Session, figures: dict[str, _Figures]) -> None:
    """The flagged and unchecked counts as the reader decided (reader.annotations.judgements.marked_change):
    a flag the reader judged supported is not counted flagged."""
    from reader.annotations.judgements import judgements_of, marked_change
    from reader.store.tables import SentenceJudgement

    judged = set(session.scalars(select(SentenceJudgement.paper_id).distinct()))
    for pid in judged & set(figures):
        change = marked_change(judgements_of(session, pid).values())
        f = figures[pid]
        f.flagged = max(0, f.flagged + change["flagged"])
        f.unchecked = max(0, f.unchecked + change["unchecked"])


def library_rows(
    session: Session,
    *,
    title_filter: str = "",
    sort: str = "added",
    descending: bool = True,
    only: dict[str, str] | None = None,
) -> list[LibraryRow]:
    """The library table. `only`: paper id -> where a full-text search found it (the rows are
    then those papers, in that order unless sorted by a column)."""
    query = select(Paper.id, Paper.title, Paper.ingested_at, Paper.authors, Paper.year)
    needle = title_filter.strip()
    if needle:
        query = query.where(func.lower(Paper.title).contains(needle.lower()))
    if only is not None:
        query = query.where(Paper.id.in_(list(only)))
    papers = session.execute(query).all()
    jobs = _latest_jobs(session)
    figures = _audit_figures(session, [p.id for p in papers])
    rows = []
    for pid, title, ingested_at, authors, year in papers:
        f = figures.get(pid, _Figures())
        rows.append(
            LibraryRow(
                id=pid,
                title=title or "(untitled)",
                status=paper_status(jobs.get(pid), f.has_analysis),
                sentences=f.sentences,
                flagged=f.flagged,
                flagged_ratio=(f.flagged / f.sentences if f.sentences else 0.0) if f.has_analysis else None,
                regenerations=f.regenerations,
                ingested_at=ingested_at,
                unchecked=f.unchecked,
                unanswered=f.unanswered,
                authors=list(authors or []),
                year=year,
                match=(only or {}).get(pid, ""),
            )
        )
    _tell_apart(session, rows)
    if only is not None and sort == "relevance":
        order = {pid: i for i, pid in enumerate(only)}
        rows.sort(key=lambda r: order[r.id])
        return rows
    key = SORT_KEYS.get(sort, SORT_KEYS["added"])
    rows.sort(key=key, reverse=descending)
    return rows


def _tell_apart(session: Session, rows: list[LibraryRow]) -> None:
    """Rows of one paper (uploaded twice, two versions of it, a near-duplicate not reviewed)
    get what tells them apart: what differs of file, pages, year and date added, where the
    text first differs, "near-duplicate of …", and the id (reader.store.versions.told_apart)."""
    apart = told_apart(session, [row.id for row in rows])
    for row in rows:
        row.apart = apart.get(row.id, "")


def paper_choices(session: Session) -> list[tuple[str, str]]:
    """(id, title) of every paper, for the Ask page's scope picker."""
    return [
        (pid, title or "(untitled)")
        for pid, title in session.execute(select(Paper.id, Paper.title).order_by(Paper.title))
    ]


# ------------------------------------------------------------ full-text search


def analysis_matches(session: Session, words: str, limit: int = 200) -> dict[str, str]:
    """paper id -> a snippet of its newest analyses' text holding every one of `words`
    (case-insensitive), for the library's full-text search."""
    terms = [w.lower() for w in words.split() if w.strip()]
    if not terms:
        return {}
    query = select(Analysis.paper_id, Analysis.kind, Analysis.final_text).order_by(Analysis.id.desc())
    for term in terms:
        query = query.where(func.lower(Analysis.final_text).contains(term))
    found: dict[str, str] = {}
    for pid, kind, text in session.execute(query.limit(limit)):
        if pid not in found:
            found[pid] = f"{kind}: {snippet(text or '', terms[0])}"
    return found


def snippet(text: str, term: str, width: int = 160) -> str:
    flat = " ".join(text.split())
    at = flat.lower().find(term.lower())
    if at < 0:
        return flat[:width] + ("…" if len(flat) > width else "")
    start = max(0, at - width // 3)
    out = flat[start : start + width]
    return ("…" if start else "") + out + ("…" if start + width < len(flat) else "")


# ------------------------------------------------------------ what the library page does


def search_rows(library, words: str, sort: str = "relevance", descending: bool = True) -> list[LibraryRow]:
    """Library rows of the papers whose passages (the search index) or analyses hold `words`;
    `library` is the Reader's (reader.facade.library.Library)."""
    found: dict[str, str] = {}
    if words.strip():
        for hit in library.search(words, k=20):
            if hit.bm25_rank is None or not hit.bm25_score:
                continue  # the dense path finds a nearest passage for any words: not a match
            found.setdefault(hit.paper_id, f"p. {hit.page_start}: " + snippet(hit.text, words.split()[0]))
        with library.reading() as session:
            for pid, where in analysis_matches(session, words).items():
                found.setdefault(pid, where)
    with library.reading() as session:
        return library_rows(session, sort=sort, descending=descending, only=found)


def name_paper(library, paper_id: str, file_name: str) -> None:
    """Keep the name a paper's file came in with, unless it already has a real one (the
    web page stores uploads by their sha256: that internal name is replaced)."""
    with library.writing() as session:
        paper = session.get(Paper, paper_id)
        if paper is not None and (not paper.file_name or paper.file_name == f"{paper_id}.pdf"):
            paper.file_name = file_name


def notes_zip(reader, papers: list[str] | None = None, user: str | None = None) -> tuple[bytes, list[str]]:
    """(a zip of the notes of `papers` (None: every reviewed paper) with index.md and the tables'
    CSV and figures' PNG files beside them, with `user`'s judgements and highlights; the file
    names of its notes, none for a paper with no review yet)."""
    with tempfile.TemporaryDirectory() as tmp:
        # no reference lookup here, whatever READER_REFERENCE_LOOKUP says: a network round trip
        # per cited entry would hold the request (`reader export` looks them up)
        result = reader.library.export(tmp, papers, lookup="off", user=user)
        buffer = io.BytesIO()
        with zipfile.ZipFile(buffer, "w", zipfile.ZIP_DEFLATED) as archive:
            for path in sorted(p for p in Path(tmp).rglob("*") if p.is_file()):
                archive.write(path, f"reader-notes/{path.relative_to(tmp)}")
    return buffer.getvalue(), [path.name for path in result.notes]
