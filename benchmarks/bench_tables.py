"""Tables as data on the shared papers: how many are found, how right their cells are, how long
it takes.

For each finder (READER_TABLES: layout, lines, words) over the 14 shared papers: tables found
against the table captions the parser finds (one per label), the time the tables take per paper
(the PDF parse itself not counted), and the hand-made key eval/table_cells.jsonl (a cell of a
named table: its row, its column and its value as printed) scored cell by cell: right when the
table has a cell with that text whose row header and column header both hold the key's parts
(each part of "Supervised / MaxEnt-CI" equal to one part of the header, compared as lower-case
letters and digits).

eval/table_cells_heldout.jsonl (--held-out) is a second key, made after the rules were set, from
tables they were not tuned on.

    .venv/bin/python -m benchmarks.bench_tables [--finders auto,words,lines,layout] [--show] [--held-out]
"""

from __future__ import annotations

import argparse
import json
import re
import statistics
import time
from collections import defaultdict
from pathlib import Path

from benchmarks.common import ROOT, SHARED_PAPERS

KEY = ROOT / "eval" / "table_cells.jsonl"
# keyed after the rules were set, from tables they were not tuned on
HELD_OUT = ROOT / "eval" / "table_cells_heldout.jsonl"
_NOT_WORD = re.compile(r"[\W_]+")


def norm(text: str) -> str:
    return _NOT_WORD.sub("", text.lower())


def parts(header: str) -> set[str]:
    from reader.text.grid import SEPARATOR

    return {norm(p) for p in header.split(SEPARATOR) if norm(p)}


def right(key: dict, tables: list) -> bool:
    from reader.text.grid import table_cells

    for table in tables:
        if table.label != key["table"]:
            continue
        for cell in table_cells(table.rows, table.header_rows):
            if norm(cell.text) != norm(key["value"]):
                continue
            if parts(key["row"]) <= parts(cell.row_header) and parts(key["col"]) <= parts(cell.col_header):
                return True
    return False


def run(finder: str, papers: list[Path], key: list[dict], show: bool) -> dict:
    from reader.ingest.pdf import parse_pdf
    from reader.ingest.tables import find_tables

    found, captions, seconds, by_paper = 0, 0, [], {}
    for path in papers:
        data = path.read_bytes()
        parsed = parse_pdf(path, data)
        start = time.perf_counter()
        tables = find_tables(data, parsed.captions, finder)
        seconds.append(time.perf_counter() - start)
        labels = {c.label for c in parsed.captions if c.kind == "table"}
        captions += len(labels)
        found += len(tables)
        by_paper[path.name] = tables
        if show:
            print(f"{path.name}: {len(tables)} of {len(labels)} captions, {seconds[-1]:.2f} s")
    per_table: dict[tuple[str, str], list[bool]] = defaultdict(list)
    for k in key:
        per_table[(k["paper"], k["table"])].append(right(k, by_paper.get(k["paper"], [])))
    hits = sum(sum(v) for v in per_table.values())
    if show:
        for (paper, label), marks in sorted(per_table.items()):
            print(f"  {paper[:30]} {label}: {sum(marks)}/{len(marks)}")
    return {
        "finder": finder,
        "tables": found,
        "captions": captions,
        "key_right": hits,
        "key_cells": len(key),
        "key_papers": len({k["paper"] for k in key}),
        "s_per_paper_median": round(statistics.median(seconds), 3),
        "s_per_paper_max": round(max(seconds), 3),
        "s_total": round(sum(seconds), 2),
    }


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--finders", default="auto,words,lines,layout")
    parser.add_argument("--papers", type=Path, default=SHARED_PAPERS)
    parser.add_argument("--show", action="store_true", help="per paper and per keyed table")
    parser.add_argument("--held-out", action="store_true", help=f"score {HELD_OUT.name} instead of the key")
    args = parser.parse_args()
    papers = sorted(args.papers.glob("*.pdf"))
    with open(HELD_OUT if args.held_out else KEY, encoding="utf-8") as fh:
        key = [json.loads(line) for line in fh if line.strip()]
    for finder in args.finders.split(","):
        print(json.dumps(run(finder, papers, key, args.show)), flush=True)


if __name__ == "__main__":
    main()
