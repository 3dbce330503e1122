"""Verifier quality on ../shared/eval: the embedded verifier alone, the guards alone, both.

SciFact claims are checked against the abstract they were written against
(true = supported, false = contradicted); SummEdits-SciTLDR summaries against
their abstract (1 = consistent). "Flagged" is the positive class; balanced
accuracy = (recall on unsupported + recall on supported) / 2.

Each item is one call with the real verify prompt (one claim, the abstract as
the only evidence). The embedded model is slow on 2 cores, so a balanced,
seeded sample is used (--n per label per dataset).

    .venv/bin/python benchmarks/bench_verifier_quality.py [--n 30] [--guards-only]
"""

from __future__ import annotations

import argparse
import json
import random
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from reader.audit.guards import PaperFacts, check_sentence  # noqa: E402
from reader.audit.verify import EvidenceRef, build_prompt, parse_answers  # noqa: E402
from reader.llm.base import user  # noqa: E402

EVAL = ROOT.parent / "shared" / "eval"


def scifact() -> list[tuple[str, str, bool]]:
    rows = []
    with open(EVAL / "scifact_claims.jsonl", encoding="utf-8") as fh:
        for line in fh:
            item = json.loads(line)
            evidence = "\n".join(c["text"] for c in item["gold_ctx"])
            rows.append((item["input"], evidence, item["answer"] == "true"))
    return rows


def summedits() -> list[tuple[str, str, bool]]:
    data = json.loads((EVAL / "summedits_scitldr.json").read_text(encoding="utf-8"))
    return [(item["summary"], item["doc"], item["label"] == 1) for item in data]


def sample(rows, n, seed=7):
    rng = random.Random(seed)
    pos = [r for r in rows if r[2]]
    neg = [r for r in rows if not r[2]]
    if n <= 0:
        return rows
    return rng.sample(pos, min(n, len(pos))) + rng.sample(neg, min(n, len(neg)))


def balanced_accuracy(flags: list[bool], supported: list[bool]) -> tuple[float, float, float]:
    tp = sum(f and not s for f, s in zip(flags, supported))
    tn = sum((not f) and s for f, s in zip(flags, supported))
    n_unsup = sum(not s for s in supported)
    n_sup = sum(supported)
    tpr = tp / n_unsup if n_unsup else 0.0
    tnr = tn / n_sup if n_sup else 0.0
    return (tpr + tnr) / 2, tpr, tnr


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--n", type=int, default=30, help="items per label per dataset (0 = all)")
    parser.add_argument("--guards-only", action="store_true", help="skip the model (all items, fast)")
    parser.add_argument("--threads", type=int, default=None, help="llama.cpp threads (default: all cores)")
    args = parser.parse_args()

    llm = None
    if not args.guards_only:
        from reader.config import load_settings
        from reader.llm.local import LocalLLM

        llm = LocalLLM(load_settings().models_dir, n_threads=args.threads)
        print(f"loading the embedded model: {llm.load():.1f} s", flush=True)

    print(f"{'dataset':<12} {'n':>4} {'method':<10} {'bal.acc':>8} {'recall unsup':>13} {'recall sup':>11}")
    for name, rows in (("SciFact", scifact()), ("SummEdits", summedits())):
        items = rows if args.guards_only else sample(rows, args.n)
        supported = [r[2] for r in items]
        guard_flags = [bool(check_sentence(claim, PaperFacts.from_texts([ev]))) for claim, ev, _ in items]
        results = {"guards": guard_flags}
        if llm is not None:
            llm_flags, unanswered, seconds, tokens = [], 0, 0.0, 0
            for done, (claim, evidence, _) in enumerate(items, 1):
                if done % 10 == 0:
                    print(f"  {name}: {done}/{len(items)} …", file=sys.stderr, flush=True)
                prompt = build_prompt([claim], [EvidenceRef(None, 1, 1, evidence)])
                start = time.perf_counter()
                completion = llm.complete(user(prompt), temperature=0.0, max_tokens=24, stage="verify")
                seconds += time.perf_counter() - start
                tokens += completion.prompt_tokens
                answer = parse_answers(completion.text, 1)[0]
                unanswered += answer is None
                llm_flags.append(answer == "NO")
            results["verifier"] = llm_flags
            results["both"] = [a or b for a, b in zip(llm_flags, guard_flags)]
        for method in ("verifier", "guards", "both"):
            if method in results:
                ba, tpr, tnr = balanced_accuracy(results[method], supported)
                print(f"{name:<12} {len(items):>4} {method:<10} {ba:>8.3f} {tpr:>13.3f} {tnr:>11.3f}", flush=True)
        if llm is not None:
            print(f"{'':<12} {'':>4} ({unanswered} unanswered; {seconds / len(items):.1f} s and "
                  f"{tokens / len(items):.0f} prompt tokens per call)", flush=True)


if __name__ == "__main__":
    main()
