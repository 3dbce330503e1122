"""`reader review`: does paper-level concurrency pay off, and what does one real paper cost?

`reader review` queues the papers and works them off with `--jobs` workers in its own
process (the engine of `reader worker`; tests/test_worker.py measures 1 against 3 worker
processes). Part 1 (default): `reader review` of the shared papers with the dry-run LLM
at a fixed latency per call, run twice as real subprocesses on fresh homes:

  serial      --jobs 1: each paper alone; its time is its critical path
              (ingest + the chain of LLM rounds its deep read cannot overlap)
  concurrent  --jobs N: the same papers N at a time

and prints the concurrent wall time against the sum of the per-paper
critical paths (the serial per-paper times), the ideal sum/N, and each run's
peak memory (max RSS of the review process). The embedding model is swapped
for the hashing embedder by default so the figures are about review
orchestration, not MiniLM; `--embedder minilm` uses the packaged model.

Part 2 (`--embedded PAPER`): one paper end to end with the embedded default
LLM and MiniLM — wall time, LLM calls, tokens, flagged ratio per iteration.

    .venv/bin/python benchmarks/bench_review.py                 # part 1, 14 papers
    .venv/bin/python benchmarks/bench_review.py --latency-ms 200 --jobs 4
    .venv/bin/python benchmarks/bench_review.py --embedded ../shared/papers/acl2007_P07-1088.pdf
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
SHARED_PAPERS = ROOT.parent / "shared" / "papers"

HASHING_BOOTSTRAP = (
    "import reader.index.dense as dense\n"
    "_hashing = dense.HashingEmbedder()\n"
    "dense.load_embedder = lambda settings: _hashing\n"
    "from reader.cli import main\n"
    "main()\n"
)
PLAIN_BOOTSTRAP = "from reader.cli import main\nmain()\n"


def run_review(
    args: list[str], env: dict, bootstrap: str
) -> tuple[float, int, float, subprocess.CompletedProcess]:
    """Run `reader <args>` as a subprocess; wall seconds, peak RSS in MB, CPU seconds, result."""
    started = time.perf_counter()
    with tempfile.TemporaryFile("w+") as out, tempfile.TemporaryFile("w+") as err:
        proc = subprocess.Popen(
            [sys.executable, "-c", bootstrap, *args], env=env, cwd=ROOT, stdout=out, stderr=err, text=True
        )
        _, status, usage = os.wait4(proc.pid, 0)
        wall = time.perf_counter() - started
        proc.returncode = os.waitstatus_to_exitcode(status)
        out.seek(0)
        err.seek(0)
        result = subprocess.CompletedProcess(proc.args, proc.returncode, out.read(), err.read())
    return wall, usage.ru_maxrss // 1024, usage.ru_utime + usage.ru_stime, result


def environment(home: Path, *, latency_ms: float | None, concurrency: int, embedder: str) -> dict:
    env = {k: v for k, v in os.environ.items() if not k.startswith("READER_")}
    env["READER_HOME"] = str(home)
    env["READER_LLM_CONCURRENCY"] = str(concurrency)
    env["PYTHONPATH"] = str(ROOT)
    if latency_ms is not None:
        env["READER_LLM_BASE_URL"] = f"scripted:latency_ms={latency_ms:g}"
    if embedder == "hashing":
        env["READER_EMBED_MODEL"] = "hashing"
    return env


def db_figures(home: Path) -> dict:
    from sqlalchemy import create_engine, text

    engine = create_engine(f"sqlite:///{home / 'reader.db'}")
    with engine.connect() as conn:
        calls = conn.execute(
            text("SELECT count(*), sum(cached), sum(prompt_tokens), sum(completion_tokens) FROM llm_calls")
        ).one()
        per_stage = conn.execute(
            text("SELECT stage, count(*) FROM llm_calls GROUP BY stage ORDER BY count(*) DESC")
        ).all()
        iterations = conn.execute(
            text(
                "SELECT a.kind, i.iteration, i.n_sentences, i.n_flagged, i.flagged_ratio "
                "FROM analysis_iterations i JOIN analyses a ON a.id = i.analysis_id "
                "ORDER BY a.kind, i.iteration"
            )
        ).all()
    engine.dispose()
    return {
        "llm_calls": calls[0],
        "cached": calls[1] or 0,
        "prompt_tokens": calls[2] or 0,
        "completion_tokens": calls[3] or 0,
        "per_stage": [tuple(r) for r in per_stage],
        "iterations": [tuple(r) for r in iterations],
    }


def part_one(papers: list[Path], latency_ms: float, jobs: int, concurrency: int, embedder: str) -> None:
    bootstrap = HASHING_BOOTSTRAP if embedder == "hashing" else PLAIN_BOOTSTRAP
    with tempfile.TemporaryDirectory() as tmp:
        folder = Path(tmp) / "papers"
        folder.mkdir()
        for paper in papers:
            (folder / paper.name).symlink_to(paper.resolve())
        runs = {}
        for label, n in (("serial", 1), ("concurrent", jobs)):
            home = Path(tmp) / f"home-{label}"
            env = environment(home, latency_ms=latency_ms, concurrency=concurrency, embedder=embedder)
            wall, rss, cpu, result = run_review(
                ["review", str(folder), "--jobs", str(n), "--json", "--quiet"], env, bootstrap
            )
            if result.returncode not in (0, 1) or not result.stdout.strip():
                print(result.stderr[-3000:], file=sys.stderr)
                raise SystemExit(f"{label} run failed (exit {result.returncode})")
            report = json.loads(result.stdout)
            runs[label] = {"wall": wall, "rss": rss, "cpu": cpu, "report": report, "db": db_figures(home)}

    serial, concurrent = runs["serial"], runs["concurrent"]
    per_paper = {p["source"]: p for p in serial["report"]["papers"]}
    critical_sum = sum(p["seconds"] for p in per_paper.values() if p["status"] == "reviewed")
    print(
        f"reader review of {len(papers)} papers · dry-run LLM at {latency_ms:g} ms per call · "
        f"READER_LLM_CONCURRENCY={concurrency} · embedder: {embedder}"
    )
    print()
    print(
        f"{'paper':<58} {'sent':>5} {'flag':>5} {'regen':>5} {'calls':>6} {'ingest s':>9} "
        f"{'read s':>7} {'alone s':>8}"
    )
    for source, p in sorted(per_paper.items()):
        print(
            f"{Path(source).name[:58]:<58} {p['sentences']:>5} {p['flagged']:>5} "
            f"{p['regenerations']:>5} {p['llm_calls']:>6} {p['ingest_seconds']:>9.2f} "
            f"{p['read_seconds']:>7.2f} {p['seconds']:>8.2f}"
        )
    reviewed = [p for p in per_paper.values() if p["status"] == "reviewed"]
    ingest_sum = sum(p["ingest_seconds"] for p in reviewed)
    read_sum = sum(p["read_seconds"] for p in reviewed)
    # Ingest is serialized (PDF parsing and index writes are not thread-safe), so
    # no schedule beats the sum of ingests plus the read of the paper ingested last.
    bound = max(critical_sum / jobs, ingest_sum + min((p["read_seconds"] for p in reviewed), default=0))
    failed = [p for p in concurrent["report"]["papers"] if p["status"] == "error"]
    print()
    print(f"sum of per-paper critical paths (serial run)  {critical_sum:8.1f} s")
    print(
        f"serial run wall time (--jobs 1)                {serial['wall']:8.1f} s   "
        f"peak RSS {serial['rss']} MB, CPU {serial['cpu']:.1f} s"
    )
    print(
        f"concurrent run wall time (--jobs {jobs})           {concurrent['wall']:8.1f} s   "
        f"peak RSS {concurrent['rss']} MB, CPU {concurrent['cpu']:.1f} s"
    )
    print(f"ideal with {jobs} at once (sum / {jobs})               {critical_sum / jobs:8.1f} s")
    print(f"  of which ingest {ingest_sum:.1f} s (serialized), deep read {read_sum:.1f} s")
    print(f"lower bound max(sum/{jobs}, ingests + a read)       {bound:8.1f} s")
    print(f"concurrent wall / sum of critical paths        {concurrent['wall'] / critical_sum:8.2f}")
    print(f"concurrent wall / ideal                        {concurrent['wall'] / (critical_sum / jobs):8.2f}")
    print(f"concurrent wall / lower bound                  {concurrent['wall'] / bound:8.2f}")
    conc = [p for p in concurrent["report"]["papers"] if p["status"] == "reviewed"]
    print(
        f"concurrent run: ingest {sum(p['ingest_seconds'] for p in conc):.1f} s, deep read "
        f"{sum(p['read_seconds'] for p in conc):.1f} s summed over papers "
        f"(process startup, queueing and warm-up are in the wall times, not in the per-paper "
        f"figures)"
    )
    print(f"speed-up over the serial run                   {serial['wall'] / concurrent['wall']:8.2f}x")
    print(
        f"LLM calls: serial {serial['db']['llm_calls']}, concurrent {concurrent['db']['llm_calls']}; "
        f"reviewed {concurrent['report']['reviewed']}, failed {len(failed)}"
    )
    for p in failed:
        print(f"  failed: {Path(p['source']).name}: {p['error']}")


def part_two(paper: Path) -> None:
    with tempfile.TemporaryDirectory() as tmp:
        home = Path(tmp) / "home"
        env = environment(home, latency_ms=None, concurrency=4, embedder="minilm")
        # the embedded model file is assembled once per READER_HOME; reuse an existing one
        shared_models = Path(os.environ.get("READER_HOME", Path.home() / ".local/share/reader")) / "models"
        if shared_models.is_dir():
            home.mkdir(parents=True)
            (home / "models").symlink_to(shared_models.resolve())
        wall, rss, cpu, result = run_review(["review", str(paper), "--json", "--quiet"], env, PLAIN_BOOTSTRAP)
        if not result.stdout.strip():
            print(result.stderr[-3000:], file=sys.stderr)
            raise SystemExit(f"review failed (exit {result.returncode})")
        (row,) = json.loads(result.stdout)["papers"]
        figures = db_figures(home)
    print(f"reader review {paper.name} with the embedded default LLM and MiniLM")
    print(f"status {row['status']} {row['error']}")
    print(
        f"wall time {wall:.1f} s (paper {row['seconds']:.1f} s: ingest {row['ingest_seconds']:.1f} s, "
        f"deep read {row['read_seconds']:.1f} s), CPU {cpu:.1f} s, peak RSS {rss} MB"
    )
    print(
        f"LLM calls {figures['llm_calls']} ({figures['cached']} cached), prompt tokens "
        f"{figures['prompt_tokens']}, completion tokens {figures['completion_tokens']}"
    )
    print("calls per stage: " + ", ".join(f"{s} {n}" for s, n in figures["per_stage"]))
    print(
        f"sentences {row['sentences']}, flagged {row['flagged']}, final ratio {row['final_ratio']:.3f}, "
        f"regenerations {row['regenerations']}"
    )
    for kind, iteration, n, flagged, ratio in figures["iterations"]:
        print(f"  {kind} iteration {iteration}: {flagged}/{n} flagged ({ratio:.2f})")


def main() -> None:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--latency-ms", type=float, default=200.0)
    parser.add_argument("--jobs", type=int, default=4, help="papers at once in the concurrent run")
    parser.add_argument("--concurrency", type=int, default=8, help="READER_LLM_CONCURRENCY")
    parser.add_argument("--limit", type=int, default=0, help="only the first N shared papers")
    parser.add_argument("--embedder", choices=["hashing", "minilm"], default="hashing")
    parser.add_argument("--embedded", type=Path, help="part 2: one paper with the embedded default")
    args = parser.parse_args()
    if args.embedded:
        part_two(args.embedded)
        return
    papers = sorted(SHARED_PAPERS.glob("*.pdf"))
    if args.limit:
        papers = papers[: args.limit]
    if not papers:
        raise SystemExit(f"no papers in {SHARED_PAPERS}")
    part_one(papers, args.latency_ms, args.jobs, args.concurrency, args.embedder)


if __name__ == "__main__":
    main()
