"""CRAG: calls, tokens, time and answers of the pipeline's configurations (`PATHS`), side by side.

Two modes, each measuring the paths given by `--paths` (default `grader,new`: the relevance grader
first, the default, against the LLM grading every passage) in the same run:

1. Without `--questions`: pipeline overhead and concurrency with a scripted LLM at a
   fixed latency per call, on the tiny in-memory library of the tests. For each route
   (correct / ambiguous / incorrect-with-fallback) and path it prints the LLM calls, the
   wall time, the serial time (calls x latency) and the critical-path lower bound: the
   sequence of dependent waves (grade, rewrite, re-grade, fallback grade, refine, answer,
   check), each wave costing ceil(calls / workers) x latency. Concurrent runs (4 workers)
   and serial runs (1 worker) are measured in the same process so the ratio is meaningful.

       .venv/bin/python -m benchmarks.bench_crag [--latency-ms 200]

2. With `--questions eval/questions.jsonl`: the labelled questions through `ask` on a
   library holding the shared papers (`--home`, ingested from ../shared/papers on the
   first run and kept), with the LLM the settings name (the embedded model unless
   READER_LLM_BASE_URL is set), the response cache off. Each question runs on every
   path, the order alternating per question (new, batched; then batched, new; ...) so a
   noisy machine favours neither. Scored as `reader calibrate` scores (reader.crag.calibrate:
   an answer is right when it is not "not found" and cites the paper holding the answer,
   a refusal when it says not found); per path: answers right, refusals right, LLM calls
   and tokens (prompt + completion) per question, median, latency p50/p95, and the second
   path against the first.

       READER_LLM_BASE_URL=scripted: .venv/bin/python -m benchmarks.bench_crag --questions eval/questions.jsonl
       .venv/bin/python -m benchmarks.bench_crag --questions eval/questions.jsonl --out /tmp/crag_paths.jsonl

The path before batching (one grade and one refine call per passage, `old`) was removed in
issue 30 after this benchmark measured it (docs/measurements/ask.md, "Measured with the scripted LLM").
"""

from __future__ import annotations

import argparse
import functools
import json
import math
import statistics
import sys
import time
from pathlib import Path

from benchmarks.common import SHARED_PAPERS
from reader.crag.grounded import audit_grounded
from reader.crag.pipeline import CragConfig, ask
from reader.grader.model import shared_grader
from reader.llm.scripted import ScriptedLLM
from tests.crag_fakes import PAPER_A, TITLES, CragLLM, FakeSearch

PATHS = {
    # the trained relevance grader first, the LLM for its band (the default)
    "grader": CragConfig,
    # the same, routed on the best passage's confidence (its grade blended with its retrieval rank)
    "grader-conf": lambda **kw: CragConfig(routing="confidence", **kw),
    # the LLM grades every passage in batches; a refusal with a passage graded P(YES) >= 0.9 quotes it
    "new": lambda **kw: CragConfig(grader=False, **kw),
    "batched": lambda **kw: CragConfig(grader=False, quote_threshold=None, **kw),  # refusals never quoted
}

CASES = {
    "correct": dict(
        question="Which baselines do they compare against?", llm=dict(relevant_words=["baselines"])
    ),
    "ambiguous": dict(
        question="Which baselines does our topic model beat?",
        llm=dict(
            relevant_words=["beats", "english only"],
            ambiguous_words=["topic model"],
            rewrites=["English corpus limitations", "model beats LDA", "scales corpora"],
        ),
    ),
    "incorrect": dict(
        question="How were the metabolite profiles measured?",
        llm=dict(
            relevant_words=["gc-ms"],
            rewrites=["measurement instrument", "metabolite profiles", "GC-MS day"],
            answer="Metabolites were measured with GC-MS [1].",
        ),
    ),
}


# -- 1. routes on the scripted library --------------------------------------------------------


