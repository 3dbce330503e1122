"""A paper's page as plain data read from the database: its audited analyses, each sentence
with its verdict, reasons and evidence.

The templates only lay these out; every decision (which analysis is current, which sentence
a `[待验证] ` mark belongs to) is made here, in functions that can be tested without a browser.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from datetime import datetime

from sqlalchemy import select
from sqlalchemy.orm import Session

from reader.annotations.highlights import NOTE_LIMIT, HighlightItem, highlights_of
from reader.annotations.judgements import COMMENT_LIMIT, judgements_of, sentence_id, sentence_key
from reader.audit.citations import cited_references, markers_in, reference_list, with_library
from reader.audit.decided import decision_of
from reader.audit.loop import MARK, UNANSWERED, UNCHECKED
from reader.audit.record import KIND_ORDER, count_verdicts, newest_analyses
from reader.checklist import checklist_of
from reader.errors import PaperNotFound
from reader.store.paper_figures import figure_png, paper_figures
from reader.store.paper_tables import paper_tables
from reader.store.queries import followups_of
from reader.store.tables import Analysis, AnalysisIteration, Paper, ReviewJob, SentenceVerdict
from reader.text.pages import page_range
from reader.text.split import first_sentence
from reader.web.library import paper_file_name, paper_status

NO_EVIDENCE = {
    "zh": "未在原文中找到直接证据",
    "en": "No direct evidence found in the paper",
}
EVIDENCE_PREVIEW_CHARS = 420


def no_evidence_message(language: str | None) -> str:
    return NO_EVIDENCE["zh" if (language or "").startswith("zh") else "en"]


def page_label(page_start: int, page_end: int) -> str:
    return page_range(page_start, page_end, prose=True)


@dataclass
class EvidenceItem:
    pages: str
    text: str
    chunk_id: int | None = None  # the passage, for its rectangles on the page
    page: int = 1  # the page the passage starts on


@dataclass
class SentenceItem:
    ordinal: int
    text: str
    verdict: str  # supported | unsupported | unanswered | unchecked
    marked: bool  # carries the [待验证] prefix in the final text
    llm_answer: str = ""
    reasons: list[str] = field(default_factory=list)
    reused: bool = False
    evidence: list[EvidenceItem] = field(default_factory=list)
    anchor: str = ""  # the element id on the paper page, e.g. "critique-3"
    sentence_id: str = ""  # as reader.annotations.judgements names it; "" for a mark without a verdict
    judgement: object = None  # the reader's own (reader.annotations.judgements.Judgement), if any
    # how the verdict was reached (reader.audit.decided.described): kind, by, score, page, item, label
    decided: dict = field(default_factory=dict)

    @property
    def overruled(self) -> bool:
        """Marked by the audit and judged supported by the reader: shown as the reader decided
        (no [待验证] mark), the audit's verdict beside it."""
        return bool(self.marked and self.judgement is not None and self.judgement.verdict == "supported")

    @property
    def reader_flagged(self) -> bool:
        """Passed by the audit and judged unsupported by the reader: shown marked."""
        return bool(
            not self.marked and self.judgement is not None and self.judgement.verdict == "unsupported"
        )

    @property
    def tool(self) -> bool:
        """The tool's own finding from the rigour checklist, stated without a model."""
        return self.decided.get("kind") == "tool"


@dataclass
class Segment:
    """A run of the final text: plain text, or one audited sentence."""

    text: str
    sentence: SentenceItem | None = None


@dataclass
class AnalysisPanel:
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
    def flagged(self) -> list[SentenceItem]:
        """The sentences carrying a [待验证] mark, in order."""
        return [seg.sentence for seg in self.segments if seg.sentence and seg.sentence.marked]

    @property
    def n_audited(self) -> int:
        """How many sentences of the text carry a verdict (or a mark) on the page."""
        return sum(1 for seg in self.segments if seg.sentence)

    @property
    def empty(self) -> bool:
        """The review wrote no text for this analysis: nothing was checked, nothing passed."""
        return not any(seg.sentence or seg.text.strip() for seg in self.segments)


