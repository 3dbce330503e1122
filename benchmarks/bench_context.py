"""What of a paper the writer sees on the embedded model's budget: the share of sections that
contribute, of the abstract's numbers and of the results sections' numbers that reach the
context: before, sections by priority and a section cut by its beginning; now, every section
but the appendices first given room for its best sentences, and a section cut by its most
telling sentences (reader.deepread.extract).

    python -m benchmarks.bench_context [--budget 2400] [PAPER.pdf ...]

Papers: ../shared/papers/ (ingested into a throwaway database, no index, no LLM).
"""

from __future__ import annotations

import argparse
import re
import tempfile
from pathlib import Path

from benchmarks.common import SHARED_PAPERS, wilson
from reader.deepread.context import FLOOR_TOKENS, build_context, load_material
from reader.deepread.context import truncate as _truncate
from reader.deepread.extract import select_sentences
from reader.ingest.pipeline import ingest_file
from reader.llm.base import SMALL_LOCAL
from reader.store.db import open_database

_NUMBER = re.compile(r"(?<![\w.])\d+(?:\.\d+)?%?")
_RESULTS = re.compile(r"result|experiment|evaluation|ablation|实验|结果", re.I)


def numbers(text: str) -> set[str]:
    return {n for n in _NUMBER.findall(text) if len(n.rstrip("%")) >= 2}  # not 1-digit indices


def measure(material, budget: int, cut, floor_tokens: int) -> dict:
    context = build_context(material, budget, cut=cut, floor_tokens=floor_tokens)
    seen = numbers(context.text)
    abstract = next((s.text for s in material.sections if re.search(r"abstract|摘要", s.title, re.I)), "")
    results = " ".join(s.text for s in material.sections if _RESULTS.search(s.title))
    wanted_a, wanted_r = numbers(abstract), numbers(results)
    return {
        "sections": (len(context.included), len(material.sections)),
        "abstract": (len(wanted_a & seen), len(wanted_a)),
        "results": (len(wanted_r & seen), len(wanted_r)),
        "tokens": context.tokens,
    }


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--budget", type=int, default=SMALL_LOCAL.context_tokens)
    parser.add_argument("papers", nargs="*")
    args = parser.parse_args()
    paths = [Path(p) for p in args.papers] or sorted(SHARED_PAPERS.glob("*.pdf"))
    with tempfile.TemporaryDirectory() as tmp:
        db = open_database(f"sqlite:///{tmp}/bench.db")
        totals = {
            name: {k: [0, 0] for k in ("sections", "abstract", "results")} for name in ("before", "now")
        }
        print(f"budget {args.budget} tokens; sections contributing / abstract numbers / results numbers")
        for path in paths:
            result = ingest_file(path, db)
            if result.status == "error":
                print(f"{path.name}: {result.error}")
                continue
            with db() as session:
                material = load_material(session, result.paper_id)
            row = []
            for name, cut, floor in (("before", _truncate, 0), ("now", select_sentences, FLOOR_TOKENS)):
                m = measure(material, args.budget, cut, floor)
                for key in totals[name]:
                    totals[name][key][0] += m[key][0]
                    totals[name][key][1] += m[key][1]
                row.append(
                    f"{name} {m['sections'][0]}/{m['sections'][1]} {m['abstract'][0]}/{m['abstract'][1]} "
                    f"{m['results'][0]}/{m['results'][1]} ({m['tokens']} tok)"
                )
            print(f"{path.name[:44]:44}  " + "   ".join(row))
        for name, parts in totals.items():
            cells = []
            for key, (k, n) in parts.items():
                lo, hi = wilson(k, n)
                cells.append(f"{key} {k}/{n} = {k / max(n, 1):.2f} [{lo:.2f}, {hi:.2f}]")
            print(f"{name:6}  " + "   ".join(cells))


if __name__ == "__main__":
    main()
