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

from reader.audit.citations import cited_references, markers_in, reference_list
from reader.audit.loop import MARK, UNANSWERED, UNCHECKED
from reader.audit.record import KIND_ORDER, count_verdicts, newest_analyses
from reader.text.split import first_sentence
from reader.store.tables import (
    Analysis, AnalysisIteration, Chunk, Paper, ReviewJob, SentenceVerdict,
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
    chunk_id: int | None = None  # the passage, for its rectangles on the page
    page: int = 1  # the page the passage starts on


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
    anchor: str = ""  # the element id on the paper page, e.g. "critique-3"


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
    # the citation markers of the text resolved to the paper's reference entries
    # (reader.audit.citations.CitedReference), with the attribution check's notes
    citations: list = field(default_factory=list)

    @property
    def flagged(self) -> list[SentenceView]:
        """The sentences carrying a [待验证] mark, in order."""
        return [seg.sentence for seg in self.segments if seg.sentence and seg.sentence.marked]


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
    file_name: str = ""  # the name the file came in with
    doi: str | None = None
    zotero_key: str | None = None
    has_pdf: bool = False
    status: str = "ingested"  # as in the library; "pending: …" / "running: …" while reviewed
    reviewing: bool = False

    @property
    def flagged(self) -> list[SentenceView]:
        return [s for a in self.analyses for s in a.flagged]


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


def _evidence(verdict: SentenceVerdict) -> list[EvidenceView]:
    views = []
    for ev in verdict.evidence:
        text = " ".join(ev.text.split())
        if len(text) > EVIDENCE_PREVIEW_CHARS:
            text = text[:EVIDENCE_PREVIEW_CHARS].rstrip() + "…"
        views.append(EvidenceView(pages=page_label(ev.page_start, ev.page_end), text=text,
                                  chunk_id=ev.chunk_id, page=ev.page_start or 1))
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
    segments = segment_text(analysis.final_text or "", verdicts)
    for n, seg in enumerate(s for s in segments if s.sentence):
        seg.sentence.anchor = f"{analysis.kind}-{n + 1}"
    return AnalysisView(
        kind=analysis.kind,
        segments=segments,
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
    job = session.scalars(select(ReviewJob).where(ReviewJob.paper_id == paper_id)
                          .order_by(ReviewJob.id.desc()).limit(1)).first()
    analyses = [analysis_view(a) for a in current_analyses(session, paper_id)]
    if any(markers_in(seg.sentence.text) for a in analyses for seg in a.segments if seg.sentence):
        refs = reference_list(session, paper_id)
        for a in analyses:
            a.citations = cited_references(refs, [seg.sentence.text for seg in a.segments if seg.sentence])
    status = paper_status(job, bool(analyses))
    return PaperView(
        id=paper.id,
        title=paper.title or "(untitled)",
        authors=list(paper.authors or []),
        year=paper.year,
        language=paper.language or "en",
        pages=paper.pages,
        analyses=analyses,
        no_evidence=no_evidence_message(paper.language),
        file_name=paper_file_name(paper),
        doi=paper.doi,
        zotero_key=paper.zotero_key,
        has_pdf=paper.source_kind == "pdf",
        status=status,
        reviewing=status.startswith(("pending", "running")),
    )


def paper_file_name(paper: Paper) -> str:
    """The name the paper's file came in with (before migration 0004: its stored name)."""
    from pathlib import PurePath

    return paper.file_name or PurePath(paper.source_path or "").name or f"{paper.id[:12]}.pdf"


def paper_status_of(session: Session, paper_id: str) -> str | None:
    """The library's status of one paper, None when there is no such paper."""
    if session.get(Paper, paper_id) is None:
        return None
    job = session.scalars(select(ReviewJob).where(ReviewJob.paper_id == paper_id)
                          .order_by(ReviewJob.id.desc()).limit(1)).first()
    has_analysis = session.scalar(select(func.count()).select_from(Analysis)
                                  .where(Analysis.paper_id == paper_id)) > 0
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
    return "reviewed" if has_analysis else "ingested"


SORT_KEYS = {
    "title": lambda r: r.title.lower(),
    "status": lambda r: r.status,
    "sentences": lambda r: r.sentences,
    "flagged": lambda r: -1.0 if r.flagged_ratio is None else r.flagged_ratio,
    "unchecked": lambda r: r.unchecked,
    "unanswered": lambda r: r.unanswered,
    "regenerations": lambda r: r.regenerations,
    "authors": lambda r: (r.authors[0].split()[-1].lower() if r.authors and r.authors[0].split() else "~"),
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
            authors=list(authors or []),
            year=year,
            match=(only or {}).get(pid, ""),
        ))
    if only is not None and sort == "relevance":
        order = {pid: i for i, pid in enumerate(only)}
        rows.sort(key=lambda r: order[r.id])
        return rows
    key = SORT_KEYS.get(sort, SORT_KEYS["added"])
    rows.sort(key=key, reverse=descending)
    return rows


def paper_choices(session: Session) -> list[tuple[str, str]]:
    """(id, title) of every paper, for the Ask page's scope picker."""
    return [
        (pid, title or "(untitled)")
        for pid, title in session.execute(select(Paper.id, Paper.title).order_by(Paper.title))
    ]


# ------------------------------------------------------------ the PDF beside the analysis


@dataclass
class PassageBox:
    """Where one passage stands: its first page and its rectangles (fractions of the page)."""

    chunk_id: int
    paper_id: str
    page: int
    page_end: int
    section: str
    rects: list  # [[page, x0, y0, x1, y1], ...]

    def to_json(self) -> dict:
        return dict(self.__dict__)


def passages_without_rects(session: Session, paper_id: str) -> list[tuple[int, int, int, str]]:
    """(chunk id, page_start, page_end, text) of a paper's passages stored before rectangles were kept."""
    return [tuple(r) for r in session.execute(
        select(Chunk.id, Chunk.page_start, Chunk.page_end, Chunk.text)
        .where(Chunk.paper_id == paper_id, Chunk.rects.is_(None)).order_by(Chunk.ordinal))]


def passage_box(session: Session, chunk_id: int) -> PassageBox | None:
    chunk = session.get(Chunk, chunk_id)
    if chunk is None:
        return None
    rects = list(chunk.rects or [])
    return PassageBox(chunk_id=chunk.id, paper_id=chunk.paper_id,
                      page=rects[0][0] if rects else chunk.page_start, page_end=chunk.page_end,
                      section=chunk.section or "", rects=rects)


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
    out = flat[start:start + width]
    return ("…" if start else "") + out + ("…" if start + width < len(flat) else "")


# ------------------------------------------------------------ questions asked


@dataclass
class QuestionSource:
    number: int
    label: str
    pages: str
    text: str
    paper_id: str | None
    chunk_id: int | None
    page: int = 1


@dataclass
class QuestionView:
    id: int
    question: str
    answer: str
    grounded: bool
    grounded_reason: str
    route: str
    outcome: str  # the route in plain words
    confidence: float
    paper_id: str | None
    paper_title: str
    sources: list[QuestionSource]
    notes: list[str]
    llm_calls: int
    seconds: float
    created_at: datetime | None

    def to_json(self) -> dict:
        from dataclasses import asdict

        data = asdict(self)
        data["created_at"] = self.created_at.isoformat() if self.created_at else None
        return data


NOT_FOUND_PREFIX = "Not found in the papers"


def route_in_words(route: str, answer: str, n_sources: int) -> str:
    """What the Corrective RAG route means for the person who asked."""
    if answer.strip().startswith(NOT_FOUND_PREFIX) or not n_sources:
        return "No passage of the papers answers this question."
    if route == "correct":
        return "Answered from passages found on the first search."
    if route in ("ambiguous", "incorrect"):
        return "Answered after searching again with reworded questions."
    return "Answered from the papers."


def _first_page(pages: str) -> int:
    m = re.search(r"\d+", pages or "")
    return int(m.group()) if m else 1


def question_view(session: Session, question_id: int) -> QuestionView | None:
    from reader.store.tables import Question

    row = session.get(Question, question_id)
    if row is None:
        return None
    details = row.details or {}
    titles = dict(session.execute(select(Paper.id, Paper.title)).all())
    sources = []
    for n, src in enumerate(details.get("sources") or [], start=1):
        pid = None if src.get("external") else src.get("paper_id")
        label = src.get("label") or titles.get(pid or "", "") or "(a passage)"
        sources.append(QuestionSource(
            number=n, label=label, pages=str(src.get("pages") or ""), text=src.get("text") or "",
            paper_id=pid if pid in titles else None, chunk_id=src.get("chunk_id"),
            page=_first_page(str(src.get("pages") or "")),
        ))
    return QuestionView(
        id=row.id, question=row.question, answer=row.answer or "", grounded=bool(row.grounded),
        grounded_reason=row.grounded_reason or "", route=row.route or "",
        outcome=route_in_words(row.route or "", row.answer or "", len(sources)),
        confidence=row.confidence or 0.0, paper_id=row.paper_id,
        paper_title=titles.get(row.paper_id, "") if row.paper_id else "",
        sources=sources, notes=list(details.get("notes") or []),
        llm_calls=int(details.get("llm_calls") or 0), seconds=float(details.get("seconds") or 0.0),
        created_at=row.created_at,
    )


@dataclass
class QuestionLine:
    id: int
    question: str
    paper_title: str
    answered: bool
    created_at: datetime | None


def question_history(session: Session, limit: int = 30) -> list[QuestionLine]:
    from reader.store.tables import Question

    titles = dict(session.execute(select(Paper.id, Paper.title)).all())
    return [
        QuestionLine(id=qid, question=q, paper_title=titles.get(pid, "") if pid else "",
                     answered=not (answer or "").strip().startswith(NOT_FOUND_PREFIX), created_at=at)
        for qid, q, pid, answer, at in session.execute(
            select(Question.id, Question.question, Question.paper_id, Question.answer, Question.created_at)
            .order_by(Question.id.desc()).limit(limit))
    ]