def critical_path(result, workers: int, latency: float, config: CragConfig) -> float:
    def waves(calls: int) -> int:
        return math.ceil(calls / workers)

    def calls_for(passages: int) -> int:
        return math.ceil(passages / config.batch_passages)

    by_origin: dict[str, int] = {}
    for grade in result.to_json()["grades"]:
        by_origin[grade["origin"]] = by_origin.get(grade["origin"], 0) + 1
    steps = [waves(calls_for(n)) for n in by_origin.values()]  # retrieval, rewrite, ...
    steps.append(1 if result.rewrites else 0)
    refined = sum(
        1 for s in result.sources if s.refine_note.startswith(("kept sentences", "unread", "refiner said"))
    )
    steps.append(waves(calls_for(refined)))
    checked = "check" in result.trace  # an answer was written (a withheld one is "not found" too)
    steps.append(1 if checked else 0)  # answer
    steps.append(1 if checked else 0)  # check: the answer's sentences fit one batch
    return sum(steps) * latency


def run_case(name: str, path: str, workers: int, latency: float):
    case = CASES[name]
    config = PATHS[path](max_workers=workers)
    llm = CragLLM(latency_s=latency, **case["llm"])
    verifier = ScriptedLLM(lambda prompt: "[1] YES\n[2] YES", latency_s=latency)
    start = time.perf_counter()
    result = ask(
        case["question"],
        paper_id=PAPER_A,
        generator=llm,
        verifier=verifier,
        search=FakeSearch(),
        check_grounded=audit_grounded,
        titles=TITLES,
        config=config,
    )
    wall = time.perf_counter() - start
    assert result.route == name, (name, result.route)
    return result, wall, config


def routes(paths: list[str], latency_ms: float) -> None:
    latency = latency_ms / 1000
    run_case("correct", paths[0], 4, 0.0)  # imports and first-use set-up, outside the timings
    print(f"scripted LLM, {latency_ms:g} ms per call")
    print(
        f"{'route':<10} {'path':<7} {'calls':>5} {'tokens':>6} {'serial s':>9} {'1 worker s':>11} "
        f"{'4 workers s':>12} {'lower bound s':>14} {'4w / bound':>10} {'1w / 4w':>8}"
    )
    for name in CASES:
        for path in paths:
            _, serial_wall, _ = run_case(name, path, 1, latency)
            result, wall, config = run_case(name, path, 4, latency)
            bound = critical_path(result, 4, latency, config)
            print(
                f"{name:<10} {path:<7} {result.llm_calls:>5} {result.tokens:>6} {result.llm_calls * latency:>9.2f} "
                f"{serial_wall:>11.2f} {wall:>12.2f} {bound:>14.2f} {wall / bound:>10.2f} "
                f"{serial_wall / wall:>8.2f}"
            )


# -- 2. labelled questions on the shared papers -----------------------------------------------


def open_library(home: Path, questions, papers_dir: Path):
    """A Reader on `home` (response cache off) holding every paper the questions name."""
    from reader.facade import Reader
    from reader.store.queries import paper_keys

    app = Reader(home=home, use_cache=False)
    wanted = sorted({ref for q in questions for ref in (q.paper, *q.answer_papers) if ref})
    with app.services.db() as session:
        known = paper_keys(session)
    missing = [papers_dir / name for name in wanted if name not in known]
    if missing:
        absent = [str(p) for p in missing if not p.is_file()]
        if absent:
            sys.exit(f"not in the library and not found: {', '.join(absent)}")
        print(f"ingesting {len(missing)} papers into {home} …", file=sys.stderr, flush=True)
        app.ingest(missing)
        with app.services.db() as session:
            known = paper_keys(session)
    return app, known


def warm_up(app) -> None:
    """Load the search index, its embedder and the embedded model (if that is the LLM) before
    anything is timed."""
    app.services.search_index.search("warm up", None)
    for role in (app.services.generator, app.services.verifier):  # both roles share one instance: loaded once
        inner = getattr(role, "inner", role)
        if hasattr(inner, "load"):
            print(f"loading the embedded model: {inner.load():.1f} s", file=sys.stderr, flush=True)
            return


class StageLog:
    """Passes calls through to `llm`, noting each call's stage, tokens and the server's timings."""

    def __init__(self, llm, calls: list[dict]):
        self.llm = llm
        self.calls = calls

    def __getattr__(self, name):  # model, capabilities, supports_logprobs, ... as the wrapped LLM's
        return getattr(self.llm, name)

    def complete(self, messages, **kwargs):
        completion = self.llm.complete(messages, **kwargs)
        self.calls.append(
            {
                "stage": kwargs.get("stage", ""),
                "prompt": completion.prompt_tokens,
                "completion": completion.completion_tokens,
                "seconds": completion.latency_s,
                "cached": getattr(completion, "cached_prompt_tokens", None),
            }
        )
        return completion


