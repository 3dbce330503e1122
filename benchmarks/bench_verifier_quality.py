"""Verifier quality on ../shared/eval: the embedded verifier alone, the guards alone, both.

SciFact claims are checked against the abstract they were written against
(true = supported, false = contradicted); SummEdits-SciTLDR summaries against
their abstract (1 = consistent). "Flagged" is the positive class; balanced
accuracy = (recall on unsupported + recall on supported) / 2, with a 95% interval
(normal approximation on each recall).

Each item is one call through the audit itself (reader.audit.loop.audit_sentences:
the verify prompt, the verifier's P(YES) against the threshold, the guards), with the abstract as the only evidence; `--focused` shows the
abstract's best-matching sentences instead of the whole abstract. A balanced,
seeded sample is used (--n per label per dataset). `--out` saves every item so
that `--from` can re-score it at another threshold without the model.

    .venv/bin/python -m benchmarks.bench_verifier_quality [--n 50] [--guards-only] [--out F]
"""

from __future__ import annotations

import argparse
import json
import random
import sys
import time
from pathlib import Path

from benchmarks.common import SHARED_EVAL as EVAL
from reader.audit.guards import PaperFacts, check_sentence
from reader.audit.verify import EvidenceRef


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


def interval(flags: list[bool], supported: list[bool]) -> tuple[float, float]:
    """95% interval of the balanced accuracy (the two recalls are independent samples)."""
    import math

    pos = [f for f, s in zip(flags, supported) if not s]
    neg = [not f for f, s in zip(flags, supported) if s]
    variance = sum(p * (1 - p) / len(x) for x in (pos, neg) if x for p in [sum(x) / len(x)]) / 4
    ba = balanced_accuracy(flags, supported)[0]
    return max(0.0, ba - 1.96 * math.sqrt(variance)), min(1.0, ba + 1.96 * math.sqrt(variance))


def run_model(items, llm, focused: bool) -> list[dict]:
    from reader.audit.evidence import focus
    from reader.audit.loop import audit_sentences

    out = []
    for done, (claim, evidence, supported) in enumerate(items, 1):
        if done % 10 == 0:
            print(f"  {done}/{len(items)} …", file=sys.stderr, flush=True)
        passage = [EvidenceRef(None, 1, 1, evidence)]
        shown = (lambda batch: focus(batch, [passage] * len(batch))) if focused else (lambda batch: passage)
        start = time.perf_counter()
        result = audit_sentences([claim], verifier=llm, evidence_for=shown, max_workers=1)
        s = result.sentences[0]
        j = s.judgement
        out.append(
            {
                "supported": supported,
                "answer": j.answer,
                "p_yes": j.p_yes,
                "has_evidence": True,
                "seconds": time.perf_counter() - start,
                "prompt_tokens": result.prompt_tokens,
            }
        )
    return out


def verifier_flags(saved: list[dict], threshold) -> list[bool]:
    from reader.audit.loop import Judgement

    return [Judgement.from_dict(item).accepted(threshold) is False for item in saved]


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--n", type=int, default=30, help="items per label per dataset (0 = all)")
    parser.add_argument("--guards-only", action="store_true", help="skip the model (all items, fast)")
    parser.add_argument("--threads", type=int, default=None, help="llama.cpp threads (default: all cores)")
    parser.add_argument("--focused", action="store_true", help="the abstract's best sentences only")
    parser.add_argument(
        "--threshold", type=float, default=None, help="P(YES) threshold (default: the audit's YES_THRESHOLD)"
    )
    parser.add_argument("--out", help="save the model's answers per item (JSON)")
    parser.add_argument("--from", dest="source", help="re-score answers saved with --out")
    args = parser.parse_args()

    from reader.config.settings import VERIFY_THRESHOLD as YES_THRESHOLD

    threshold = YES_THRESHOLD if args.threshold is None else args.threshold
    saved: dict = json.loads(Path(args.source).read_text()) if args.source else {}
    llm = None
    if not args.guards_only and not saved:
        from reader.config import load_settings
        from reader.llm.local import LocalLLM

        llm = LocalLLM(load_settings().models_dir, n_threads=args.threads)
        print(f"loading the embedded model: {llm.load():.1f} s", flush=True)

    print(f"P(YES) threshold {threshold}")
    print(
        f"{'dataset':<12} {'n':>4} {'method':<10} {'bal.acc':>8}  {'95% interval':<14} "
        f"{'recall unsup':>13} {'recall sup':>11}"
    )
    for name, rows in (("SciFact", scifact()), ("SummEdits", summedits())):
        items = rows if args.guards_only else sample(rows, args.n)
        supported = [r[2] for r in items]
        guard_flags = [bool(check_sentence(claim, PaperFacts.from_texts([ev]))) for claim, ev, _ in items]
        results = {"guards": guard_flags}
        if llm is not None:
            saved[name] = run_model(items, llm, args.focused)
        if saved.get(name):
            results["verifier"] = verifier_flags(saved[name], threshold)
            results["both"] = [a or b for a, b in zip(results["verifier"], guard_flags)]
        for method in ("verifier", "guards", "both"):
            if method in results:
                ba, tpr, tnr = balanced_accuracy(results[method], supported)
                lo, hi = interval(results[method], supported)
                print(
                    f"{name:<12} {len(items):>4} {method:<10} {ba:>8.3f}  [{lo:.3f}, {hi:.3f}] "
                    f"{tpr:>13.3f} {tnr:>11.3f}",
                    flush=True,
                )
        if saved.get(name):
            per = saved[name]
            print(
                f"{'':<12} {'':>4} ({sum(i['answer'] is None for i in per)} unanswered; "
                f"{sum(i['seconds'] for i in per) / len(per):.1f} s and "
                f"{sum(i['prompt_tokens'] for i in per) / len(per):.0f} prompt tokens per item)",
                flush=True,
            )
    if args.out and llm is not None:
        Path(args.out).write_text(json.dumps(saved))


if __name__ == "__main__":
    main()
