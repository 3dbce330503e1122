"""The trained claim checker on the development set and on SciFact / SummEdits.

Development set (eval/audit_dev.jsonl, the 14 shared papers ingested into the benchmark home of
bench_audit_dev.py): every sentence is searched in its paper's index as the audit searches it,
scored by the checker against each of its excerpts (the best kept), and checked by the guards.
With --llm-from (per-sentence results saved by `bench_audit_dev.py --out`, the embedded
verifier's P(YES) for every sentence), three ways are compared per fabricated kind, on half B
with everything chosen on half A (Wilson 95% intervals):

- the checker alone (+ guards): flag below a threshold chosen on half A (false flags ≤ 0.05);
- the LLM alone (+ guards): the verifier's P(YES) at the shipped threshold (what the audit did);
- the combination as shipped: the checker decides at or below LOW and at or above HIGH, the
  verifier's P(YES) decides in between (LOW / HIGH chosen on half A: the most fabrications caught
  with false flags ≤ 0.05 and at most --max-asked of the sentences sent to the verifier).

The verifier saw its sentences in batches of 4 mixed with others; in the combination it would
see only the unsure ones, so its part of the combination is simulated from those answers.
Chinese sentences are not scored by the checker (English only): the verifier decides them.

--public scores SciFact claims and SummEdits summaries against their abstract (windows of 3
sentences, the best kept): balanced accuracy with the threshold chosen on a seeded half of each
set, reported on the other half.

    .venv/bin/python -m benchmarks.bench_checker --llm-from /tmp/dev_model.jsonl --out /tmp/dev_checker.jsonl
    .venv/bin/python -m benchmarks.bench_checker --public
"""

from __future__ import annotations

import argparse
import json
import os
import random
import sys
import time
from collections import defaultdict
from pathlib import Path

from benchmarks.common import HALF_A, KINDS, ingested, load_dev_set, wilson
from benchmarks.common import SHARED_EVAL as EVAL


def score_dev(home: str, weights: Path | None = None) -> list[dict]:
    os.environ.setdefault("READER_HOME", home)
    from reader.audit.evidence import excerpts
    from reader.audit.guards import PaperFacts, check_sentence
    from reader.audit.loop import hits_to_evidence as _hits_to_evidence
    from reader.checker.model import shared_checker
    from reader.deepread.context import load_material
    from reader.facade import Reader

    app = Reader(use_cache=False)
    rows = load_dev_set()
    wanted = sorted({r["paper"] for r in rows})
    stored = ingested(app, wanted)
    checker = shared_checker(weights) if weights else shared_checker()
    checker.load()
    out = []
    started = time.perf_counter()
    pairs = 0
    for name in wanted:
        with app.services.db() as session:
            facts = PaperFacts.from_texts(load_material(session, stored[name]).facts_texts)
        for row in (r for r in rows if r["paper"] == name):
            own = excerpts(
                row["sentence"],
                _hits_to_evidence(app.services.search_index.search(row["sentence"], stored[name])),
            )
            scored = (
                checker.score([row["sentence"]], [[e.text for e in own]])[0] if row["lang"] != "zh" else None
            )
            pairs += len(own) if scored else 0
            out.append(
                {
                    "id": row["id"],
                    "paper": name,
                    "kind": row["kind"],
                    "lang": row["lang"],
                    "p_checker": scored.p_supported if scored else None,
                    "best_evidence": own[scored.best].text if scored and scored.best is not None else "",
                    "quote_in_best": bool(
                        scored and scored.best is not None and row["quote"][:40] in own[scored.best].text
                    ),
                    "guard_reasons": check_sentence(row["sentence"], facts),
                }
            )
    seconds = time.perf_counter() - started
    print(f"scored {len(out)} sentences ({pairs} pairs) with search in {seconds:.1f} s", file=sys.stderr)
    return out


def flag_checker(item, t):
    return bool(item["guard_reasons"]) or (item["p_checker"] is not None and item["p_checker"] < t)


def flag_llm(item, t):
    if item.get("llm_p_yes") is None:
        return bool(item["guard_reasons"]) or item.get("llm_answer") == "NO"
    return bool(item["guard_reasons"]) or item["llm_p_yes"] < t


def asks_llm(item, low, high) -> bool:
    p = item["p_checker"]
    return p is None or low < p < high


