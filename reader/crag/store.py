"""Store an asked question and its answer as a Question row."""

from __future__ import annotations

from reader.crag.pipeline import AskResult


def save_question(session, result: AskResult, origin: str = "asked") -> int:
    """Add the row to `session` (the caller commits); returns its id after a flush. `origin`:
    "asked", or "followup" for the follow-up questioner's."""
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
        origin=origin,
    )
    session.add(row)
    session.flush()
    return row.id


def replace_followups(session, paper_id: str, answers: list[AskResult]) -> None:
    """The paper's follow-up questions are these now: the earlier review's are deleted."""
    from sqlalchemy import delete

    from reader.store.tables import Question

    session.execute(delete(Question).where(Question.paper_id == paper_id, Question.origin == "followup"))
    for result in answers:
        save_question(session, result, origin="followup")
