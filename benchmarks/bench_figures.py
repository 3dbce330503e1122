"""Figures on the shared papers: how many captioned figures are found against a hand count, how
they were found, how long it takes.

The hand count (EXPECTED) is the figure numbers whose caption starts a line of the PDF's text
("Figure 3:", "Figure 3.", "Fig 3."), read off each paper's text and checked by eye where the
parser's captions differ (Neuron's Figure 1 shares a text block with the figure's title).
--out writes every picture, to look at.

    .venv/bin/python -m benchmarks.bench_figures [--out DIR]
"""

from __future__ import annotations

import argparse
import time
from collections import Counter
from pathlib import Path

from benchmarks.common import SHARED_PAPERS

EXPECTED = {
    "acl2007_P07-1088": 2,
    "acl2012_P12-1002_dyer12": 4,
    "acl2014_P14-1059": 1,
    "acl2020_2kenize": 4,
    "acl2020_s2orc_2020.acl-main.447": 4,
    "acl2020_specter_2020.acl-main.207": 2,
    "acl2023_tutorial_goal_awareness_2023.acl-tutorials.1": 0,
    "eacl2023_longeval_2023.eacl-main.121": 9,
    "iop_jpcs2188_012011": 3,
    "mdpi_futureinternet2014_fi6010061": 6,
    "naacl2013_roark13": 3,
    "naacl2018_litgraph_N18-3011": 1,
    "neuron_perspective_rhythmic_attentional_scanning": 8,
    "plosone2018_wheat_metabolomics": 8,
}


def main() -> None:
    from reader.ingest.figures import find_figures
    from reader.ingest.pdf import parse_pdf

    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--out", type=Path, help="write each figure's PNG here")
    args = parser.parse_args()
    methods: Counter = Counter()
    found_all = expected_all = 0
    seconds = []
    print(f"{'paper':<52} {'found':>5} {'expected':>8} {'s':>5}  methods")
    for stem, expected in EXPECTED.items():
        path = SHARED_PAPERS / f"{stem}.pdf"
        if not path.exists():
            print(f"{stem:<52} (missing)")
            continue
        data = path.read_bytes()
        parsed = parse_pdf(path, data)
        start = time.perf_counter()
        figures = find_figures(data, parsed.captions)
        seconds.append(time.perf_counter() - start)
        found_all, expected_all = found_all + len(figures), expected_all + expected
        methods.update(f.method for f in figures)
        shown = ", ".join(f"{f.number}:{f.method}" for f in figures)
        print(f"{stem[:52]:<52} {len(figures):>5} {expected:>8} {seconds[-1]:>5.2f}  {shown}")
        if args.out:
            args.out.mkdir(parents=True, exist_ok=True)
            for f in figures:
                (args.out / f"{stem[:24]}-fig{f.number}.png").write_bytes(f.png)
    print(f"\nfound {found_all} of {expected_all} captioned figures; methods {dict(methods)}")
    print(f"time per paper: mean {sum(seconds) / len(seconds):.2f} s, max {max(seconds):.2f} s")


if __name__ == "__main__":
    main()