def flag_combined(item, low, high, t):
    """The audit's decision: a guard or an extraction that contradicts the sentence flags it;
    the checker decides at or below `low` and at or above `high`; the verifier in between,
    where an explicit NO stands unless a second signal (the checker above its band's middle, or
    an extraction that confirms the sentence) agrees with its P(YES)."""
    if item["guard_reasons"] or item.get("extraction") == "disagree":
        return True
    if not asks_llm(item, low, high):
        return item["p_checker"] <= low
    if "llm_p_yes" not in item:
        return item["p_checker"] is not None and item["p_checker"] < 0.5
    if flag_llm(item, t):
        return True
    if item.get("llm_answer") == "NO":
        second = item.get("extraction") == "agree" or (
            item["p_checker"] is not None and item["p_checker"] >= (low + high) / 2
        )
        return not second
    return False


def table(items, flag, title) -> list[str]:
    lines = [
        f"{title} ({len(items)} sentences)",
        f"  {'kind':<18} {'n':>4} {'flagged':>8} {'rate':>6}  95% interval",
    ]
    by_kind = defaultdict(list)
    for item in items:
        by_kind[item["kind"]].append(flag(item))
    for kind in ("faithful",) + KINDS + ("all fabricated",):
        flags = by_kind[kind] if kind != "all fabricated" else [f for k in KINDS for f in by_kind[k]]
        if flags:
            k, n = sum(flags), len(flags)
            lo, hi = wilson(k, n)
            lines.append(
                f"  {'faithful (false)' if kind == 'faithful' else kind:<18} {n:>4} {k:>8} {k / n:>6.2f}  [{lo:.2f}, {hi:.2f}]"
            )
    return lines


def halves(items):
    return [i for i in items if i["paper"] in HALF_A], [i for i in items if i["paper"] not in HALF_A]


def false_rate(items, flag) -> float:
    faithful = [i for i in items if i["kind"] == "faithful"]
    return sum(map(flag, faithful)) / max(1, len(faithful))


def caught(items, flag) -> int:
    return sum(flag(i) for i in items if i["kind"] != "faithful")


def choose_checker(a, max_false=0.05) -> float:
    best = 0.0
    for step in range(1, 100):
        if false_rate(a, lambda i: flag_checker(i, step / 100)) <= max_false:
            best = step / 100
    return best


def choose_band(a, t, max_false=0.05, max_asked=1.0) -> tuple[float, float]:
    """On half A: the (low, high) that catches the most with false flags ≤ max_false (and at most
    max_asked of the sentences the checker scores sent to the verifier); fewer asked breaks ties."""
    scored = [i for i in a if i["p_checker"] is not None]
    # every score seen on half A (just above it, for low; just at it, for high), and the ends:
    # low 0 never decides "unsupported", high 1 never decides "supported"
    grid = sorted({0.0, 1.0} | {round(i["p_checker"], 4) for i in scored})
    best, key = (0.0, 1.0), None
    for low in grid:
        for high in (h for h in grid if h >= low):
            flag = lambda i: flag_combined(i, low, high, t)  # noqa: E731
            if false_rate(a, flag) > max_false:
                continue
            asked = sum(asks_llm(i, low, high) for i in scored) / max(1, len(scored))
            if asked > max_asked:
                continue
            k = (caught(a, flag), -asked)
            if key is None or k > key:
                best, key = (low, high), k
    return best


def with_llm(items, path: str) -> list[dict]:
    saved = {}
    with open(path, encoding="utf-8") as fh:
        for line in fh:
            row = json.loads(line)
            saved[row["id"]] = row
    for item in items:
        row = saved.get(item["id"])
        if row is not None and row.get("mode") == "model":
            item["llm_p_yes"] = row.get("p_yes")
            item["llm_answer"] = row.get("answer")
    return items


def with_extraction(items, path: str) -> list[dict]:
    """bench_extraction --out results: each English sentence's cloze outcome."""
    with open(path, encoding="utf-8") as fh:
        saved = {row["id"]: row for row in map(json.loads, fh)}
    for item in items:
        if item["id"] in saved:
            item["extraction"] = saved[item["id"]]["extraction"]
    return items