def holds_terms(text: str, terms) -> bool:
    """A passage holds the expected answer: all its terms (half of a list of three or more), any
    of a term's '|' alternatives (benchmarks.bench_grader labels passages the same way)."""
    from benchmarks.bench_grader import relevant

    return relevant(text, list(terms or []))


def run_questions(args, paths: list[str]) -> list[dict]:
    from reader.crag.calibrate import load_questions, score_outcome, select_questions
    from reader.store.queries import library_titles

    ids = [i.strip() for i in args.ids.split(",")] if args.ids else None
    questions = select_questions(load_questions(args.questions), args.questions, ids, args.limit)
    app, known = open_library(Path(args.home), questions, Path(args.papers))
    with app.services.db() as session:
        titles = library_titles(session)
    warm_up(app)
    relevance = shared_grader()
    relevance.load()
    print(
        f"{len(questions)} questions, paths {', '.join(paths)}, home {args.home}, "
        f"LLM {getattr(app.services.generator, 'model', '?')}",
        file=sys.stderr,
        flush=True,
    )
    rows = []
    for n, q in enumerate(questions):
        scope = known[q.paper] if q.paper else None
        expected = [known[ref] for ref in q.answer_papers] or None  # every one must be cited
        for path in paths if n % 2 == 0 else paths[::-1]:
            calls: list[dict] = []
            config = PATHS[path]()
            result = ask(
                q.question,
                paper_id=scope,
                generator=StageLog(app.services.generator, calls),
                verifier=StageLog(app.services.verifier, calls),
                search=app.services.search_index.search,
                # as reader ask checks: with the settings' checker band (the extraction checks, the
                # control claim only for an endpoint verifier)
                check_grounded=functools.partial(audit_grounded, checker=app.services.checker),
                titles=titles,
                config=config,
                relevance=relevance if config.grader else None,
            )
            p_yes = [g["p_yes"] for g in result.to_json()["grades"] if g.get("p_yes") is not None]
            row = {
                "path": path,
                **score_outcome(q, expected, result),
                "tokens": result.tokens,
                "trace": result.trace,
                "calls": calls,
                "quoted": result.quoted,
                "best_p_yes": max(p_yes, default=None),
                "passages": [
                    {
                        "key": c.key,
                        "relevant": bool(q.answer_papers) and holds_terms(c.text, q.expected_terms),
                        "p_yes": c.grade.p_yes,
                        "model_p": c.grade.model_p,
                        "score": c.grade.score,
                    }
                    for c in result.graded
                    if c.grade is not None
                ],
            }
            rows.append(row)
            print(
                f"[{n + 1}/{len(questions)}] {q.id} {path}: {result.route}, "
                f"{'ok' if row['right'] else 'WRONG'}, {result.llm_calls} calls, {result.tokens} tokens, "
                f"{result.seconds:.1f} s",
                file=sys.stderr,
                flush=True,
            )
    return rows


def summary(rows: list[dict]) -> dict:
    from reader.crag.calibrate import percentile

    answerable = [r for r in rows if r["answerable"]]
    unanswerable = [r for r in rows if not r["answerable"]]
    seconds = [r["seconds"] for r in rows]
    return {
        "n": len(rows),
        "answers_right": sum(r["right"] for r in answerable),
        "answerable": len(answerable),
        "refusals_right": sum(r["right"] for r in unanswerable),
        "unanswerable": len(unanswerable),
        "grounded": sum(r["grounded"] for r in rows if not r["not_found"]),
        "answered": sum(not r["not_found"] for r in rows),
        "calls_median": statistics.median(r["llm_calls"] for r in rows),
        "calls_mean": round(statistics.fmean(r["llm_calls"] for r in rows), 2),
        "tokens_median": statistics.median(r["tokens"] for r in rows),
        "p50_s": percentile(seconds, 50),
        "p95_s": percentile(seconds, 95),
    }


