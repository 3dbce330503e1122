"""Store an asked question and its answer as a Question row."""

from __future__ import annotations

from reader.crag.pipeline import AskResult


def save_question(session, result: AskResult) -> int:
    """Add the row to `session` (the caller commits); returns its id after a flush."""
    from reader.store.tables import Question

    details = result.to_json()
    for key in ("question", "paper_id", "answer", "grounded", "grounded_reason", "route", "confidence"):
        details.pop(key, None)
    row = Question(
        paper_id=result.paper_id,
        question=result.question,
        answer=result.answer,
        grounded=result.grounded,
        grounded_reason=result.grounded_reason,
        route=result.route,
        confidence=result.confidence,
        details=details,
    )
    session.add(row)
    session.flush()
    return row.id
