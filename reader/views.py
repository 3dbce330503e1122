"""What the pages show, as plain data read from the database.

The templates only lay these out; every decision (which analysis is current,
which sentence a `[待验证] ` mark belongs to, what a paper's status is) is made
here, in functions that can be tested without a browser.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from datetime import datetime

from sqlalchemy import func, select
from sqlalchemy.orm import Session

from reader.audit.loop import MARK, UNANSWERED, UNCHECKED
from reader.audit.record import KIND_ORDER, count_verdicts, newest_analyses
from reader.text.split import first_sentence
from reader.store.tables import (
    Analysis, AnalysisIteration, Paper, ReviewJob, SentenceVerdict,
)

NO_EVIDENCE = {
    "zh": "未在原文中找到直接证据",
    "en": "No direct evidence found in the paper",
}
EVIDENCE_PREVIEW_CHARS = 420


def no_evidence_message(language: str | None) -> str:
    return NO_EVIDENCE["zh" if (language or "").startswith("zh") else "en"]


def page_label(page_start: int, page_end: int) -> str:
    if page_end and page_end != page_start:
        return f"pp. {page_start}–{page_end}"
    return f"p. {page_start}"


@dataclass
class EvidenceView:
    pages: str
    text: str


@dataclass
class SentenceView:
    ordinal: int
    text: str
    verdict: str  # supported | unsupported | unanswered | unchecked
    marked: bool  # carries the [待验证] prefix in the final text
    llm_answer: str = ""
    reasons: list[str] = field(default_factory=list)
    reused: bool = False
    evidence: list[EvidenceView] = field(default_factory=list)


@dataclass
class Segment:
    """A run of the final text: plain text, or one audited sentence."""

    text: str
    sentence: SentenceView | None = None


@dataclass
class AnalysisView:
    kind: str
    segments: list[Segment]
    n_sentences: int
    n_flagged: int
    flagged_ratio: float
    regenerations: int
    generator_model: str
    verifier_model: str
    left_out_sections: list
    created_at: datetime | None
    n_unchecked: int = 0  # the verifier's reply could not be read: marked, neither supported nor flagged
    n_unanswered: int = 0  # left out of a reply that answered others: counted as supported


@dataclass
class PaperView:
    id: str
    title: str
    authors: list[str]
    year: int | None
    language: str
    pages: int
    analyses: list[AnalysisView]
    no_evidence: str


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


def _evidence(verdict: SentenceVerdict) -> list[EvidenceView]:
    views = []
    for ev in verdict.evidence:
        text = " ".join(ev.text.split())
        if len(text) > EVIDENCE_PREVIEW_CHARS:
            text = text[:EVIDENCE_PREVIEW_CHARS].rstrip() + "…"
        views.append(EvidenceView(pages=page_label(ev.page_start, ev.page_end), text=text))
    return views


def _sentence_view(verdict: SentenceVerdict, marked: bool) -> SentenceView:
    return SentenceView(
        ordinal=verdict.ordinal,
        text=verdict.text,
        verdict=verdict.verdict,
        marked=marked,
        llm_answer=verdict.llm_answer or "",
        reasons=[str(r) for r in (verdict.reasons or [])],
        reused=bool(verdict.reused),
        evidence=_evidence(verdict),
    )


_STRAY_MARK = re.compile(r"\[待验证\] ?")


def _plain(text: str) -> list[Segment]:
    """Plain text, with any mark the verdicts did not account for still highlighted
    (up to the end of the sentence after it, found as the audit splits sentences)."""
    out: list[Segment] = []
    pos = 0
    while match := _STRAY_MARK.search(text, pos):
        if match.start() > pos:
            out.append(Segment(text[pos:match.start()]))
        sentence = first_sentence(text[match.end():])
        out.append(Segment("", SentenceView(
            ordinal=-1, text=sentence, verdict="unsupported", marked=True,
        )))
        pos = match.end() + len(sentence)
    if pos < len(text):
        out.append(Segment(text[pos:]))
    return out


def segment_text(final_text: str, verdicts: list[SentenceVerdict]) -> list[Segment]:
    """Split the final text into plain runs and audited sentences, in order.

    Each verdict's sentence is looked up after the previous one (the text may
    repeat a sentence; only its first occurrence carries the mark). A sentence
    that cannot be found is left out of the highlighting, never out of the text.
    """
    segments: list[Segment] = []
    pos = 0
    for verdict in sorted(verdicts, key=lambda v: v.ordinal):
        sentence = verdict.text.strip()
        if not sentence:
            continue
        idx = final_text.find(sentence, pos)
        if idx < 0:
            continue
        start = idx
        marked = final_text[max(0, idx - len(MARK)):idx] == MARK
        if marked:
            start = idx - len(MARK)
        elif final_text[max(0, idx - len(MARK) + 1):idx] == MARK.rstrip():
            marked, start = True, idx - len(MARK) + 1
        if start > pos:
            segments.extend(_plain(final_text[pos:start]))
        segments.append(Segment(sentence, _sentence_view(verdict, marked)))
        pos = idx + len(sentence)
    if pos < len(final_text):
        segments.extend(_plain(final_text[pos:]))
    return segments


def _final_iteration(analysis: Analysis) -> AnalysisIteration | None:
    return max(analysis.iterations, key=lambda it: it.iteration, default=None)


def analysis_view(analysis: Analysis) -> AnalysisView:
    final = _final_iteration(analysis)
    verdicts = list(final.verdicts) if final else []
    return AnalysisView(
        kind=analysis.kind,
        segments=segment_text(analysis.final_text or "", verdicts),
        n_sentences=final.n_sentences if final else 0,
        n_flagged=final.n_flagged if final else 0,
        flagged_ratio=analysis.flagged_ratio or 0.0,
        regenerations=analysis.regenerations or 0,
        generator_model=analysis.generator_model or "",
        verifier_model=analysis.verifier_model or "",
        left_out_sections=list(analysis.left_out_sections or []),
        created_at=analysis.created_at,
        n_unchecked=count_verdicts(verdicts, UNCHECKED),
        n_unanswered=count_verdicts(verdicts, UNANSWERED),
    )


def current_analyses(session: Session, paper_id: str) -> list[Analysis]:
    """The newest analysis of each kind, synthesis first, unknown kinds last."""
    def order(a: Analysis) -> tuple[int, str]:
        return (KIND_ORDER.index(a.kind) if a.kind in KIND_ORDER else len(KIND_ORDER), a.kind)

    return sorted(newest_analyses(session, paper_id).values(), key=order)


def paper_view(session: Session, paper_id: str) -> PaperView | None:
    paper = session.get(Paper, paper_id)
    if paper is None:
        return None
    return PaperView(
        id=paper.id,
        title=paper.title or "(untitled)",
        authors=list(paper.authors or []),
        year=paper.year,
        language=paper.language or "en",
        pages=paper.pages,
        analyses=[analysis_view(a) for a in current_analyses(session, paper_id)],
        no_evidence=no_evidence_message(paper.language),
    )


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
    return "reviewed" if has_analysis else "ingested"


SORT_KEYS = {
    "title": lambda r: r.title.lower(),
    "status": lambda r: r.status,
    "sentences": lambda r: r.sentences,
    "flagged": lambda r: -1.0 if r.flagged_ratio is None else r.flagged_ratio,
    "unchecked": lambda r: r.unchecked,
    "unanswered": lambda r: r.unanswered,
    "regenerations": lambda r: r.regenerations,
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
        select(Analysis.id, Analysis.paper_id, Analysis.kind, Analysis.regenerations)
        .order_by(Analysis.id)
    ):
        if pid in wanted:
            newest[(pid, kind)] = (aid, regenerations or 0)
    last = (
        select(AnalysisIteration.analysis_id, func.max(AnalysisIteration.iteration).label("n"))
        .group_by(AnalysisIteration.analysis_id).subquery()
    )
    is_last = ((last.c.analysis_id == AnalysisIteration.analysis_id)
               & (last.c.n == AnalysisIteration.iteration))
    counts = {
        aid: (n_sentences, n_flagged)
        for aid, n_sentences, n_flagged in session.execute(
            select(AnalysisIteration.analysis_id, AnalysisIteration.n_sentences,
                   AnalysisIteration.n_flagged).join(last, is_last)
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
    return figures


def library_rows(
    session: Session, *, title_filter: str = "", sort: str = "added", descending: bool = True,
) -> list[LibraryRow]:
    query = select(Paper.id, Paper.title, Paper.ingested_at)
    needle = title_filter.strip()
    if needle:
        query = query.where(func.lower(Paper.title).contains(needle.lower()))
    papers = session.execute(query).all()
    jobs = _latest_jobs(session)
    figures = _audit_figures(session, [p.id for p in papers])
    rows = []
    for pid, title, ingested_at in papers:
        f = figures.get(pid, _Figures())
        rows.append(LibraryRow(
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
        ))
    key = SORT_KEYS.get(sort, SORT_KEYS["added"])
    rows.sort(key=key, reverse=descending)
    return rows


def paper_choices(session: Session) -> list[tuple[str, str]]:
    """(id, title) of every paper, for the Ask page's scope picker."""
    return [
        (pid, title or "(untitled)")
        for pid, title in session.execute(select(Paper.id, Paper.title).order_by(Paper.title))
    ]
