"""Ingest speed and quality on the shared papers.

Speed: parse + chunk + store (no embeddings) in pages per second, next to raw
pymupdf `page.get_text()` over the same files in the same run, and the ratio
(target >= 0.7). Rounds alternate raw and ours so background load hits both;
the best round of each is reported with the median ratio.

Quality: per paper the title, number of authors, abstract length, sections,
captions, references and coverage (characters of pymupdf's words that end up
in chunks, overlap not double counted).

    .venv/bin/python -m benchmarks.bench_ingest [--rounds 5] [--papers DIR]
"""

from __future__ import annotations

import argparse
import re
import statistics
import sys
import tempfile
import time
from collections import Counter
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
DEFAULT_PAPERS = ROOT.parent / "shared" / "papers"
WORD = re.compile(r"\w+")


def coverage(raw_text: str, chunk_texts: list[str]) -> float:
    """Share of pymupdf's word characters found in the chunks (each word
    counted at most as often as pymupdf has it, so overlap cannot inflate it)."""
    from reader.ingest.text import dehyphenate

    raw = Counter(WORD.findall(dehyphenate(raw_text)))
    got = Counter(WORD.findall("\n".join(chunk_texts)))
    total = sum(len(w) * n for w, n in raw.items())
    return sum(len(w) * min(n, got[w]) for w, n in raw.items()) / total if total else 1.0


def raw_round(files: list[Path]) -> tuple[int, float, float]:
    import pymupdf

    pages = 0
    start, cpu = time.perf_counter(), time.process_time()
    for path in files:
        with pymupdf.open(path) as doc:
            for page in doc:
                page.get_text()
                pages += 1
    return pages, time.perf_counter() - start, time.process_time() - cpu


def our_round(files: list[Path], workdir: Path, n: int) -> tuple[int, float, float]:
    from reader.ingest.pipeline import ingest_file
    from reader.store.db import open_database

    db = open_database(f"sqlite:///{workdir / f'round{n}.db'}")  # migrations run before timing
    pages = 0
    start, cpu = time.perf_counter(), time.process_time()
    for path in files:
        result = ingest_file(path, db)
        if result.status != "ingested":
            raise SystemExit(f"{path}: {result.status} {result.error}")
        pages += result.pages
    return pages, time.perf_counter() - start, time.process_time() - cpu


def stage_times(files: list[Path], workdir: Path) -> dict[str, float]:
    from reader.ingest.chunk import chunk_paper
    from reader.ingest.pdf import parse_pdf
    from reader.ingest.pipeline import store_paper
    from reader.store.db import open_database

    db = open_database(f"sqlite:///{workdir / 'stages.db'}")
    times = Counter()
    for path in files:
        t0 = time.perf_counter()
        parsed = parse_pdf(path)
        t1 = time.perf_counter()
        chunks = chunk_paper(parsed)
        t2 = time.perf_counter()
        store_paper(db, parsed, chunks)
        t3 = time.perf_counter()
        times["parse"] += t1 - t0
        times["chunk"] += t2 - t1
        times["store"] += t3 - t2
    return dict(times)


def quality(files: list[Path]) -> None:
    from reader.ingest.chunk import chunk_paper
    from reader.ingest.pdf import parse_pdf, raw_page_texts

    print(
        f"\n{'paper':34} {'title':44} {'auth':>4} {'abs':>5} {'sect':>4} {'capt':>4} {'refs':>4} "
        f"{'chunks':>6} {'cover':>6}"
    )
    worst = 1.0
    for path in files:
        parsed = parse_pdf(path)
        chunks = chunk_paper(parsed)
        cov = coverage("\n".join(raw_page_texts(path)), [c.text for c in chunks])
        worst = min(worst, cov)
        print(
            f"{path.stem[:34]:34} {parsed.title[:44]:44} {len(parsed.authors):4d} {len(parsed.abstract):5d} "
            f"{len(parsed.sections):4d} {len(parsed.captions):4d} {len(parsed.references):4d} "
            f"{len(chunks):6d} {cov:6.3f}"
        )
    print(f"lowest coverage: {worst:.3f} (target >= 0.95)")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--rounds", type=int, default=5)
    parser.add_argument("--papers", type=Path, default=DEFAULT_PAPERS)
    parser.add_argument("--no-quality", action="store_true")
    args = parser.parse_args()
    files = sorted(args.papers.glob("*.pdf"))
    if not files:
        sys.exit(f"no PDFs in {args.papers}")

    from reader.ingest.pdf import parse_pdf

    parse_pdf(files[0])  # import pymupdf and warm the file cache outside the timings
    raw_round(files)
    raw_rates, our_rates, ratios, cpu_ratios = [], [], [], []
    with tempfile.TemporaryDirectory() as tmp:
        for n in range(args.rounds):
            pages, raw_s, raw_cpu = raw_round(files)
            _, our_s, our_cpu = our_round(files, Path(tmp), n)
            raw_rates.append(pages / raw_s)
            our_rates.append(pages / our_s)
            ratios.append(raw_s / our_s)
            cpu_ratios.append(raw_cpu / our_cpu)
            print(
                f"round {n + 1}: raw get_text {pages / raw_s:7.1f} pages/s   "
                f"ingest {pages / our_s:7.1f} pages/s   ratio {raw_s / our_s:.2f}   "
                f"(CPU time: raw {raw_cpu:.2f} s, ingest {our_cpu:.2f} s, ratio {raw_cpu / our_cpu:.2f})"
            )
        stages = stage_times(files, Path(tmp))
    print(f"\n{len(files)} papers, {pages} pages, {args.rounds} rounds")
    print(f"raw pymupdf page.get_text(): best {max(raw_rates):7.1f} pages/s")
    print(f"ingest (parse+chunk+store):  best {max(our_rates):7.1f} pages/s")
    print(
        f"ratio ingest/raw: best-vs-best {max(our_rates) / max(raw_rates):.2f}, "
        f"median per round {statistics.median(ratios):.2f} (target >= 0.7)"
    )
    print(
        f"ratio of CPU time (less sensitive to other load on the machine): "
        f"median {statistics.median(cpu_ratios):.2f}"
    )
    total = sum(stages.values())
    print("time split: " + ", ".join(f"{k} {v / total:.0%}" for k, v in stages.items()))
    if not args.no_quality:
        quality(files)


if __name__ == "__main__":
    main()
