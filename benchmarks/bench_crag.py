"""CRAG pipeline overhead and concurrency with a scripted LLM at a fixed latency per call.

For each route (correct / ambiguous / incorrect-with-fallback) it prints the
LLM calls, the wall time, the serial time (calls x latency) and the
critical-path lower bound: the sequence of dependent waves (grade, rewrite,
re-grade, fallback grade, refine, answer, check), each wave costing
ceil(calls / workers) x latency. Concurrent runs (4 workers) and serial runs
(1 worker) are measured in the same process so the ratio is meaningful.

    .venv/bin/python benchmarks/bench_crag.py [--latency-ms 200]
"""

from __future__ import annotations

import argparse
import math
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "tests"))

from crag_fakes import PAPER_A, TITLES, CragLLM, FakeSearch  # noqa: E402

from reader.crag.grounded import audit_grounded  # noqa: E402
from reader.crag.pipeline import CragConfig, ask  # noqa: E402
from reader.llm.scripted import ScriptedLLM  # noqa: E402

CASES = {
    "correct": dict(question="Which baselines do they compare against?",
                    llm=dict(relevant_words=["baselines"])),
    "ambiguous": dict(question="Which baselines does our topic model beat?",
                      llm=dict(relevant_words=["beats", "english only"], ambiguous_words=["topic model"],
                               rewrites=["English corpus limitations", "model beats LDA", "scales corpora"])),
    "incorrect": dict(question="How were the metabolite profiles measured?",
                      llm=dict(relevant_words=["gc-ms"], rewrites=["measurement instrument",
                                                                   "metabolite profiles", "GC-MS day"],
                               answer="Metabolites were measured with GC-MS [1].")),
}


def critical_path(result, workers: int, latency: float) -> float:
    data = result.to_json()
    by_origin: dict[str, int] = {}
    for grade in data["grades"]:
        by_origin[grade["origin"]] = by_origin.get(grade["origin"], 0) + 1
    waves = [math.ceil(n / workers) for n in by_origin.values()]  # retrieval, rewrite, collection
    waves.append(1 if result.rewrites else 0)
    refine_calls = sum(1 for s in result.sources if s.refine_note.startswith(("kept sentences", "unread", "refiner said")))
    waves.append(math.ceil(refine_calls / workers) if refine_calls else 0)
    waves.append(0 if result.not_found else 1)  # answer
    waves.append(0 if result.not_found else 1)  # check: the answer's sentences fit one batch
    return sum(waves) * latency


def run_case(name: str, workers: int, latency: float):
    case = CASES[name]
    llm = CragLLM(latency_s=latency, **case["llm"])
    verifier = ScriptedLLM(lambda prompt: "[1] YES\n[2] YES", latency_s=latency)
    start = time.perf_counter()
    result = ask(case["question"], paper_id=PAPER_A, generator=llm, verifier=verifier, search=FakeSearch(),
                 check_grounded=audit_grounded, titles=TITLES, config=CragConfig(max_workers=workers))
    wall = time.perf_counter() - start
    assert result.route == name, (name, result.route)
    return result, wall


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--latency-ms", type=float, default=200.0)
    args = parser.parse_args()
    latency = args.latency_ms / 1000
    print(f"scripted LLM, {args.latency_ms:g} ms per call")
    print(f"{'route':<10} {'calls':>5} {'serial s':>9} {'1 worker s':>11} {'4 workers s':>12} "
          f"{'lower bound s':>14} {'4w / bound':>10} {'1w / 4w':>8}")
    for name in CASES:
        serial_result, serial_wall = run_case(name, 1, latency)
        result, wall = run_case(name, 4, latency)
        bound = critical_path(result, 4, latency)
        print(f"{name:<10} {result.llm_calls:>5} {result.llm_calls * latency:>9.2f} {serial_wall:>11.2f} "
              f"{wall:>12.2f} {bound:>14.2f} {wall / bound:>10.2f} {serial_wall / wall:>8.2f}")


if __name__ == "__main__":
    main()
