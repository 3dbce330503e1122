"""Store an audited analysis (every iteration, verdict, reason and evidence) and read it back.

`save_analysis` only adds rows to the session it is given; the caller decides
the transaction, so a deep read can store critique and synthesis together or
not at all.
"""

from __future__ import annotations

from dataclasses import dataclass, field

from sqlalchemy import delete, func, select
from sqlalchemy.orm import Session, selectinload

from reader.audit.decided import KINDS, decision_of
from reader.audit.guards import PaperFacts, figure_evidence, table_evidence
from reader.audit.loop import UNANSWERED, UNCHECKED, LoopResult
from reader.audit.verify import EvidenceRef
from reader.store.paper_figures import figure_captions, paper_figures
from reader.store.paper_tables import paper_tables
from reader.store.tables import (
    Analysis,
    AnalysisIteration,
    SentenceVerdict,
    VerdictEvidence,
)
from reader.text.split import without_label


def save_analysis(
    session: Session,
    *,
    paper_id: str,
    kind: str,
    loop: LoopResult,
    generator_model: str = "",
    verifier_model: str = "",
    left_out_sections: list[str] | None = None,
    facts: PaperFacts | None = None,
) -> Analysis:
    """Add the analysis with all its iterations; earlier analyses of the same
    kind for this paper are removed in the same session. A sentence the paper's tables bear on
    (reader.audit.table_checks: its number's cell, its arithmetic recomputed) has that first in
    its evidence, as a row without a passage whose text is the cell or the computation; a
    sentence citing a figure the paper has ("Figure 3") has that figure's caption next. `facts`:
    the paper's tables and figures as the audit had them (None: read from the database)."""
    tables = facts or PaperFacts(
        tables=paper_tables(session, paper_id), figures=figure_captions(session, paper_id)
    )
    session.execute(delete(Analysis).where(Analysis.paper_id == paper_id, Analysis.kind == kind))
    analysis = Analysis(
        paper_id=paper_id,
        kind=kind,
        final_text=loop.final_text,
        flagged_ratio=loop.final.flagged_ratio,
        regenerations=loop.regenerations,
        generator_model=generator_model,
        verifier_model=verifier_model,
        left_out_sections=list(left_out_sections or []),
        rewrite_notes=list(loop.rewrite_notes),
    )
    for number, it in enumerate(loop.iterations):
        analysis.iterations.append(_iteration_row(number, it, tables))
    session.add(analysis)
    return analysis


def _iteration_row(number: int, it, tables: PaperFacts) -> AnalysisIteration:
    row = AnalysisIteration(
        iteration=number,
        text=it.text,
        n_sentences=len(it.audit.sentences),
        n_flagged=it.audit.n_flagged,
        flagged_ratio=it.audit.flagged_ratio,
    )
    for ordinal, s in enumerate(it.audit.sentences):
        row.verdicts.append(_verdict_row(ordinal, s, tables))
    return row


def _table_and_figure_evidence(text: str, tables: PaperFacts) -> list[EvidenceRef]:
    """What the paper's tables and figures' captions say of the sentence."""
    cells = [
        EvidenceRef(None, f.page, f.page, f.evidence) for f in table_evidence(without_label(text), tables)
    ]
    return cells + [EvidenceRef(None, page, page, caption) for page, caption in figure_evidence(text, tables)]


def _verdict_row(ordinal: int, s, tables: PaperFacts) -> SentenceVerdict:
    """The sentence's verdict with its evidence: what the paper's tables say of it first, then
    its passages; a tool's finding keeps its checklist item's evidence alone (a table's cell that
    holds a number of its quote is no evidence of the finding, and its page was shown as the
    finding's)."""
    verdict = SentenceVerdict(
        ordinal=ordinal,
        text=s.text,
        verdict=s.verdict,
        llm_answer=s.llm_answer,
        reasons=list(s.reasons),
        reused=s.reused,
        p_yes=s.p_yes,
        p_checker=s.p_checker,
        decided_by=s.decided_by or None,
        checklist_item=s.checklist_item or None,
    )
    from_tables = [] if s.checklist_item else _table_and_figure_evidence(s.text, tables)
    verdict.evidence = [
        VerdictEvidence(
            rank=rank, chunk_id=e.chunk_id, page_start=e.page_start, page_end=e.page_end, text=e.text
        )
        for rank, e in enumerate(from_tables + list(s.evidence))
    ]
    return verdict


KIND_ORDER = ("synthesis", "critique")  # the order the web page and the notes show the kinds in

_ALL_ROWS = (
    selectinload(Analysis.iterations)
    .selectinload(AnalysisIteration.verdicts)
    .selectinload(SentenceVerdict.evidence)
)


def load_analyses(session: Session, paper_id: str) -> list[Analysis]:
    """The stored analyses of a paper, newest first within each kind, all rows loaded."""
    stmt = (
        select(Analysis)
        .where(Analysis.paper_id == paper_id)
        .options(_ALL_ROWS)
        .order_by(Analysis.kind, Analysis.created_at.desc(), Analysis.id.desc())
    )
    return list(session.scalars(stmt))


