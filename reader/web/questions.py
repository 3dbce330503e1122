"""Stored questions and their answers as plain data read from the database: the answer
page and the history beside the Ask form."""

from __future__ import annotations

import re
from dataclasses import dataclass
from datetime import datetime

from sqlalchemy import select
from sqlalchemy.orm import Session

from reader.store.tables import Paper


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
class QuestionPage:
    id: int
    question: str
    answer: str
    grounded: bool
    grounded_reason: str
    route: str
    outcome: str  # the route in plain words
    status: str  # answer_status: answered | unsupported | not found | withheld
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


# the answers reader.crag gives when the papers do not say (English, Chinese)
NOT_FOUND_PREFIXES = ("Not found in the papers", "未在论文中找到")
WITHHELD = "withheld"  # in the reason of a drafted answer refused as unsupported


def is_not_found(answer: str) -> bool:
    return answer.strip().startswith(NOT_FOUND_PREFIXES)


def answer_status(answer: str, grounded: bool, grounded_reason: str) -> str:
    """answered (checked against its sources) | unsupported (not fully backed) | not found |
    withheld (a draft the check found unsupported, not shown as the answer)."""
    if is_not_found(answer):
        return "withheld" if WITHHELD in (grounded_reason or "") else "not found"
    return "answered" if grounded else "unsupported"


def route_in_words(route: str, answer: str, n_sources: int, withheld: bool = False) -> str:
    """What the Corrective RAG route means for the person who asked."""
    if withheld:
        found = "A passage was" if n_sources == 1 else f"{n_sources or 'Some'} passages were"
        return (
            f"{found} found and an answer drafted from {'it' if n_sources == 1 else 'them'}, but the check "
            f"found the draft unsupported, so it is withheld; read {'it' if n_sources == 1 else 'them'} below yourself."
        )
    if route == "citations":
        if not n_sources:
            return "The library's reference lists have no answer to this (the citation graph)."
        return "Answered from the library's reference lists (the citation graph), not from passages."
    if is_not_found(answer) or not n_sources:
        return "No passage of the papers answers this question."
    if route == "correct":
        return "Answered from passages found on the first search."
    if route in ("ambiguous", "incorrect"):
        return "Answered after searching again with reworded questions."
    return "Answered from the papers."


def _first_page(pages: str) -> int:
    m = re.search(r"\d+", pages or "")
    return int(m.group()) if m else 1


def question_of(session: Session, question_id: int) -> QuestionPage | None:
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
        sources.append(
            QuestionSource(
                number=n,
                label=label,
                pages=str(src.get("pages") or ""),
                text=src.get("text") or "",
                paper_id=pid if pid in titles else None,
                chunk_id=src.get("chunk_id"),
                page=_first_page(str(src.get("pages") or "")),
            )
        )
    status = answer_status(row.answer or "", bool(row.grounded), row.grounded_reason or "")
    return QuestionPage(
        id=row.id,
        question=row.question,
        answer=row.answer or "",
        grounded=bool(row.grounded),
        grounded_reason=row.grounded_reason or "",
        route=row.route or "",
        outcome=route_in_words(row.route or "", row.answer or "", len(sources), status == "withheld"),
        status=status,
        confidence=row.confidence or 0.0,
        paper_id=row.paper_id,
        paper_title=titles.get(row.paper_id, "") if row.paper_id else "",
        sources=sources,
        notes=list(details.get("notes") or []),
        llm_calls=int(details.get("llm_calls") or 0),
        seconds=float(details.get("seconds") or 0.0),
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
        QuestionLine(
            id=qid,
            question=q,
            paper_title=titles.get(pid, "") if pid else "",
            answered=not is_not_found(answer or ""),
            created_at=at,
        )
        for qid, q, pid, answer, at in session.execute(
            select(Question.id, Question.question, Question.paper_id, Question.answer, Question.created_at)
            .where(Question.origin == "asked")  # the follow-up questions are on their paper's page
            .order_by(Question.id.desc())
            .limit(limit)
        )
    ]
