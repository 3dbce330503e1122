"""Totals over the call log: calls, cache hits, errors, tokens and time, grouped
by stage, by role and model, and by paper. Tokens and time count what was spent:
cache hits add to `cached` but not to tokens."""

from __future__ import annotations

from dataclasses import asdict, dataclass

from sqlalchemy import Integer, case, func, select

from reader.store.queries import resolve_paper
from reader.store.tables import LLMCall, Paper


@dataclass
class UsageRow:
    key: str
    calls: int
    cached: int
    errors: int
    prompt_tokens: int
    completion_tokens: int
    time_s: float
    title: str = ""


@dataclass
class UsageReport:
    paper_id: str | None
    total: UsageRow
    by_stage: list[UsageRow]
    by_model: list[UsageRow]
    by_paper: list[UsageRow]

    def to_json(self) -> dict:
        return {
            "paper_id": self.paper_id,
            "total": asdict(self.total),
            "by_stage": [asdict(r) for r in self.by_stage],
            "by_model": [asdict(r) for r in self.by_model],
            "by_paper": [asdict(r) for r in self.by_paper],
        }


def _measures():
    spent = LLMCall.cached.is_(False)
    return (
        func.count(LLMCall.id),
        func.coalesce(func.sum(case((LLMCall.cached.is_(True), 1), else_=0)), 0),
        func.coalesce(func.sum(case((LLMCall.error != "", 1), else_=0)), 0),
        func.coalesce(func.sum(case((spent, LLMCall.prompt_tokens), else_=0)), 0).cast(Integer),
        func.coalesce(func.sum(case((spent, LLMCall.completion_tokens), else_=0)), 0).cast(Integer),
        func.coalesce(func.sum(LLMCall.latency_ms), 0.0),
    )


def _row(key, measures, title: str = "") -> UsageRow:
    calls, cached, errors, prompt, completion, latency_ms = measures
    return UsageRow(key=key, calls=int(calls), cached=int(cached), errors=int(errors),
                    prompt_tokens=int(prompt), completion_tokens=int(completion),
                    time_s=round(float(latency_ms) / 1000.0, 3), title=title)


def usage_report(db, paper: str | None = None) -> UsageReport:
    with db() as session:
        paper_id = resolve_paper(session, paper).id if paper else None

        def grouped(*columns):
            query = select(*columns, *_measures()).group_by(*columns).order_by(*columns)
            if paper_id:
                query = query.where(LLMCall.paper_id == paper_id)
            return session.execute(query).all()

        total_query = select(*_measures())
        if paper_id:
            total_query = total_query.where(LLMCall.paper_id == paper_id)
        total = _row("total", session.execute(total_query).one())
        by_stage = [_row(r[0] or "(no stage)", r[1:]) for r in grouped(LLMCall.stage)]
        by_model = [_row(f"{r[0]} / {r[1]}", r[2:]) for r in grouped(LLMCall.role, LLMCall.model)]
        titles = dict(session.execute(select(Paper.id, Paper.title)).all())
        by_paper = [
            _row(r[0] or "(no paper)", r[1:],
                 title=titles.get(r[0], "(not in the library)") if r[0] else "")
            for r in grouped(LLMCall.paper_id)
        ]
    return UsageReport(paper_id, total, by_stage, by_model, by_paper)