@dataclass
class PaperPage:
    id: str
    title: str
    authors: list[str]
    year: int | None
    language: str
    pages: int
    analyses: list[AnalysisPanel]
    no_evidence: str
    file_name: str = ""  # the name the file came in with
    doi: str | None = None
    zotero_key: str | None = None
    has_pdf: bool = False
    status: str = "ingested"  # as in the library; "pending: …" / "running: …" while reviewed
    reviewing: bool = False
    highlights: list[HighlightItem] = field(default_factory=list)  # the reader's own, in page order
    tables: list = field(default_factory=list)  # the paper's tables as cells (reader.text.grid.Table)
    figures: list = field(default_factory=list)  # reader.text.figures.Figure, pictures left out
    note_limit: int = NOTE_LIMIT
    # the reader's judgements of sentences a review since no longer has (reader.annotations.judgements.Judgement)
    gone_judgements: list = field(default_factory=list)
    # the follow-up questions of the review, answered (reader.store.queries.FollowUpItem)
    followups: list = field(default_factory=list)
    checklist: object = None  # the rigour checklist (reader.checklist.Checklist), None without passages

    @property
    def highlight_boxes(self) -> list[dict]:
        """What the viewer draws of the reader's highlights: page, rectangles and a title."""
        return [{"id": h.id, "page": h.page, "rects": h.rects, "note": h.note} for h in self.highlights]

    @property
    def flagged(self) -> list[SentenceItem]:
        return [s for a in self.analyses for s in a.flagged]

    @property
    def n_audited(self) -> int:
        """The sentences with a verdict over all analyses: none means none was found supported
        either, so the page must not say that every sentence was."""
        return sum(a.n_audited for a in self.analyses)

    @property
    def sentences(self) -> list[SentenceItem]:
        """Every audited sentence of the analyses that can be judged, in page order."""
        return [
            seg.sentence
            for a in self.analyses
            for seg in a.segments
            if seg.sentence and seg.sentence.sentence_id
        ]

    @property
    def judged(self) -> list[SentenceItem]:
        """The sentences the reader judged, in page order."""
        return [s for s in self.sentences if s.judgement is not None]


def _evidence(verdict: SentenceVerdict) -> list[EvidenceItem]:
    items = []
    for ev in verdict.evidence:
        text = " ".join(ev.text.split())
        if len(text) > EVIDENCE_PREVIEW_CHARS:
            text = text[:EVIDENCE_PREVIEW_CHARS].rstrip() + "…"
        items.append(
            EvidenceItem(
                pages=page_label(ev.page_start, ev.page_end),
                text=text,
                chunk_id=ev.chunk_id,
                page=ev.page_start or 1,
            )
        )
    return items


def _sentence_of(verdict: SentenceVerdict, marked: bool) -> SentenceItem:
    return SentenceItem(
        ordinal=verdict.ordinal,
        text=verdict.text,
        verdict=verdict.verdict,
        marked=marked,
        llm_answer=verdict.llm_answer or "",
        reasons=[str(r) for r in (verdict.reasons or [])],
        reused=bool(verdict.reused),
        evidence=_evidence(verdict),
        decided=decision_of(verdict),
    )


_STRAY_MARK = re.compile(r"\[待验证\] ?")


def _plain(text: str) -> list[Segment]:
    """Plain text, with any mark the verdicts did not account for still highlighted
    (up to the end of the sentence after it, found as the audit splits sentences)."""
    out: list[Segment] = []
    pos = 0
    while match := _STRAY_MARK.search(text, pos):
        if match.start() > pos:
            out.append(Segment(text[pos : match.start()]))
        sentence = first_sentence(text[match.end() :])
        out.append(
            Segment(
                "",
                SentenceItem(
                    ordinal=-1,
                    text=sentence,
                    verdict="unsupported",
                    marked=True,
                ),
            )
        )
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
        marked = final_text[max(0, idx - len(MARK)) : idx] == MARK
        if marked:
            start = idx - len(MARK)
        elif final_text[max(0, idx - len(MARK) + 1) : idx] == MARK.rstrip():
            marked, start = True, idx - len(MARK) + 1
        if start > pos:
            segments.extend(_plain(final_text[pos:start]))
        segments.append(Segment(sentence, _sentence_of(verdict, marked)))
        pos = idx + len(sentence)
    if pos < len(final_text):
        segments.extend(_plain(final_text[pos:]))
    return segments


