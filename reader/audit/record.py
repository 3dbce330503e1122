"""Store an audited analysis (every iteration, verdict, reason and evidence) and read it back.

`save_analysis` only adds rows to the session it is given; the caller decides
the transaction, so a deep read can store critique and synthesis together or
not at all.
"""

from __future__ import annotations

from sqlalchemy import delete, select
from sqlalchemy.orm import Session, selectinload

from reader.audit.loop import LoopResult
from reader.store.tables import (
    Analysis, AnalysisIteration, SentenceVerdict, VerdictEvidence,
)


def save_analysis(
    session: Session,
    *,
    paper_id: str,
    kind: str,
    loop: LoopResult,
    generator_model: str = "",
    verifier_model: str = "",
    left_out_sections: list[str] | None = None,
    replace: bool = True,
) -> Analysis:
    """Add the analysis with all its iterations; with `replace`, earlier
    analyses of the same kind for this paper are removed in the same session."""
    if replace:
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
    )
    for number, it in enumerate(loop.iterations):
        row = AnalysisIteration(
            iteration=number,
            text=it.text,
            n_sentences=len(it.audit.sentences),
            n_flagged=it.audit.n_flagged,
            flagged_ratio=it.audit.flagged_ratio,
        )
        for ordinal, s in enumerate(it.audit.sentences):
            verdict = SentenceVerdict(
                ordinal=ordinal, text=s.text, verdict=s.verdict, llm_answer=s.llm_answer,
                reasons=list(s.reasons), reused=s.reused,
            )
            verdict.evidence = [
                VerdictEvidence(rank=rank, chunk_id=e.chunk_id, page_start=e.page_start,
                                page_end=e.page_end, text=e.text)
                for rank, e in enumerate(s.evidence)
            ]
            row.verdicts.append(verdict)
        analysis.iterations.append(row)
    session.add(analysis)
    return analysis


def load_analyses(session: Session, paper_id: str) -> list[Analysis]:
    """The stored analyses of a paper, newest first within each kind, all rows loaded."""
    stmt = (
        select(Analysis)
        .where(Analysis.paper_id == paper_id)
        .options(
            selectinload(Analysis.iterations)
            .selectinload(AnalysisIteration.verdicts)
            .selectinload(SentenceVerdict.evidence)
        )
        .order_by(Analysis.kind, Analysis.created_at.desc(), Analysis.id.desc())
    )
    return list(session.scalars(stmt))


def _pages(start: int, end: int) -> str:
    return str(start) if start == end else f"{start}-{end}"


def verdict_json(v: SentenceVerdict) -> dict:
    return {
        "text": v.text,
        "verdict": v.verdict,
        "reasons": list(v.reasons or []),
        "evidence": [
            {"chunk_id": e.chunk_id, "pages": _pages(e.page_start, e.page_end), "text": e.text}
            for e in v.evidence
        ],
    }


def analysis_json(a: Analysis) -> dict:
    """The stored analysis in the shape `reader read --json` prints."""
    last = a.iterations[-1] if a.iterations else None
    return {
        "kind": a.kind,
        "final_text": a.final_text,
        "flagged_ratio": a.flagged_ratio,
        "iterations": len(a.iterations),
        "regenerations": a.regenerations,
        "flagged_per_iteration": [it.n_flagged for it in a.iterations],
        "ratio_per_iteration": [it.flagged_ratio for it in a.iterations],
        "left_out_sections": list(a.left_out_sections or []),
        "generator_model": a.generator_model,
        "verifier_model": a.verifier_model,
        "sentences": [verdict_json(v) for v in last.verdicts] if last else [],
    }
