"""Totals over the call log: calls, cache hits, errors, tokens and time, grouped
by stage, by role and model, and by paper. Tokens and time count what was spent:
cache hits add to `cached` but not to tokens.

Time is counted two ways. `time_s` is wall time: the sum of each call's latency as
the caller saw it (including waiting for a busy model). `prompt_s` and
`generation_s` are what the server reported spending on prompt processing and
generation (llama.cpp's `timings`), summed over the `timed_calls` that reported
them, and `cached_prompt_tokens` the prompt tokens it reused from its prompt cache;
`drafted_tokens` and `accepted_tokens` are the tokens speculative decoding drafted and
those of them the model accepted (llama.cpp's `draft_n`, `draft_n_accepted`);
each is None when no call in the row reported it. Paper rows and the total also
name the stage with the most wall time (`longest_stage`, `longest_stage_s`)."""

from __future__ import annotations

from dataclasses import asdict, dataclass

from sqlalchemy import Integer, case, func, or_, select

from reader.store.queries import library_titles, resolve_paper
from reader.store.tables import LLMCall


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
    prompt_s: float | None = None
    generation_s: float | None = None
    cached_prompt_tokens: int | None = None
    drafted_tokens: int | None = None
    accepted_tokens: int | None = None
    timed_calls: int = 0
    longest_stage: str = ""
    longest_stage_s: float = 0.0

    @property
    def tokens(self) -> int:
        return self.prompt_tokens + self.completion_tokens


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
    timed = or_(LLMCall.prompt_ms.is_not(None), LLMCall.generation_ms.is_not(None))
    return (
        func.count(LLMCall.id),
        func.coalesce(func.sum(case((LLMCall.cached.is_(True), 1), else_=0)), 0),
        func.coalesce(func.sum(case((LLMCall.error != "", 1), else_=0)), 0),
        func.coalesce(func.sum(case((spent, LLMCall.prompt_tokens), else_=0)), 0).cast(Integer),
        func.coalesce(func.sum(case((spent, LLMCall.completion_tokens), else_=0)), 0).cast(Integer),
        func.coalesce(func.sum(LLMCall.latency_ms), 0.0),
        # NULL (unknown) unless some spent call of the group reported it
        func.sum(case((spent, LLMCall.prompt_ms))),
        func.sum(case((spent, LLMCall.generation_ms))),
        func.sum(case((spent, LLMCall.cached_prompt_tokens))),
        func.sum(case((spent, LLMCall.drafted_tokens))),
        func.sum(case((spent, LLMCall.accepted_tokens))),
        func.coalesce(func.sum(case((spent & timed, 1), else_=0)), 0),
    )


def _seconds(ms) -> float | None:
    return None if ms is None else round(float(ms) / 1000.0, 3)


def _tokens(total) -> int | None:
    return None if total is None else int(total)


def _row(key, measures, title: str = "") -> UsageRow:
    (
        calls,
        cached,
        errors,
        prompt,
        completion,
        latency_ms,
        prompt_ms,
        generation_ms,
        cached_prompt,
        drafted,
        accepted,
        timed,
    ) = measures
    return UsageRow(
        key=key,
        calls=int(calls),
        cached=int(cached),
        errors=int(errors),
        prompt_tokens=int(prompt),
        completion_tokens=int(completion),
        time_s=round(float(latency_ms) / 1000.0, 3),
        title=title,
        prompt_s=_seconds(prompt_ms),
        generation_s=_seconds(generation_ms),
        cached_prompt_tokens=_tokens(cached_prompt),
        drafted_tokens=_tokens(drafted),
        accepted_tokens=_tokens(accepted),
        timed_calls=int(timed),
    )


def _longest(stage_times) -> tuple[str, float]:
    """The (stage, wall seconds) with the most wall time; ties go to the first stage."""
    best = ("", 0.0)
    for stage, seconds in stage_times:
        if not best[0] or seconds > best[1]:
            best = (stage, seconds)
    return best


def usage_report(db, paper: str | None = None) -> UsageReport:
    with db() as session:
        paper_id = resolve_paper(session, paper).id if paper else None

        def grouped(*columns, measures=None):
            measures = _measures() if measures is None else measures
            query = select(*columns, *measures).group_by(*columns).order_by(*columns)
            if paper_id:
                query = query.where(LLMCall.paper_id == paper_id)
            return session.execute(query).all()

        total_query = select(*_measures())
        if paper_id:
            total_query = total_query.where(LLMCall.paper_id == paper_id)
        total = _row("total", session.execute(total_query).one())
        by_stage = [_row(r[0] or "(no stage)", r[1:]) for r in grouped(LLMCall.stage)]
        by_model = [_row(f"{r[0]} / {r[1]}", r[2:]) for r in grouped(LLMCall.role, LLMCall.model)]
        titles = library_titles(session)
        by_paper = [
            _row(r[0] or "(no paper)", r[1:], title=titles.get(r[0], "(not in the library)") if r[0] else "")
            for r in grouped(LLMCall.paper_id)
        ]
        stage_times: dict[str, list[tuple[str, float]]] = {}
        wall_ms = (func.coalesce(func.sum(LLMCall.latency_ms), 0.0),)
        for pid, stage, ms in grouped(LLMCall.paper_id, LLMCall.stage, measures=wall_ms):
            stage_times.setdefault(pid or "(no paper)", []).append(
                (stage or "(no stage)", round(float(ms) / 1000.0, 3))
            )
    for row in by_paper:
        row.longest_stage, row.longest_stage_s = _longest(stage_times.get(row.key, []))
    total.longest_stage, total.longest_stage_s = _longest((r.key, r.time_s) for r in by_stage)
    return UsageReport(paper_id, total, by_stage, by_model, by_paper)