def auc_by_kind(items) -> str:
    """The checker's AUC, fabrications the guards miss against faithful sentences, per kind."""
    from scripts.training.train import auc

    en = [i for i in items if i["p_checker"] is not None]
    faithful = [i for i in en if i["kind"] == "faithful"]
    parts = []
    for kind in KINDS + ("all",):
        fab = [
            i for i in en if i["kind"] != "faithful" and not i["guard_reasons"] and kind in ("all", i["kind"])
        ]
        if fab:
            value = auc([1] * len(faithful) + [0] * len(fab), [i["p_checker"] for i in faithful + fab])
            parts.append(f"{kind} {value:.3f} (n {len(fab)})")
    return "; ".join(parts)


def dev_report(items, max_asked: float) -> None:
    from reader.config.settings import VERIFY_THRESHOLD as YES_THRESHOLD

    a, b = halves(items)
    a_en, b_en = ([i for i in part if i["p_checker"] is not None] for part in (a, b))
    t_checker = choose_checker(a_en)
    print(
        f"checker alone (English sentences: it does not score Chinese ones): flag below P {t_checker:.2f} "
        "(chosen on half A, false flags ≤ 0.05)"
    )
    for part, title in ((a_en, "half A (choose)"), (b_en, "half B (report)")):
        print(
            "\n".join(table(part, lambda i: flag_checker(i, t_checker), f"checker alone + guards, {title}"))
        )
    if any("extraction" in i for i in items):
        for part, title in ((a_en, "half A"), (b_en, "half B (report)")):
            flag = lambda i: flag_checker(i, t_checker) or i.get("extraction") == "disagree"  # noqa: E731
            print("\n".join(table(part, flag, f"checker + extraction + guards (no verifier), {title}")))
    print("\nthe curve, half B, English: checker alone + guards, flag below P")
    print(f"  {'P':>5} {'false':>7} " + " ".join(f"{k[:12]:>12}" for k in KINDS) + f" {'all':>6}")
    for t in (0.02, 0.05, 0.1, 0.2, 0.3, 0.4, 0.5, 0.6, 0.7, 0.8, 0.9, 0.95):
        flag = lambda i, t=t: flag_checker(i, t)  # noqa: E731
        per_kind = []
        for kind in KINDS:
            part = [i for i in b_en if i["kind"] == kind]
            per_kind.append(f"{sum(map(flag, part)) / max(1, len(part)):>12.2f}")
        fabricated = [i for i in b_en if i["kind"] != "faithful"]
        print(
            f"  {t:>5.2f} {false_rate(b_en, flag):>7.2f} "
            + " ".join(per_kind)
            + f" {sum(map(flag, fabricated)) / max(1, len(fabricated)):>6.2f}"
        )
    en = [i for i in items if i["p_checker"] is not None]
    from scripts.training.train import auc

    fab = [i for i in en if i["kind"] != "faithful" and not i["guard_reasons"]]
    faithful = [i for i in en if i["kind"] == "faithful"]
    print(
        f"AUC, checker P on fabrications the guards miss vs faithful (English): "
        f"{auc([1] * len(faithful) + [0] * len(fab), [i['p_checker'] for i in faithful + fab]):.3f}"
    )
    print(f"  by kind: {auc_by_kind(items)}")
    share = sum(i["quote_in_best"] for i in en) / max(1, len(en))
    print(f"the sentence's quote is in its best excerpt for {share:.2f} of English sentences")
    if not any("llm_p_yes" in i for i in items):
        return
    print(f"\nLLM alone + guards (P(YES) threshold {YES_THRESHOLD}):")
    for part, title in ((a, "half A"), (b, "half B (report)")):
        print("\n".join(table(part, lambda i: flag_llm(i, YES_THRESHOLD), f"LLM alone, {title}")))
    low, high = choose_band(a, YES_THRESHOLD, max_asked=max_asked)
    print(
        f"\ncombination: checker sure at P ≤ {low:.2f} or ≥ {high:.2f} (chosen on half A), "
        f"the LLM's P(YES) ≥ {YES_THRESHOLD} in between"
    )
    for part, title in ((a, "half A (choose)"), (b, "half B (report)")):
        print(
            "\n".join(
                table(part, lambda i: flag_combined(i, low, high, YES_THRESHOLD), f"combination, {title}")
            )
        )
        asked = sum(asks_llm(i, low, high) for i in part)
        print(f"  sentences sent to the LLM: {asked}/{len(part)}")
    zh = [i for i in items if i["lang"] == "zh"]
    print(
        "\n".join(
            table(
                zh,
                lambda i: flag_combined(i, low, high, YES_THRESHOLD),
                "Chinese sentences (the LLM decides), all papers",
            )
        )
    )


