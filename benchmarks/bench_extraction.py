"""Numbers and comparisons checked by extraction (reader.audit.extraction) on the development set.

Reads the per-sentence results of `bench_checker --out` (each English sentence's best excerpt,
as the audit would show it), makes each sentence's cloze, asks the verifier the settings name
(the embedded model by default) in batches of 4, and prints per kind how many sentences had a
cloze, and how many the passage's answer contradicts (flags) or confirms, with Wilson 95%
intervals; half A and half B apart. --out saves per-sentence outcomes for bench_checker's
combination (--extract-from).

    .venv/bin/python -m benchmarks.bench_extraction --checker-from /tmp/dev_checker.jsonl --out /tmp/dev_extract.jsonl
"""

from __future__ import annotations

import argparse
import json
import os
import sys
import time
from collections import defaultdict

from benchmarks.common import HALF_A, KINDS, load_dev_set, wilson


def run(checker_rows: list[dict], home: str) -> list[dict]:
    os.environ.setdefault("READER_HOME", home)
    from reader.audit.extraction import check_clozes, cloze_for
    from reader.config import load_settings
    from reader.llm.factory import build_inner_llm

    sentences = {r["id"]: r["sentence"] for r in load_dev_set()}
    llm = build_inner_llm(load_settings(), "verifier")
    items = []
    for row in checker_rows:
        cloze = cloze_for(sentences[row["id"]], row["best_evidence"]) if row.get("best_evidence") else None
        items.append((row, cloze))
    asked = [(row, c) for row, c in items if c is not None]
    started = time.perf_counter()
    results, calls = check_clozes([c for _, c in asked], llm)
    seconds = time.perf_counter() - started
    print(f"{len(asked)} clozes, {calls} calls, {seconds:.0f} s", file=sys.stderr)
    outcome = {row["id"]: (c, r) for (row, c), r in zip(asked, results)}
    out = []
    for row, cloze in items:
        c, (result, answer) = outcome.get(row["id"], (None, ("none", None)))
        out.append(
            {
                "id": row["id"],
                "paper": row["paper"],
                "kind": row["kind"],
                "lang": row["lang"],
                "cloze_kind": c.kind if c else None,
                "masked": c.masked if c else None,
                "expected": c.expected if c else None,
                "extraction": result,
                "answer": answer,
            }
        )
    return out


def report(rows: list[dict]) -> None:
    for title, part in (
        ("half A", [r for r in rows if r["paper"] in HALF_A]),
        ("half B", [r for r in rows if r["paper"] not in HALF_A]),
        ("all", rows),
    ):
        print(f"{title} ({len(part)} English sentences)")
        print(
            f"  {'kind':<18} {'n':>4} {'cloze':>6} {'flagged':>8} {'rate':>6}  95% interval  {'confirmed':>9}"
        )
        by_kind = defaultdict(list)
        for r in part:
            by_kind[r["kind"]].append(r)
        for kind in ("faithful",) + KINDS:
            group = by_kind.get(kind, [])
            if not group:
                continue
            cloze = sum(r["cloze_kind"] is not None for r in group)
            flagged = sum(r["extraction"] == "disagree" for r in group)
            agreed = sum(r["extraction"] == "agree" for r in group)
            lo, hi = wilson(flagged, len(group))
            print(
                f"  {kind:<18} {len(group):>4} {cloze:>6} {flagged:>8} {flagged / len(group):>6.2f}  "
                f"[{lo:.2f}, {hi:.2f}]  {agreed:>9}"
            )


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--checker-from", help="bench_checker --out results (the best excerpt per sentence)")
    ap.add_argument("--from", dest="source", help="re-print saved extraction results")
    ap.add_argument("--out")
    ap.add_argument("--home", default="/tmp/reader-bench-audit-dev")
    args = ap.parse_args()
    if args.source:
        with open(args.source, encoding="utf-8") as fh:
            rows = [json.loads(line) for line in fh]
    else:
        with open(args.checker_from, encoding="utf-8") as fh:
            checker_rows = [json.loads(line) for line in fh if line.strip()]
        rows = run([r for r in checker_rows if r["lang"] == "en"], args.home)
        if args.out:
            with open(args.out, "w", encoding="utf-8") as fh:
                for r in rows:
                    fh.write(json.dumps(r, ensure_ascii=False) + "\n")
    report(rows)


if __name__ == "__main__":
    main()