def stage_table(rows: list[dict], paths: list[str]) -> None:
    """Per path and stage, per question on average: calls, prompt and completion tokens, seconds."""
    print(
        f"{'path':<7} {'stage':<18} {'calls/q':>8} {'prompt tok/q':>12} {'compl tok/q':>11} "
        f"{'cached tok/q':>12} {'s/q':>7}"
    )
    for path in paths:
        mine = [r for r in rows if r["path"] == path]
        stages = sorted({c["stage"] for r in mine for c in r["calls"]})
        for stage in stages:
            calls = [c for r in mine for c in r["calls"] if c["stage"] == stage]

            def per_q(key):
                return sum(c[key] or 0 for c in calls) / len(mine)

            print(
                f"{path:<7} {stage:<18} {len(calls) / len(mine):>8.2f} {per_q('prompt'):>12.0f} "
                f"{per_q('completion'):>11.0f} {per_q('cached'):>12.0f} {per_q('seconds'):>7.2f}"
            )


def report(rows: list[dict], paths: list[str]) -> None:
    stage_table(rows, paths)
    print()
    stats = {path: summary([r for r in rows if r["path"] == path]) for path in paths}
    print(
        f"{'path':<7} {'answers right':>13} {'refusals right':>14} {'grounded':>9} {'calls med':>9} "
        f"{'calls mean':>10} {'tokens med':>10} {'p50 s':>7} {'p95 s':>7}"
    )
    for path, s in stats.items():
        print(
            f"{path:<7} {s['answers_right']:>6}/{s['answerable']:<6} {s['refusals_right']:>7}/{s['unanswerable']:<6} "
            f"{s['grounded']:>4}/{s['answered']:<4} {s['calls_median']:>9g} {s['calls_mean']:>10g} "
            f"{s['tokens_median']:>10g} {s['p50_s']:>7.2f} {s['p95_s']:>7.2f}"
        )
    if len(paths) == 2:
        first, second = paths
        a, b = stats[first], stats[second]

        def ratio(key):
            return f"{b[key] / a[key]:.2f}" if a[key] else "-"

        print(
            f"{second}/{first}: calls median {ratio('calls_median')}, tokens median {ratio('tokens_median')}, "
            f"p50 {ratio('p50_s')}, p95 {ratio('p95_s')}; answers right {b['answers_right']} vs "
            f"{a['answers_right']}, refusals right {b['refusals_right']} vs {a['refusals_right']}"
        )
        by_question = {}
        for r in rows:
            by_question.setdefault(r["id"], {})[r["path"]] = r
        differ = [
            qid
            for qid, pair in by_question.items()
            if len(pair) == 2 and pair[first]["right"] != pair[second]["right"]
        ]
        print(f"questions right on one path only: {', '.join(differ) or 'none'}")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--paths", default="grader,new", help="comma-separated, of: " + ", ".join(PATHS))
    parser.add_argument(
        "--latency-ms", type=float, default=200.0, help="routes mode: scripted latency per call"
    )
    parser.add_argument("--questions", help="labelled questions (JSONL, as for reader calibrate)")
    parser.add_argument("--ids", help="only these question ids, comma-separated")
    parser.add_argument("--limit", type=int, help="at most this many questions")
    parser.add_argument(
        "--home",
        default="/tmp/reader-bench-crag",
        help="READER_HOME for the questions (the shared papers are ingested once, then kept)",
    )
    parser.add_argument("--papers", default=str(SHARED_PAPERS), help="where the questions' papers are")
    parser.add_argument("--out", help="save one JSON line per question and path here")
    args = parser.parse_args()
    paths = [p.strip() for p in args.paths.split(",") if p.strip()]
    unknown = sorted(set(paths) - set(PATHS))
    if unknown or not paths:
        parser.error(f"--paths: unknown {', '.join(unknown) or '(none given)'}; use {', '.join(PATHS)}")
    if not args.questions:
        routes(paths, args.latency_ms)
        return
    started = time.perf_counter()
    rows = run_questions(args, paths)
    if args.out:
        with open(args.out, "w", encoding="utf-8") as fh:
            fh.writelines(json.dumps(row, ensure_ascii=False) + "\n" for row in rows)
    report(rows, paths)
    print(f"{len(rows)} runs in {time.perf_counter() - started:.0f} s")


if __name__ == "__main__":
    main()
