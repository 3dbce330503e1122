"""The audit as shipped, before and after the claim checker, in one run: verdicts, calls, time.

For each paper of the chosen half of eval/audit_dev.jsonl (ingested into bench_audit_dev.py's
home), its development sentences (a seeded shuffle: faithful and fabricated mixed) are audited
as one document the way `reader audit` does it, twice, one right after the other:

- before: the verifier decides every sentence (READER_CHECKER=off), batches of 4;
- after: the claim checker decides what it is sure of, the verifier the rest (the shipped band).

It prints, per pass, recall per fabricated kind and false flags (Wilson 95% intervals), the
verifier calls and the wall time per 30 sentences, and saves every sentence's verdicts (the
verifier's P(YES) of the before pass too, which bench_checker.py --llm-from reads to choose
the band on half A). The verifier is the embedded model unless READER_VERIFIER_BASE_URL is set;
one model process at a time (nothing else should run).

    .venv/bin/python -m benchmarks.bench_audit_combination --half B --out /tmp/combination_B.jsonl
    .venv/bin/python -m benchmarks.bench_audit_combination --half A --passes before --out /tmp/llm_A.jsonl
"""

from __future__ import annotations

import argparse
import json
import os
import random
import sys
import time

from benchmarks.bench_checker import table
from benchmarks.common import HALF_A, ingested, load_dev_set


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--home", default="/tmp/reader-bench-audit-dev")
    ap.add_argument("--half", choices=("A", "B", "all"), default="B")
    ap.add_argument("--passes", choices=("before", "after", "both"), default="both")
    ap.add_argument("--out", help="save per-sentence results (JSON lines)")
    args = ap.parse_args()
    os.environ.setdefault("READER_HOME", args.home)
    from reader.audit.checking import CheckerBand
    from reader.audit.guards import PaperFacts
    from reader.audit.loop import audit_sentences
    from reader.checker.model import shared_checker
    from reader.deepread.context import load_material
    from reader.facade import Reader
    from reader.llm.factory import build_inner_llm

    app = Reader(use_cache=False)
    rows = load_dev_set()
    names = sorted(
        {r["paper"] for r in rows if args.half == "all" or (r["paper"] in HALF_A) == (args.half == "A")}
    )
    stored = ingested(app, names)
    verifier = build_inner_llm(app.settings, "verifier")
    if hasattr(verifier, "load"):
        print(f"loading the verifier: {verifier.load():.1f} s", file=sys.stderr, flush=True)
    checker = shared_checker()
    checker.load()
    band = CheckerBand(checker, app.settings.checker_low, app.settings.checker_high)
    passes = ("before", "after") if args.passes == "both" else (args.passes,)
    totals = {p: {"calls": 0, "seconds": 0.0, "sentences": 0} for p in passes}
    items = []
    for name in names:
        paper_rows = [r for r in rows if r["paper"] == name]
        random.Random(name).shuffle(paper_rows)
        with app.services.db() as session:
            material = load_material(session, stored[name])
        facts = PaperFacts.from_texts(material.facts_texts)
        sentences = [r["sentence"] for r in paper_rows]
        found = {}
        for which in passes:
            started = time.perf_counter()
            result = audit_sentences(
                sentences,
                paper_id=stored[name],
                verifier=verifier,
                search=app.services.search_index.search,
                facts=facts,
                fallback_text=material.full_text,
                max_workers=1,
                checker=band if which == "after" else None,
            )
            seconds = time.perf_counter() - started
            totals[which]["calls"] += result.llm_calls
            totals[which]["seconds"] += seconds
            totals[which]["sentences"] += len(sentences)
            found[which] = {s.text: s for s in result.sentences}
            print(
                f"  {name} {which}: {len(sentences)} sentences, {result.llm_calls} calls, {seconds:.0f} s",
                file=sys.stderr,
                flush=True,
            )
        for row in paper_rows:
            item = {"id": row["id"], "paper": name, "kind": row["kind"], "lang": row["lang"], "mode": "model"}
            for which, results in found.items():
                s = results.get(row["sentence"])
                item[f"{which}_verdict"] = s.verdict if s else None
                item[f"{which}_reasons"] = s.reasons if s else []
                if which == "before" and s is not None:
                    item.update(p_yes=s.p_yes, answer=s.judgement.answer if s.judgement else None)
                if which == "after" and s is not None:
                    item["p_checker"] = s.p_checker
            items.append(item)
    if args.out:
        with open(args.out, "w", encoding="utf-8") as fh:
            for item in items:
                fh.write(json.dumps(item, ensure_ascii=False) + "\n")
    label = {
        "before": "before: the verifier decides every sentence",
        "after": f"after: the claim checker (sure at P ≤ {band.low:g} or ≥ {band.high:g}) and the verifier",
    }
    for which in passes:
        t = totals[which]
        per30 = t["seconds"] * 30 / max(1, t["sentences"])
        print(
            f"\n{label[which]}: {t['calls']} verifier calls for {t['sentences']} sentences, {t['seconds']:.0f} s "
            f"({per30:.1f} s and {t['calls'] * 30 / max(1, t['sentences']):.1f} calls per 30 sentences)"
        )
        print(
            "\n".join(
                table(items, lambda i, w=which: i[f"{w}_verdict"] == "unsupported", f"half {args.half}")
            )
        )
    if len(passes) == 2:
        b, a = (totals[p]["seconds"] for p in passes)
        print(f"\nwall time after / before: {a / max(b, 1e-9):.2f}")


if __name__ == "__main__":
    main()