def newest_analyses(session: Session, paper_id: str) -> dict[str, Analysis]:
    """kind -> the newest (highest id) analysis of that kind, all rows loaded;
    kinds in the order they were first stored."""
    newest: dict[str, Analysis] = {}
    stmt = select(Analysis).where(Analysis.paper_id == paper_id).options(_ALL_ROWS).order_by(Analysis.id)
    for analysis in session.scalars(stmt):
        newest[analysis.kind] = analysis
    return newest


def verdict_counts(session: Session, iteration_ids: list[int]) -> dict[int, dict[str, int]]:
    """iteration id -> {verdict: number of sentences}, in one query. The unchecked and
    unanswered counts are read from the stored verdicts rather than kept in columns of their own."""
    counts: dict[int, dict[str, int]] = {i: {} for i in iteration_ids}
    if not iteration_ids:
        return counts
    rows = session.execute(
        select(SentenceVerdict.iteration_id, SentenceVerdict.verdict, func.count())
        .where(SentenceVerdict.iteration_id.in_(iteration_ids))
        .group_by(SentenceVerdict.iteration_id, SentenceVerdict.verdict)
    )
    for iteration_id, verdict, n in rows:
        counts[iteration_id][verdict] = n
    return counts


def count_verdicts(verdicts, verdict: str) -> int:
    return sum(1 for v in verdicts if v.verdict == verdict)


def decided_of(v: SentenceVerdict) -> dict:
    """How a stored verdict was reached (reader.audit.decided): who decided, with the verifier's or
    the checker's score, the page a restated sentence restates, the checklist item a tool's finding
    states; read from its reasons for verdicts stored before it was kept."""
    return decision_of(v)


def verdict_json(v: SentenceVerdict) -> dict:
    return {
        "text": v.text,
        "verdict": v.verdict,
        "p_yes": v.p_yes,
        "p_checker": v.p_checker,
        "reasons": list(v.reasons or []),
        "evidence": [EvidenceRef(e.chunk_id, e.page_start, e.page_end, e.text).to_json() for e in v.evidence],
        "decided": decided_of(v),
    }


def decided_counts(verdicts) -> dict[str, int]:
    """How many sentences each kind of decision reached: model (verifier, checker, extraction),
    guard, restated, tool, unchecked; and `checked`, those a model or a guard checked (the flagged
    ratio's denominator)."""
    counts = {kind: 0 for kind in KINDS}
    for v in verdicts:
        counts[decided_of(v)["kind"]] += 1
    counts["checked"] = counts["model"] + counts["guard"]
    return counts


def analysis_json(a: Analysis) -> dict:
    """The stored analysis in the shape `reader show --json` prints."""
    last = a.iterations[-1] if a.iterations else None
    return {
        "kind": a.kind,
        "final_text": a.final_text,
        "flagged_ratio": a.flagged_ratio,
        "iterations": len(a.iterations),
        "regenerations": a.regenerations,
        "flagged_per_iteration": [it.n_flagged for it in a.iterations],
        "ratio_per_iteration": [it.flagged_ratio for it in a.iterations],
        "n_unchecked": count_verdicts(last.verdicts, UNCHECKED) if last else 0,
        "n_unanswered": count_verdicts(last.verdicts, UNANSWERED) if last else 0,
        "decided": decided_counts(last.verdicts) if last else decided_counts([]),
        "left_out_sections": list(a.left_out_sections or []),
        "rewrite_notes": list(a.rewrite_notes or []),
        "generator_model": a.generator_model,
        "verifier_model": a.verifier_model,
        "sentences": [verdict_json(v) for v in last.verdicts] if last else [],
    }


@dataclass
class StoredAnalyses:
    """A paper's stored critique and synthesis (`reader show`), each as analysis_json gives it."""

    paper_id: str
    title: str
    analyses: list[dict] = field(default_factory=list)
    judgements: list[dict] = field(default_factory=list)  # the reader's (reader.annotations.judgements)
    highlights: list[dict] = field(default_factory=list)  # the reader's (reader.annotations.highlights)
    checklist: dict | None = None  # the rigour checklist (reader.checklist.Checklist.to_json())
    tables: list[dict] = field(default_factory=list)  # the paper's tables as cells (paper_tables)
    figures: list[dict] = field(default_factory=list)  # its figures, without their pictures (paper_figures)

    def to_json(self) -> dict:
        return {
            "paper_id": self.paper_id,
            "title": self.title,
            "analyses": self.analyses,
            "judgements": self.judgements,
            "highlights": self.highlights,
            "checklist": self.checklist,
            "tables": self.tables,
            "figures": self.figures,
        }


def stored_analyses(session: Session, paper) -> StoredAnalyses:
    return StoredAnalyses(
        paper.id,
        paper.title,
        [analysis_json(a) for a in load_analyses(session, paper.id)],
        tables=[t.to_json() for t in paper_tables(session, paper.id)],
        figures=[f.to_json() for f in paper_figures(session, paper.id, with_png=False)],
    )
