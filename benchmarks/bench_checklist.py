"""The rigour checklist's rules against the hand-made key (eval/checklist_key.jsonl).

    .venv/bin/python -m benchmarks.bench_checklist            # the keyed papers, rules only
    .venv/bin/python -m benchmarks.bench_checklist --all      # and what the rules find on all 14

Each shared paper is parsed and cut into passages as ingest does (no database, no model), and
the checklist's rules (reader.text.rigour) read every sentence. An item judgement is right when
the rule's found / not found agrees with the key and, when found, its evidence passage is on a
page the key names. Items the key marks not applicable (null) are counted apart. The rules were
written with these papers' texts read for the key, so this is a development measurement, not a
held-out one.
"""

from __future__ import annotations

import argparse
import json
from collections import Counter
from pathlib import Path

from benchmarks.common import ROOT, SHARED_PAPERS, wilson

KEY = ROOT / "eval" / "checklist_key.jsonl"


def passages_of(pdf: Path):
    from reader.ingest.chunk import chunk_paper
    from reader.ingest.pdf import parse_pdf
    from reader.text.rigour import Passage

    parsed = parse_pdf(pdf)
    chunks = chunk_paper(parsed)
    return parsed.title, [Passage(c.text, c.section, c.page_start, c.page_end) for c in chunks]


def found_in(pdf: Path) -> dict:
    from reader.text.rigour import paper_sentences
    from reader.text.rigour_find import find_all

    title, passages = passages_of(pdf)
    return find_all(paper_sentences(passages), title)


def judge(key: dict, found) -> str:
    """right / wrong found (the key says not there) / wrong not found / wrong page / n/a."""
    if key["found"] is None:
        return "n/a"
    if found is None:
        return "right" if not key["found"] else "wrong: not found"
    if not key["found"]:
        return "wrong: found"
    passage = found.sentence.passage
    pages = set(range(passage.page_start, passage.page_end + 1))
    return "right" if pages & set(key["pages"]) else "wrong: page"


def sections_of(pdf: Path):
    """The paper's sections as the deep read gives them (title, text, priority), without the database."""
    from types import SimpleNamespace

    from reader.ingest.chunk import chunk_paper
    from reader.ingest.pdf import parse_pdf

    parsed = parse_pdf(pdf)
    groups: dict[str, list[str]] = {}
    if parsed.abstract:
        groups["Abstract"] = [parsed.abstract]
    for c in chunk_paper(parsed):
        if c.section.lower().startswith(("abstract", "references")):
            continue
        groups.setdefault(c.section or "Body", []).append(c.text)
    return [
        SimpleNamespace(title=t, text=" ".join(x), priority=0 if t == "Abstract" else 3)
        for t, x in groups.items()
    ]


def findings(keys: list[dict]) -> None:
    """The critique's sentences the tool states from the checklist (rules only) on the keyed papers,
    each judged against the key: an absence is true when the key has the item absent, a quote when
    it is on a page the key names for its item."""
    from reader.checklist import build_checklist
    from reader.deepread.checked import checked_facts, paper_checks

    by = {(k["paper"], k["item"]): k for k in keys}
    verdicts: Counter = Counter()
    for name in sorted({k["paper"] for k in keys}):
        title, passages = passages_of(SHARED_PAPERS / name)
        checklist = build_checklist("x", title, passages)
        facts = checked_facts(paper_checks(sections_of(SHARED_PAPERS / name), checklist.findings))
        for fact in facts:
            key, item = by.get((name, fact.item)), checklist.by_key.get(fact.item)
            if key is None:
                verdict = "no key"
            elif key["found"] is None:
                verdict = "not applicable"
            elif item is not None and item.found and key["found"]:
                pages = set(range(item.page_start, (item.page_end or item.page_start) + 1))
                verdict = "true" if pages & set(key["pages"]) else "wrong page"
            elif fact.item == "variance" and item is not None and item.found and item.kind == "claim":
                verdict = "true" if "claim only" in key["note"] else "false"
            elif item is not None and not item.found:
                verdict = "true" if key["found"] is False else "false"
            else:
                verdict = "false"
            verdicts[verdict] += 1
            print(f"  {verdict:<14} {name[:26]:<26} {fact.item:<12} {fact.sentence[:110]}")
    total = sum(verdicts.values())
    print(f"  tool's findings: {total}; " + ", ".join(f"{v} {n}" for v, n in verdicts.most_common()))


def report(keys: list[dict], found_by_paper: dict, verbose: bool) -> None:
    outcomes: Counter = Counter()
    per_item: dict[str, Counter] = {}
    for key in keys:
        found = found_by_paper[key["paper"]][key["item"]]
        outcome = judge(key, found)
        outcomes[outcome] += 1
        per_item.setdefault(key["item"], Counter())[outcome] += 1
        if verbose or outcome.startswith("wrong"):
            where = f"p. {found.sentence.passage.page_start}: {found.sentence.text[:150]}" if found else "—"
            print(f"  {outcome:<17} {key['paper'][:28]:<28} {key['item']:<15} {where}")
    judged = sum(n for o, n in outcomes.items() if o != "n/a")
    right = outcomes["right"]
    low, high = wilson(right, judged)
    papers = len({k["paper"] for k in keys})
    print(f"  papers {papers}, item judgements {judged} (+{outcomes['n/a']} not applicable)")
    print(f"  right {right}/{judged} = {right / judged:.2f} [{low:.2f}, {high:.2f}]")
    print(
        f"  wrong: found where the key says absent {outcomes['wrong: found']}, not found where it is "
        f"there {outcomes['wrong: not found']}, found on a page the key does not name {outcomes['wrong: page']}"
    )
    # every "not found" the rules gave on an applicable item: the key's absent items they left absent,
    # and the present ones they missed
    said = (
        sum(1 for k in keys if k["found"] is False) - outcomes["wrong: found"] + outcomes["wrong: not found"]
    )
    print(
        f'  "not found" wrong: {outcomes["wrong: not found"]}/{said} = {outcomes["wrong: not found"] / max(1, said):.2f}'
    )
    print(
        "  per item (right/judged): "
        + ", ".join(
            f"{item} {c['right']}/{sum(v for o, v in c.items() if o != 'n/a')}"
            for item, c in per_item.items()
        )
    )


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument(
        "--all", action="store_true", help="also list what the rules find on every shared paper"
    )
    parser.add_argument("--verbose", action="store_true", help="print every judgement with its evidence")
    parser.add_argument(
        "--findings", action="store_true", help="judge the critique's tool findings by the key"
    )
    args = parser.parse_args()
    keys = [json.loads(line) for line in KEY.read_text(encoding="utf-8").splitlines() if line.strip()]
    found_by_paper = {name: found_in(SHARED_PAPERS / name) for name in sorted({k["paper"] for k in keys})}
    for split in ("development", "held-out"):
        print(
            f"{split} (the rules were {'written on' if split == 'development' else 'not looked at on'} these papers):"
        )
        report([k for k in keys if k.get("split") == split], found_by_paper, args.verbose)
    print("all:")
    report(keys, found_by_paper, False)
    if args.findings:
        print("the critique's tool findings (rules only), judged by the key:")
        findings(keys)
    if args.all:
        print()
        for pdf in sorted(SHARED_PAPERS.glob("*.pdf")):
            found = found_in(pdf)
            print(f"{pdf.name[:40]:<40} " + ", ".join(k + ("" if v else " ✗") for k, v in found.items()))


if __name__ == "__main__":
    main()
