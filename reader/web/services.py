"""What the pages need beyond one Reader call: an upload's review with a progress
fraction, and an answer shaped for the Ask page. `ctx` is a reader.facade.Reader."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import asdict, dataclass, field
from pathlib import Path

from reader.errors import ReaderError


class ReviewFailed(ReaderError):
    pass


# Where each review stage sits on the progress bar (fraction reached when it starts).
STAGE_FRACTIONS = {"ingest": 0.05, "read": 0.30, "reviewed": 0.99, "skipped": 0.99}
# deep_read reports finer stages; they move the bar within the "read" span.
READ_SPAN = (0.30, 0.98)


def _read_fraction(detail: str, seen: list[str]) -> float:
    """Progress inside the deep read: every new detail moves the bar forward, with
    diminishing steps, since the number of audit batches is not known up front."""
    if detail and (not seen or seen[-1] != detail):
        seen.append(detail)
    start, end = READ_SPAN
    return start + (end - start) * (1 - 0.85 ** len(seen))


def review_upload(pdf_path: Path, ctx, on_progress: Callable[[str, float | None], None]) -> str:
    """Ingest, deep-read and audit one uploaded PDF through the batch review runner
    (so the web and `reader review` record the same ReviewJob rows). Returns the paper id."""
    details: list[str] = []

    def on_event(event) -> None:
        if event.stage == "read" and event.detail:
            on_progress(f"read: {event.detail}", _read_fraction(event.detail, details))
        elif event.stage in STAGE_FRACTIONS:
            on_progress(event.stage, STAGE_FRACTIONS[event.stage])

    report = ctx.review([pdf_path], jobs=1, on_event=on_event)
    outcome = report.papers[0]
    if outcome.status in ("reviewed", "skipped") and outcome.paper_id:
        return outcome.paper_id
    raise ReviewFailed(outcome.error or f"the review ended as {outcome.status!r}")


# ---------------------------------------------------------------- asking


@dataclass
class SourceView:
    label: str
    pages: str
    text: str
    paper_id: str | None


@dataclass
class AskView:
    question: str
    answer: str
    grounded: bool
    grounded_reason: str
    route: str
    confidence: float
    sources: list[SourceView] = field(default_factory=list)
    notes: list[str] = field(default_factory=list)
    llm_calls: int = 0
    seconds: float = 0.0

    def to_json(self) -> dict:
        return asdict(self)


def ask(ctx, question: str, paper_id: str | None) -> AskView:
    """Answer with Corrective RAG about one paper or (paper_id None) the whole library."""
    result = ctx.ask(question, paper_id)
    return AskView(
        question=result.question,
        answer=result.answer,
        grounded=result.grounded,
        grounded_reason=result.grounded_reason,
        route=result.route,
        confidence=result.confidence,
        sources=[
            SourceView(label=c.source_label, pages=c.pages, text=c.refined or c.text,
                       paper_id=None if c.external else c.paper_id)
            for c in result.sources
        ],
        notes=list(result.notes),
        llm_calls=result.llm_calls,
        seconds=result.seconds,
    )
