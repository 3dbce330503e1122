"""One audit pass of a 40-sentence analysis with a scripted verifier at a fixed latency per call.

Prints LLM calls, prompt tokens and wall time against the critical-path lower
bound (ceil(batches / workers) x latency), for concurrent runs and for a
sequential baseline measured in the same run.

    .venv/bin/python -m benchmarks.bench_audit_pass [--latency 0.2] [--sentences 40] [--repeat 3]
"""

from __future__ import annotations

import argparse
import math
import re
import statistics
import time

from benchmarks.common import SHARED_PAPERS
from reader.audit.guards import PaperFacts
from reader.audit.loop import BATCH_SIZE, audit_text
from reader.index.hits import SearchHit
from reader.llm.scripted import ScriptedLLM

PAPER = SHARED_PAPERS / "acl2020_specter_2020.acl-main.207.pdf"


def paper_passages() -> list[str]:
    """~250-word passages of a real paper, as evidence of realistic size."""
    try:
        import pymupdf

        with pymupdf.open(PAPER) as doc:
            words = " ".join(page.get_text() for page in doc).split()
    except Exception:  # noqa: BLE001 - without the PDF, synthetic text of the same size
        words = ("the model is evaluated on seven tasks with strong baselines " * 400).split()
    return [" ".join(words[i : i + 250]) for i in range(0, len(words), 250)]


def analysis(n: int) -> str:
    templates = [
        "SPECTER improves over SciBERT on the citation prediction task by {n} points.",
        "The authors train on {n}K triples built from the citation graph.",
        "Hard negatives come from papers cited by the query's citations (claim {n}).",
        "The evaluation covers document classification and recommendation, item {n}.",
    ]
    return " ".join(templates[i % 4].format(n=i + 10) for i in range(n))


def verifier(latency: float) -> ScriptedLLM:
    def respond(prompt: str) -> str:
        n = len(re.findall(r"^\[\d+\] ", prompt.split("Evidence:")[0], re.M))
        return "\n".join(f"[{i}] YES" for i in range(1, n + 1))

    return ScriptedLLM(respond, latency_s=latency)


def run(text, passages, facts, latency, workers):
    llm = verifier(latency)

    def search(query, paper_id):
        return [SearchHit(i, "p", passages[i], "Body", i + 1, i + 1, 1.0 / (i + 1)) for i in range(3)]

    start = time.perf_counter()
    result = audit_text(text, paper_id="p", verifier=llm, search=search, facts=facts, max_workers=workers)
    return time.perf_counter() - start, result


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--latency", type=float, default=0.2)
    parser.add_argument("--sentences", type=int, default=40)
    parser.add_argument("--repeat", type=int, default=3)
    args = parser.parse_args()

    passages = paper_passages()
    facts = PaperFacts.from_texts(passages)
    text = analysis(args.sentences)
    batches = math.ceil(args.sentences / BATCH_SIZE)
    print(
        f"audit pass: {args.sentences} sentences, {batches} batches of {BATCH_SIZE}, "
        f"{args.latency * 1000:.0f} ms per call"
    )
    print(
        f"{'workers':>8} {'calls':>6} {'prompt tok':>11} {'wall s':>8} {'bound s':>8} {'wall/bound':>11} {'vs seq':>7}"
    )
    rows = []
    for workers in (1, 4, batches):
        walls = []
        for _ in range(args.repeat):
            wall, result = run(text, passages, facts, args.latency, workers)
            walls.append(wall)
        wall = statistics.median(walls)
        bound = math.ceil(batches / workers) * args.latency
        rows.append((workers, result.llm_calls, result.prompt_tokens, wall, bound))
    sequential = rows[0][3]
    for workers, calls, tokens, wall, bound in rows:
        print(
            f"{workers:>8} {calls:>6} {tokens:>11,} {wall:>8.3f} {bound:>8.3f} {wall / bound:>10.3f}x "
            f"{sequential / wall:>6.2f}x"
        )
    print(f"({len(result.sentences)} verdicts; median of {args.repeat} runs; target wall/bound <= 1.15)")


if __name__ == "__main__":
    main()
