"""The "says nothing specific" check on the audit's development set: how many faithful
sentences it would flag (false flags) and how many generic sentences it catches, for each
rare-word threshold; the threshold is chosen on half A (false flags ≤ 0.03, the strictest
such) and reported on half B with a Wilson 95% interval.

    python -m benchmarks.bench_specific

Paper text is each PDF's page text (pymupdf); the generic sentences below are written for
this benchmark, true of almost any paper, and scored against each paper in turn.
"""

from __future__ import annotations

import pymupdf

from benchmarks.common import HALF_A, SHARED_PAPERS, load_dev_set, wilson
from reader.audit.guards import PaperFacts
from reader.audit.specific import SPECIFIC_ZIPF, says_nothing_specific

GENERIC = [
    "The paper provides a detailed evaluation of the method.",
    "The authors present a novel approach to the problem.",
    "The results show that the proposed method is effective.",
    "The paper is well written and easy to follow.",
    "The experiments demonstrate the strengths of the approach.",
    "The method outperforms the baselines in most settings.",
    "Further work is needed to address the limitations.",
    "The paper does not provide any missing experiments or baselines.",
    "The paper does not make any overclaims.",
    "The evaluation could be more thorough.",
    "The authors discuss the implications of their findings.",
    "The study contributes to the understanding of the topic.",
    "The approach is compared against several existing methods.",
    "The paper also provides a detailed evaluation of the method's performance and limitations.",
    "The main contribution is a new framework for the task.",
    "The authors acknowledge some threats to validity.",
    "The proposed model achieves strong performance on the benchmark.",
    "The paper motivates the problem clearly in the introduction.",
    "The analysis offers useful insights for future research.",
    "The data used in the experiments is described in detail.",
]
THRESHOLDS = [3.0, 3.5, 4.0, 4.5, 5.0]


def paper_facts(names: set[str]) -> dict[str, PaperFacts]:
    facts = {}
    for name in sorted(names):
        with pymupdf.open(SHARED_PAPERS / name) as doc:
            facts[name] = PaperFacts.from_texts([page.get_text() for page in doc])
    return facts


def rates(rows, facts, zipf):
    faithful = [r for r in rows if r["kind"] == "faithful" and r["lang"] == "en"]
    false = sum(says_nothing_specific(r["sentence"], facts[r["paper"]], zipf) for r in faithful)
    papers = sorted({r["paper"] for r in rows})
    caught = sum(says_nothing_specific(g, facts[p], zipf) for p in papers for g in GENERIC)
    return (false, len(faithful)), (caught, len(papers) * len(GENERIC))


def main() -> None:
    rows = [r for r in load_dev_set() if (SHARED_PAPERS / r["paper"]).is_file()]
    facts = paper_facts({r["paper"] for r in rows})
    halves = {
        "A": [r for r in rows if r["paper"] in HALF_A],
        "B": [r for r in rows if r["paper"] not in HALF_A],
    }
    print("half  zipf  false flags (faithful)   generic caught")
    chosen = None
    for zipf in THRESHOLDS:
        (f, n), (c, m) = rates(halves["A"], facts, zipf)
        print(f"A     {zipf:.1f}   {f:3d}/{n:3d} = {f / n:.3f}          {c:3d}/{m:3d} = {c / m:.3f}")
        if f / n <= 0.03 and chosen is None:
            chosen = zipf
    chosen = chosen if chosen is not None else THRESHOLDS[-1]
    (f, n), (c, m) = rates(halves["B"], facts, chosen)
    lo, hi = wilson(f, n)
    clo, chi = wilson(c, m)
    print(f"chosen on half A: zipf {chosen:.1f} (shipped: {SPECIFIC_ZIPF:.1f})")
    print(
        f"B     {chosen:.1f}   {f:3d}/{n:3d} = {f / n:.3f} [{lo:.3f}, {hi:.3f}]   "
        f"{c:3d}/{m:3d} = {c / m:.3f} [{clo:.3f}, {chi:.3f}]"
    )
    for r in halves["B"]:
        if (
            r["kind"] == "faithful"
            and r["lang"] == "en"
            and says_nothing_specific(r["sentence"], facts[r["paper"]], chosen)
        ):
            print("  false flag:", r["sentence"])


if __name__ == "__main__":
    main()
