"""The audit on eval/audit_dev.jsonl: recall per fabricated kind, false flags on faithful sentences.

Each of the 14 shared papers is ingested into a benchmark home (kept between runs), and its
development sentences are audited the way `reader audit` does it: in batches of 4 (a seeded
shuffle of the paper's sentences, faithful and fabricated mixed), evidence from the paper's own
index, the verifier and the guards. Papers are split in two halves by name (`HALF_A`, for choosing
thresholds, and the rest, for reporting); figures are printed for each half and for all, with
Wilson 95% intervals.

    .venv/bin/python -m benchmarks.bench_audit_dev --guards-only
    .venv/bin/python -m benchmarks.bench_audit_dev --out /tmp/dev_model.jsonl     # embedded model
    READER_VERIFIER_BASE_URL=http://host:8080/v1 .venv/bin/python -m benchmarks.bench_audit_dev --choose
    .venv/bin/python -m benchmarks.bench_audit_dev --from /tmp/dev_model.jsonl --threshold 0.5

The audit runs with the parts the settings give it beside the verifier (the extraction checks,
the claim checker, the control claim: `Services.checker`), as `reader audit` does.
`--from` re-scores saved per-sentence results (the verifier's P(YES) and the guards' reasons)
without calling the model again, so a threshold can be chosen on half A and read on half B.
`--passages` shows the verifier the batch's top 3 whole passages (the batch's joined text as the
query), as the audit did before focused evidence, through `audit_sentences(evidence_for=...)`.
"""

from __future__ import annotations

import argparse
import dataclasses
import json
import os
import random
import sys
import time
from collections import defaultdict

from benchmarks.common import HALF_A, KINDS, ingested, load_dev_set, wilson
from reader.audit.extraction import is_finding
from reader.audit.loop import Judgement


def contradicted_by_extraction(item: dict) -> bool:
    """The extraction check read another value in the passage (reader.audit.extraction.finding):
    the audit adds that to the sentence's guard reasons, whatever the verifier's threshold."""
    return any(is_finding(r) for r in item.get("verdict_reasons", []))


def flagged(item: dict, threshold: float | None, guards: bool = True) -> bool:
    """Is this saved result a flag at this P(YES) threshold (None: the verifier's YES/NO)? The
    guards are the rules' and the extraction check's, as in the audit."""
    guard = guards and (bool(item["guard_reasons"]) or contradicted_by_extraction(item))
    if item.get("mode") == "guards":
        return guard
    if "answer" not in item:  # results saved before the verdict details were kept
        if threshold is not None and item.get("p_yes") is not None:
            return guard or item["p_yes"] < threshold
        return guard or item["flagged_by_verifier"]
    judgement = Judgement.from_dict(item)
    if not item["has_evidence"] or judgement.accepted(threshold) is False:
        return True
    return guard


def table(items: list[dict], flag, title: str) -> list[str]:
    lines = [
        f"{title} ({len(items)} sentences)",
        f"  {'kind':<18} {'n':>4} {'flagged':>8} {'rate':>6}  95% interval",
    ]
    by_kind = defaultdict(list)
    for item in items:
        by_kind[item["kind"]].append(flag(item))
    for kind in ("faithful",) + KINDS + ("all fabricated",):
        flags = by_kind[kind] if kind != "all fabricated" else [f for k in KINDS for f in by_kind[k]]
        if not flags:
            continue
        k, n = sum(flags), len(flags)
        lo, hi = wilson(k, n)
        label = "faithful (false)" if kind == "faithful" else kind
        lines.append(f"  {label:<18} {n:>4} {k:>8} {k / n:>6.2f}  [{lo:.2f}, {hi:.2f}]")
    return lines


def report(items: list[dict], flag) -> str:
    halves = [
        ("half A (choose)", [i for i in items if i["paper"] in HALF_A]),
        ("half B (report)", [i for i in items if i["paper"] not in HALF_A]),
        ("all", items),
    ]
    out = []
    for title, part in halves:
        out += table(part, flag, title)
    zh = [i for i in items if i.get("lang") == "zh"]
    if zh:
        out += table(zh, flag, "Chinese sentences, all papers")
    return "\n".join(out)


def choose(items: list[dict], max_false: float = 0.05) -> float | None:
    """On half A: the highest P(YES) threshold whose false-flag rate stays within max_false
    (false flags grow with the threshold, so it is also the one that catches the most)."""
    faithful = [i for i in items if i["paper"] in HALF_A and i["kind"] == "faithful"]
    best = None
    for step in range(1, 100):
        t = step / 100
        if sum(flagged(i, t) for i in faithful) <= max_false * len(faithful):
            best = t
    return best


def _results_for(sentences, result_sentences) -> list:
    """Map audit results back to the input sentences (a splitter may cut one in two)."""
    out = []
    for s in sentences:
        out.append([r for r in result_sentences if r.text in s] or [None])
    return out


def whole_passages(search, paper_id):
    """Evidence as before focused evidence: the batch's joined text as the query, its top 3 whole passages."""
    from reader.audit.loop import hits_to_evidence as _hits_to_evidence

    return lambda batch: _hits_to_evidence(search(" ".join(batch), paper_id))