def public_sets(seed: int = 7) -> dict[str, list[tuple[str, str, bool]]]:
    scifact = []
    with open(EVAL / "scifact_claims.jsonl", encoding="utf-8") as fh:
        for line in fh:
            row = json.loads(line)
            abstract = " ".join(c["text"] for c in row["gold_ctx"])
            scifact.append((row["input"], abstract, row["answer"] == "true"))
    summedits = [
        (r["summary"], r["doc"], r["label"] == 1)
        for r in json.loads((EVAL / "summedits_scitldr.json").read_text(encoding="utf-8"))
    ]
    return {"SciFact": scifact, "SummEdits": summedits}


def windows(text: str, size: int = 3, stride: int = 2) -> list[str]:
    from reader.text.split import split_sentences

    sentences = split_sentences(text)
    if len(sentences) <= size:
        return [" ".join(sentences)] if sentences else [text]
    return [" ".join(sentences[i : i + size]) for i in range(0, len(sentences) - size + stride, stride)]


def public_report(seed: int = 7, weights: Path | None = None) -> None:
    from reader.checker.model import shared_checker

    checker = shared_checker(weights) if weights else shared_checker()
    checker.load()
    for name, rows in public_sets().items():
        started = time.perf_counter()
        scores = [
            s.p_supported for s in checker.score([c for c, _, _ in rows], [windows(d) for _, d, _ in rows])
        ]
        seconds = time.perf_counter() - started
        order = list(range(len(rows)))
        random.Random(seed).shuffle(order)
        choose, report = order[: len(order) // 2], order[len(order) // 2 :]

        def bacc(ids, t):
            pos = [scores[i] >= t for i in ids if rows[i][2]]
            neg = [scores[i] < t for i in ids if not rows[i][2]]
            return (sum(pos) / len(pos) + sum(neg) / len(neg)) / 2, pos, neg

        t = max((x / 100 for x in range(1, 100)), key=lambda x: bacc(choose, x)[0])
        value, pos, neg = bacc(report, t)
        lo_p, hi_p = wilson(sum(pos), len(pos))
        lo_n, hi_n = wilson(sum(neg), len(neg))
        from scripts.training.train import auc

        print(
            f"{name}: {len(rows)} items, {seconds:.1f} s; threshold {t:.2f} chosen on {len(choose)}, "
            f"reported on {len(report)}: balanced accuracy {value:.3f} "
            f"[{(lo_p + lo_n) / 2:.3f}, {(hi_p + hi_n) / 2:.3f}]; "
            f"AUC (all) {auc([int(r[2]) for r in rows], scores):.3f}; at 0.5 on the reported half {bacc(report, 0.5)[0]:.3f}"
        )


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--home", default="/tmp/reader-bench-audit-dev")
    ap.add_argument("--llm-from", help="bench_audit_dev.py --out results: the verifier's P(YES) per sentence")
    ap.add_argument("--out", help="save per-sentence checker results (JSON lines)")
    ap.add_argument("--extract-from", help="bench_extraction.py --out results: each sentence's cloze outcome")
    ap.add_argument("--from", dest="source", help="re-score saved checker results")
    ap.add_argument(
        "--max-asked", type=float, default=1.0, help="share of sentences the band may send to the LLM"
    )
    ap.add_argument("--public", action="store_true", help="SciFact and SummEdits instead of the dev set")
    ap.add_argument("--weights", type=Path, help="score with these weights (default: the shipped ones)")
    args = ap.parse_args()
    if args.public:
        public_report(weights=args.weights)
        return
    if args.source:
        with open(args.source, encoding="utf-8") as fh:
            items = [json.loads(line) for line in fh]
    else:
        items = score_dev(args.home, args.weights)
        if args.out:
            with open(args.out, "w", encoding="utf-8") as fh:
                for item in items:
                    fh.write(json.dumps(item, ensure_ascii=False) + "\n")
    if args.llm_from:
        items = with_llm(items, args.llm_from)
    if args.extract_from:
        items = with_extraction(items, args.extract_from)
    dev_report(items, args.max_asked)


if __name__ == "__main__":
    main()
