"""The guards with the paper's tables (reader/audit/table_checks.py): bound numbers and
recomputed arithmetic, on sentences about the shared papers' tables, no LLM.

eval/table_claims.jsonl holds faithful sentences that quote a table's number, each with a twin
whose number is swapped for another cell of the same table (so the number is still "in the
paper"), and arithmetic claims right and wrong (differences, relative changes, ratios, "the
best"). Each sentence is run through `check_sentence` against its paper's text (the parser's
blocks) and tables (READER_TABLES' finder, default auto), and also without the tables (the guards
as they were): flagged or not, per half (benchmarks.common.HALF_A, where the rules were tuned;
half B is reported). eval/audit_dev.jsonl's sentences are run the same way, for the false flags
on faithful sentences the tables add there.

eval/table_claims_heldout.jsonl (--held-out, 30 sentences) was written after the rules were set.

    .venv/bin/python -m benchmarks.bench_table_checks [--finder auto] [--show] [--held-out]
"""

from __future__ import annotations

import argparse
import json
from collections import defaultdict

from benchmarks.common import HALF_A, ROOT, SHARED_PAPERS, load_dev_set, wilson

CLAIMS = ROOT / "eval" / "table_claims.jsonl"
# written after the rules were set, on tables and sentences they were not tuned on, scored once
HELD_OUT = ROOT / "eval" / "table_claims_heldout.jsonl"
WANTED = {  # the share flagged that is right for each kind
    "faithful": False,
    "swapped_number": True,
    "arithmetic_right": False,
    "arithmetic_wrong": True,
}


def paper_facts(names: set[str], finder: str) -> dict:
    from reader.audit.guards import PaperFacts
    from reader.ingest.pdf import parse_pdf
    from reader.ingest.tables import find_tables

    out = {}
    for name in sorted(names):
        path = SHARED_PAPERS / name
        data = path.read_bytes()
        parsed = parse_pdf(path, data)
        texts = [parsed.title, parsed.abstract] + [b.text for b in parsed.blocks]
        tables = find_tables(data, parsed.captions, finder)
        out[name] = (PaperFacts.from_texts(texts, tables), PaperFacts.from_texts(texts))
    return out


def score(items: list[dict], facts: dict, show: bool) -> dict:
    from reader.audit.guards import check_sentence

    counts: dict[tuple[str, str, bool], list[int]] = defaultdict(lambda: [0, 0])
    for item in items:
        half = "A" if item["paper"] in HALF_A else "B"
        for with_tables, paper in zip((True, False), facts[item["paper"]]):
            reasons = check_sentence(item["sentence"], paper)
            flagged = bool(reasons)
            tally = counts[(half, item["kind"], with_tables)]
            tally[0] += flagged
            tally[1] += 1
            if show and with_tables and flagged != WANTED.get(item["kind"], item["label"] == "unsupported"):
                print(f"  [{half}] {item['kind']}: {item['sentence']}\n      {reasons}")
    return counts


def report(title: str, counts) -> None:
    print(f"\n{title}")
    print("| half | kind | flagged with tables | without tables |")
    print("|---|---|---|---|")
    for half, kind, with_tables in sorted(counts):
        if not with_tables:
            continue
        k, n = counts[(half, kind, True)]
        k0, n0 = counts[(half, kind, False)]
        lo, hi = wilson(k, n)
        print(f"| {half} | {kind} | {k}/{n} = {k / n:.2f} [{lo:.2f}, {hi:.2f}] | {k0}/{n0} |")


def coverage_and_cost(items: list[dict], facts: dict) -> None:
    """How many of the sentences' checkable numbers a table cell holds, and what the guards cost
    per sentence with the tables and without (best of 3)."""
    import time

    from reader.audit.guards import check_sentence, numbers_at
    from reader.audit.guards import worth_checking as _worth_checking
    from reader.audit.table_checks import Number
    from reader.audit.table_checks import holds as _holds

    numbers = held = 0
    for item in items:
        with_tables, _ = facts[item["paper"]]
        for start, n in numbers_at(item["sentence"]):
            if not _worth_checking(n):
                continue
            numbers += 1
            number = Number(start, n.raw, n.value, n.quantum, n.percent)
            held += any(_holds(c, number) for index in with_tables.table_index() for c in index.numbers)
    costs = []
    for which in (0, 1):
        best = float("inf")
        for _ in range(3):
            start = time.perf_counter()
            for item in items:
                check_sentence(item["sentence"], facts[item["paper"]][which])
            best = min(best, time.perf_counter() - start)
        costs.append(1000 * best / max(1, len(items)))
    print(f"\nchecked numbers a table cell holds: {held}/{numbers} in {len(items)} sentences")
    print(f"guards per sentence: {costs[0]:.2f} ms with the tables, {costs[1]:.2f} ms without")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--finder", default="auto")
    parser.add_argument("--show", action="store_true", help="print every sentence judged wrongly")
    parser.add_argument("--held-out", action="store_true", help=f"score {HELD_OUT.name} instead")
    args = parser.parse_args()
    with open(HELD_OUT if args.held_out else CLAIMS, encoding="utf-8") as fh:
        claims = [json.loads(line) for line in fh if line.strip()]
    dev = [d for d in load_dev_set() if (SHARED_PAPERS / d["paper"]).exists()]
    facts = paper_facts({i["paper"] for i in claims} | {d["paper"] for d in dev}, args.finder)
    report(f"{(HELD_OUT if args.held_out else CLAIMS).name} (guards alone)", score(claims, facts, args.show))
    if not args.held_out:
        report("eval/audit_dev.jsonl (guards alone)", score(dev, facts, args.show))
        print("\neval/audit_dev.jsonl:", end="")
        coverage_and_cost(dev, facts)


if __name__ == "__main__":
    main()