def run(args) -> list[dict]:
    os.environ.setdefault("READER_HOME", args.home)
    from reader.audit import loop
    from reader.audit.guards import PaperFacts, check_sentence
    from reader.deepread.context import load_material
    from reader.facade import Reader

    app = Reader(use_cache=False)
    rows = load_dev_set()
    wanted = sorted({r["paper"] for r in rows})
    stored = ingested(app, wanted)

    verifier = None
    if not args.guards_only:  # the verifier the settings name: the embedded model unless
        from reader.llm.factory import build_inner_llm  # READER_VERIFIER_BASE_URL is set

        verifier = build_inner_llm(app.settings, "verifier")
        if args.claim_evidence_chars:
            from reader.llm.base import capabilities_of

            verifier.capabilities = dataclasses.replace(
                capabilities_of(verifier), claim_evidence_chars=args.claim_evidence_chars
            )
        if hasattr(verifier, "load"):
            print(f"loading the embedded model: {verifier.load():.1f} s", file=sys.stderr, flush=True)

    results = []
    calls = tokens = prompt_tokens = 0
    started = time.perf_counter()
    for name in wanted:
        paper_rows = [r for r in rows if r["paper"] == name]
        random.Random(name).shuffle(paper_rows)
        paper_id = stored[name]
        with app.services.db() as session:
            material = load_material(session, paper_id)
        facts = PaperFacts.from_texts(material.facts_texts)
        sentences = [r["sentence"] for r in paper_rows]
        if verifier is None:
            outcomes = [[None] for _ in sentences]
        else:
            evidence = (
                {"evidence_for": whole_passages(app.services.search_index.search, paper_id)}
                if args.passages
                else {}
            )
            result = loop.audit_sentences(
                sentences,
                paper_id=paper_id,
                verifier=verifier,
                search=app.services.search_index.search,
                facts=facts,
                fallback_text=material.full_text,
                max_workers=1,
                checker=app.services.checker,  # as the settings have it: the extraction checks, the checker
                **evidence,
            )
            calls += result.llm_calls
            tokens += result.prompt_tokens + result.completion_tokens
            prompt_tokens += result.prompt_tokens
            outcomes = _results_for(sentences, result.sentences)
            print(
                f"  {name}: {len(sentences)} sentences, {result.llm_calls} calls, "
                f"{time.perf_counter() - started:.0f} s",
                file=sys.stderr,
                flush=True,
            )
        for row, found in zip(paper_rows, outcomes):
            guard = check_sentence(row["sentence"], facts)
            judgement = getattr(found[0], "judgement", None) if len(found) == 1 else None
            verifier_no = any(r is not None and r.llm_answer == "NO" for r in found)
            p_values = [getattr(r, "p_yes", None) for r in found if r is not None]
            p_values = [p for p in p_values if p is not None]
            results.append(
                {
                    "id": row["id"],
                    "paper": name,
                    "kind": row["kind"],
                    "lang": row["lang"],
                    "mode": "guards" if verifier is None else "model",
                    "verifier": getattr(verifier, "model", ""),
                    "guard_reasons": guard,
                    "flagged_by_verifier": verifier_no
                    or any(r is not None and r.flagged and not guard for r in found),
                    "verdict_reasons": [x for r in found if r is not None for x in r.reasons],
                    "p_yes": min(p_values) if p_values else None,
                }
            )
            if judgement is not None:
                results[-1].update(answer=judgement.answer, has_evidence=bool(found[0].evidence))
    if verifier is not None:
        print(
            f"{calls} verifier calls, {tokens} tokens ({prompt_tokens} of the prompts), "
            f"{time.perf_counter() - started:.0f} s",
            flush=True,
        )
    return results


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--guards-only", action="store_true", help="no model: the guards alone")
    parser.add_argument(
        "--home",
        default="/tmp/reader-bench-audit-dev",
        help="READER_HOME for the benchmark (papers are ingested once)",
    )
    parser.add_argument("--out", help="save per-sentence results here (JSON lines)")
    parser.add_argument("--from", dest="source", help="re-score saved results instead of running")
    parser.add_argument(
        "--threshold",
        type=float,
        default=None,
        help="flag when the verifier's P(YES) is below this (default: its YES/NO)",
    )
    parser.add_argument(
        "--choose", action="store_true", help="choose the threshold on half A (false flags <= 0.05)"
    )
    parser.add_argument("--passages", action="store_true", help="whole passages, not focused evidence")
    parser.add_argument(
        "--claim-evidence-chars",
        type=int,
        help="the evidence the verifier is shown under each claim, in characters "
        "(default: the verifier's Capabilities.claim_evidence_chars)",
    )
    args = parser.parse_args()

    if args.source:
        with open(args.source, encoding="utf-8") as fh:
            items = [json.loads(line) for line in fh]
    else:
        items = run(args)
        if args.out:
            with open(args.out, "w", encoding="utf-8") as fh:
                for item in items:
                    fh.write(json.dumps(item, ensure_ascii=False) + "\n")
    threshold = args.threshold
    if args.choose:
        threshold = choose(items)
        print(f"chosen on half A (false flags <= 0.05): P(YES) threshold {threshold}")
    mode = items[0]["mode"] if items else "?"
    model = items[0].get("verifier") or "embedded model" if items else ""
    print(
        f"mode: {'guards alone' if mode == 'guards' else f'verifier ({model}) + guards'}"
        + (f", P(YES) threshold {threshold}" if threshold is not None else "")
    )
    print(report(items, lambda i: flagged(i, threshold)))
    if mode == "model":
        print("\nverifier alone (no guards):")
        print(report(items, lambda i: flagged(i, threshold, guards=False)))


if __name__ == "__main__":
    main()
