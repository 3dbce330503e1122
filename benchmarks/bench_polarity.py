"""The turned-round check (reader/deepread/polarity.py) on the audit's development set: how often
it objects to a faithful sentence, and how many fabrications of each kind it catches.

eval/audit_dev.jsonl's English sentences about the 14 shared papers (faithful ones and
fabrications), each checked against its paper's sentences as ingest makes them (references left
out). MIN_SHARE is chosen on half A of the sentences (alternate ids: the largest catch on half A
with no faithful sentence flagged there) and both rates are reported on half B, with Wilson 95%
intervals. `--home` also runs the check over every sentence of the reviews stored there (the
writer's own sentences, which no one wrote to test it) and prints what it flags, to be read.

    .venv/bin/python -m benchmarks.bench_polarity [--home /tmp/rh14]
"""

from __future__ import annotations

import argparse
import json
from collections import Counter

from benchmarks.bench_absence import paper_sentences
from benchmarks.common import ROOT, SHARED_PAPERS, wilson

SHARES = (0.5, 0.6, 0.7, 0.8, 0.9)


def flagged(rows: list[dict], checks: dict, share: float) -> list[bool]:
    import reader.deepread.polarity as polarity

    kept, polarity.MIN_SHARE = polarity.MIN_SHARE, share
    try:
        return [bool(checks[r["paper"]].contradicting(r["sentence"])) for r in rows]
    finally:
        polarity.MIN_SHARE = kept


def rates(rows: list[dict], flags: list[bool]) -> tuple[Counter, Counter]:
    caught, total = Counter(), Counter()
    for row, flag in zip(rows, flags, strict=True):
        total[row["kind"]] += 1
        caught[row["kind"]] += flag
    return caught, total


def report(label: str, caught: Counter, total: Counter) -> None:
    faithful = caught["faithful"], total["faithful"]
    fabricated = sum(caught.values()) - faithful[0], sum(total.values()) - faithful[1]
    for name, (k, n) in (("faithful flagged", faithful), ("fabrications caught", fabricated)):
        low, high = wilson(k, n)
        print(f"{label}: {name} {k}/{n} = {k / max(n, 1):.2f} [{low:.2f}, {high:.2f}]")
    kinds = ", ".join(f"{kind} {caught[kind]}/{total[kind]}" for kind in sorted(total) if kind != "faithful")
    print(f"{label}: by kind: {kinds}")


def stored_sentences(home: str) -> list[tuple[str, str]]:
    """(paper file name, sentence) of every stored review's final sentences."""
    import os

    os.environ["READER_HOME"] = home
    from sqlalchemy import select

    from reader.facade import Reader
    from reader.store.tables import Analysis, Paper

    services = Reader().services
    with services.db() as session:
        out = []
        for analysis in session.scalars(select(Analysis)):
            paper = session.get(Paper, analysis.paper_id)
            if analysis.iterations:
                name = os.path.basename(paper.source_path or "")
                out += [(name, v.text) for v in analysis.iterations[-1].verdicts]
        return out


def main() -> None:
    from reader.deepread.polarity import PaperPolarity

    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--home", help="a READER_HOME whose stored reviews are checked too")
    args = parser.parse_args()
    rows = [json.loads(line) for line in (ROOT / "eval" / "audit_dev.jsonl").open(encoding="utf-8")]
    rows = sorted((r for r in rows if r["lang"] == "en"), key=lambda r: r["id"])
    checks = {
        name: PaperPolarity.of(paper_sentences(SHARED_PAPERS / name)) for name in {r["paper"] for r in rows}
    }
    half_a, half_b = rows[0::2], rows[1::2]
    best = None
    for share in SHARES:
        caught, total = rates(half_a, flagged(half_a, checks, share))
        report(f"half A, share {share}", caught, total)
        if caught["faithful"] == 0 and (best is None or sum(caught.values()) >= best[1]):
            best = (share, sum(caught.values()))
    if best is None:
        print("no share flags no faithful sentence of half A")
        return
    print(f"chosen on half A: MIN_SHARE {best[0]}")
    report(f"half B, share {best[0]}", *rates(half_b, flagged(half_b, checks, best[0])))
    if args.home:
        stored = stored_sentences(args.home)
        for name in {n for n, _ in stored} - checks.keys():
            checks[name] = PaperPolarity.of(paper_sentences(SHARED_PAPERS / name))
        hits = [(n, s, checks[n].contradicting(s)) for n, s in stored]
        hits = [h for h in hits if h[2]]
        print(f"\nstored review sentences flagged: {len(hits)}/{len(stored)}")
        for name, sentence, reason in hits:
            print(f"- [{name}] {sentence}\n    {reason[0][:300]}")


if __name__ == "__main__":
    main()