def _final_iteration(analysis: Analysis) -> AnalysisIteration | None:
    return max(analysis.iterations, key=lambda it: it.iteration, default=None)


def analysis_of(analysis: Analysis) -> AnalysisPanel:
    final = _final_iteration(analysis)
    verdicts = list(final.verdicts) if final else []
    segments = segment_text(analysis.final_text or "", verdicts)
    for n, seg in enumerate(s for s in segments if s.sentence):
        seg.sentence.anchor = f"{analysis.kind}-{n + 1}"
        if seg.sentence.ordinal >= 0:
            seg.sentence.sentence_id = sentence_id(analysis.kind, seg.sentence.ordinal)
    return AnalysisPanel(
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


def paper_of(session: Session, paper_id: str, user: str | None = None) -> PaperPage | None:
    paper = session.get(Paper, paper_id)
    if paper is None:
        return None
    job = session.scalars(
        select(ReviewJob).where(ReviewJob.paper_id == paper_id).order_by(ReviewJob.id.desc()).limit(1)
    ).first()
    analyses = [analysis_of(a) for a in current_analyses(session, paper_id)]
    if any(markers_in(seg.sentence.text) for a in analyses for seg in a.segments if seg.sentence):
        refs = reference_list(session, paper_id)
        for a in analyses:
            a.citations = cited_references(refs, [seg.sentence.text for seg in a.segments if seg.sentence])
            with_library(session, paper_id, a.citations)  # the citation cards
    gone = []
    if judged := judgements_of(session, paper_id, user):
        shown = set()
        for a in analyses:
            for seg in a.segments:
                if seg.sentence and seg.sentence.sentence_id:
                    key = sentence_key(seg.sentence.text)
                    seg.sentence.judgement = judged.get(key)
                    shown.add(key)
        gone = [j for key, j in judged.items() if key not in shown]
    status = paper_status(job, bool(analyses))
    return PaperPage(
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
        highlights=highlights_of(session, paper_id, user),
        tables=paper_tables(session, paper_id),
        figures=paper_figures(session, paper_id, with_png=False),
        gone_judgements=gone,
        followups=followups_of(session, paper_id),
        checklist=checklist_of(session, paper_id),
    )


def figure_image(session, paper_id: str, ordinal: int) -> bytes:
    """The PNG of the paper's figure at `ordinal` (0 for its first); PaperNotFound without it."""
    png = figure_png(session, paper_id, ordinal)
    if not png:
        raise PaperNotFound(f"the paper has no figure {ordinal + 1}")
    return png


@dataclass
class JudgeView:
    """The page where the reader judges one sentence: it, the sentence's key (the form sends
    it back, so a page from before a new review is refused), and the sentences around it."""

    paper: PaperPage
    sentence: SentenceItem
    key: str
    previous: SentenceItem | None
    next: SentenceItem | None
    next_flagged: SentenceItem | None  # the next [待验证] sentence not judged yet
    comment_limit: int = COMMENT_LIMIT


def judge_view_of(session: Session, paper_id: str, sid: str, user: str | None = None) -> JudgeView | None:
    """The judging page of sentence `sid` (`synthesis-3`) for account `user`, or None when the
    paper has no such sentence on its page."""
    paper = paper_of(session, paper_id, user)
    sentences = paper.sentences if paper else []
    at = next((n for n, s in enumerate(sentences) if s.sentence_id == sid), None)
    if at is None:
        return None
    chosen = sentences[at]
    return JudgeView(
        paper=paper,
        sentence=chosen,
        key=sentence_key(chosen.text),
        previous=sentences[at - 1] if at > 0 else None,
        next=sentences[at + 1] if at + 1 < len(sentences) else None,
        next_flagged=next((s for s in sentences[at + 1 :] if s.marked and s.judgement is None), None),
    )
