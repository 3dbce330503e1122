"""Run a labelled question set through the CRAG pipeline for a grid of thresholds.

A question file is JSONL, one object per line:

    {"id": "q01", "question": "...", "paper": "<file name or sha256> | null",
     "answer_paper": "<file name or sha256> | \"none\""}

`paper` scopes the question to one paper (null: the whole library);
`answer_paper` is the paper whose text answers it, or "none" when no paper in
the library can. An answerable question counts as right when the answer is
not the not-found sentinel and cites at least one passage of `answer_paper`;
an unanswerable one when the answer is the sentinel.
"""

from __future__ import annotations

import json
import math
from collections import Counter
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from pathlib import Path

from reader.errors import ReaderError


@dataclass
class LabelledQuestion:
    id: str
    question: str
    paper: str | None  # scope reference
    answer_paper: str | None  # None: no paper answers it

    @property
    def answerable(self) -> bool:
        return self.answer_paper is not None


def load_questions(path: str | Path) -> list[LabelledQuestion]:
    path = Path(path)
    try:
        lines = path.read_text(encoding="utf-8").splitlines()
    except OSError as exc:
        raise ReaderError(f"{path}: cannot read the question file ({exc.strerror})") from exc
    out: list[LabelledQuestion] = []
    for n, line in enumerate(lines, 1):
        if not line.strip():
            continue
        try:
            row = json.loads(line)
            answer = row["answer_paper"]
            out.append(LabelledQuestion(
                id=str(row.get("id") or f"line{n}"), question=row["question"], paper=row.get("paper"),
                answer_paper=None if answer in (None, "", "none") else answer,
            ))
        except (json.JSONDecodeError, KeyError, TypeError) as exc:
            raise ReaderError(f"{path}:{n}: each line must be a JSON object with \"question\" and "
                              f"\"answer_paper\" ({exc})") from None
    if not out:
        raise ReaderError(f"{path}: no questions in the file")
    return out


def percentile(values: Sequence[float], q: float) -> float:
    """Nearest-rank percentile (q in 0..100); 0.0 for no values."""
    if not values:
        return 0.0
    ordered = sorted(values)
    rank = max(1, math.ceil(q / 100 * len(ordered)))
    return ordered[rank - 1]


def _resolve(ref: str | None, library: dict[str, str], qid: str) -> str | None:
    if ref is None:
        return None
    if ref in library:
        return library[ref]
    raise ReaderError(f"question {qid}: paper {ref!r} is not in the library; "
                      f"ingest it first (reader ingest ../shared/papers/)")


def score_outcome(q: LabelledQuestion, expected_id: str | None, result) -> dict:
    cited = sorted({s.paper_id for s in result.sources if s.paper_id})
    if q.answerable:
        right = (not result.not_found) and expected_id in cited
    else:
        right = result.not_found
    return {
        "id": q.id, "answerable": q.answerable, "right": right, "not_found": result.not_found,
        "route": result.route, "confidence": result.confidence, "grounded": result.grounded,
        "cited_papers": cited, "llm_calls": result.llm_calls, "seconds": round(result.seconds, 2),
        "fallback_used": result.fallback_used, "answer": result.answer,
    }


def summarise(threshold: float, rows: list[dict]) -> dict:
    answerable = [r for r in rows if r["answerable"]]
    unanswerable = [r for r in rows if not r["answerable"]]
    answered = [r for r in rows if not r["not_found"]]

    def share(part, whole):
        return round(len(part) / len(whole), 3) if whole else None

    return {
        "threshold": threshold,
        "n": len(rows),
        "routes": dict(Counter(r["route"] for r in rows)),
        "answer_accuracy": share([r for r in answerable if r["right"]], answerable),
        "refusal_accuracy": share([r for r in unanswerable if r["right"]], unanswerable),
        "accuracy": share([r for r in rows if r["right"]], rows),
        "grounded_rate_of_answers": share([r for r in answered if r["grounded"]], answered),
        "llm_calls_mean": round(sum(r["llm_calls"] for r in rows) / len(rows), 2) if rows else 0,
        "latency_p50_s": percentile([r["seconds"] for r in rows], 50),
        "latency_p95_s": percentile([r["seconds"] for r in rows], 95),
        "questions": rows,
    }


def run_calibration(
    questions: Sequence[LabelledQuestion],
    thresholds: Sequence[float],
    run_one: Callable[[str, str | None, object], object],
    *,
    library: dict[str, str],
    on_progress: Callable[[str], None] | None = None,
) -> dict:
    """`run_one(question, paper_id, config) -> AskResult`; returns the report as a dict."""
    from reader.crag.pipeline import CragConfig

    resolved = [(q, _resolve(q.paper, library, q.id), _resolve(q.answer_paper, library, q.id))
                for q in questions]
    report = {"n_questions": len(questions), "thresholds": []}
    for threshold in thresholds:
        config = CragConfig(threshold=threshold)
        rows = []
        for n, (q, scope, expected) in enumerate(resolved, 1):
            result = run_one(q.question, scope, config)
            rows.append(score_outcome(q, expected, result))
            if on_progress:
                mark = "ok" if rows[-1]["right"] else "WRONG"
                on_progress(f"threshold {threshold:g} [{n}/{len(resolved)}] {q.id}: "
                            f"{result.route}, {mark}, {result.seconds:.1f} s")
        report["thresholds"].append(summarise(threshold, rows))
    return report


def format_report(report: dict) -> str:
    def pct(value):
        return "-" if value is None else f"{value:.0%}"

    lines = [f"{report['n_questions']} questions",
             "threshold  routes (correct/ambiguous/incorrect)  answer acc  refusal acc  overall  "
             "grounded  calls/q  p50 s  p95 s"]
    for t in report["thresholds"]:
        routes = t["routes"]
        route_text = f"{routes.get('correct', 0)}/{routes.get('ambiguous', 0)}/{routes.get('incorrect', 0)}"
        lines.append(f"{t['threshold']:<9g}  {route_text:<36}  {pct(t['answer_accuracy']):<10}  "
                     f"{pct(t['refusal_accuracy']):<11}  {pct(t['accuracy']):<7}  "
                     f"{pct(t['grounded_rate_of_answers']):<8}  {t['llm_calls_mean']:<7}  "
                     f"{t['latency_p50_s']:<5}  {t['latency_p95_s']}")
    return "\n".join(lines)


@dataclass
class CalibrationReport:
    """run_calibration's report with the two ways `reader calibrate` prints it."""

    data: dict

    def to_json(self) -> dict:
        return self.data

    def text(self) -> str:
        return format_report(self.data)


def select_questions(questions: list[LabelledQuestion], source: str, ids: list[str] | None = None,
                     limit: int | None = None) -> list[LabelledQuestion]:
    """The questions with these ids (all when None), at most `limit` of them."""
    if ids:
        unknown = sorted(set(ids) - {q.id for q in questions})
        if unknown:
            raise ReaderError(f"{source}: no question with id {', '.join(unknown)}")
        questions = [q for q in questions if q.id in ids]
    return questions[:limit]
