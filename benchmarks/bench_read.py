"""`reader read` on shared papers with the embedded default model, against a baseline revision.

Each run is the real command in a fresh READER_HOME (the embedded model file is
linked from the usual models directory, the LLM cache is off). With
--baseline REV the same papers are also read by the code of that revision
(exported with `git archive`, run with PYTHONPATH pointing at it), alternating
baseline and current paper by paper, so both see the same machine. Prints per
run: wall time, deep-read time, LLM calls, tokens, and the flagged ratio per
iteration; then the ratios current / baseline.

    .venv/bin/python -m benchmarks.bench_read --baseline d2b2221
    .venv/bin/python -m benchmarks.bench_read --papers acl2014_P14-1059.pdf sample_paper.pdf
    .venv/bin/python -m benchmarks.bench_read --baseline-env READER_TABLES=off,READER_FIGURES=off --repeat 2

With --review-jobs J the papers are instead reviewed as one batch (`reader review FOLDER
--jobs J --json`, a folder of links to them), by the baseline and then the current code, and
the figure is papers per hour.

    .venv/bin/python -m benchmarks.bench_read --baseline e9df9ad --review-jobs 2 --papers \
        acl2007_P07-1088.pdf naacl2018_litgraph_N18-3011.pdf naacl2013_roark13.pdf \
        acl2014_P14-1059.pdf acl2023_tutorial_goal_awareness_2023.acl-tutorials.1.pdf
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
PAPERS = ROOT.parent / "shared" / "papers"
PYTHON = str(ROOT / ".venv" / "bin" / "python")
DEFAULT_PAPERS = ["acl2014_P14-1059.pdf"]  # 10 pages


def models_dir() -> Path:
    from reader.config import load_settings

    return load_settings().models_dir


def paper_path(name: str) -> Path:
    for folder in (PAPERS, ROOT / "papers"):
        if (folder / name).is_file():
            return folder / name
    sys.exit(f"{name}: not in {PAPERS} or papers/")


def export(rev: str) -> Path:
    """The tree of `rev`, exported into a temporary folder."""
    out = Path(tempfile.mkdtemp(prefix=f"bench_read_{rev}_"))
    archive = subprocess.run(["git", "-C", str(ROOT), "archive", rev], capture_output=True, check=True)
    subprocess.run(["tar", "-x", "-C", str(out)], input=archive.stdout, check=True)
    return out


def fresh_home() -> tuple[Path, dict]:
    """A new READER_HOME with the embedded model linked in, and the environment for it."""
    home = Path(tempfile.mkdtemp(prefix="bench_read_home_"))
    (home / "models").symlink_to(models_dir(), target_is_directory=True)
    env = {k: v for k, v in os.environ.items() if not k.startswith("READER_")}
    env.update(READER_HOME=str(home), READER_CACHE="0")
    return home, env


def review_once(pdfs: list[Path], code: Path | None, jobs: int) -> dict:
    """One `reader review FOLDER --jobs J --json` of the papers in a fresh home."""
    home, env = fresh_home()
    folder = home / "batch"
    folder.mkdir()
    for pdf in pdfs:
        (folder / pdf.name).symlink_to(pdf)
    if code is not None:
        env["PYTHONPATH"] = str(code)
    cmd = [PYTHON, "-m", "reader", "review", str(folder), "--jobs", str(jobs), "--json"]
    start = time.perf_counter()
    proc = subprocess.run(cmd, env=env, capture_output=True, text=True, cwd=code or ROOT)
    wall = time.perf_counter() - start
    load = os.getloadavg()[1]
    shutil.rmtree(home, ignore_errors=True)
    if proc.returncode != 0:
        print(proc.stderr[-3000:])
        sys.exit(f"reader review failed with status {proc.returncode}")
    data = json.loads(proc.stdout)
    reviewed = data["reviewed"]
    calls = sum(p.get("llm_calls", 0) for p in data["papers"])
    print(
        f"  wall {wall:7.1f} s · {reviewed}/{len(pdfs)} reviewed · {calls} LLM calls · "
        f"{3600 * reviewed / wall:.2f} papers/hour · load average {load:.1f}"
    )
    return {"wall": wall, "reviewed": reviewed, "calls": calls}


def stage_figures(env: dict, code: Path | None) -> list[dict]:
    """`reader stats --json` of the run's home, per stage (the call log every read writes)."""
    proc = subprocess.run(
        [PYTHON, "-m", "reader", "stats", "--json"], env=env, capture_output=True, text=True, cwd=code or ROOT
    )
    if proc.returncode != 0:
        return []
    return json.loads(proc.stdout).get("by_stage", [])


def read_once(pdf: Path, code: Path | None, words: int | None, extra_env: dict | None = None) -> dict:
    """One `reader read --json` in a fresh home; code None: the current checkout."""
    home, env = fresh_home()
    env.update(extra_env or {})
    if code is not None:
        env["PYTHONPATH"] = str(code)
    cmd = [PYTHON, "-m", "reader", "read", str(pdf), "--json"] + (["--words", str(words)] if words else [])
    start = time.perf_counter()
    proc = subprocess.run(cmd, env=env, capture_output=True, text=True, cwd=code or ROOT)
    wall = time.perf_counter() - start
    load = os.getloadavg()[1]  # over the last 5 minutes: includes this read's own ~2
    stages = stage_figures(env, code)
    shutil.rmtree(home, ignore_errors=True)
    if proc.returncode != 0:
        print(proc.stderr[-3000:])
        sys.exit(f"reader read failed with status {proc.returncode}")
    data = json.loads(proc.stdout)
    data["wall"] = wall
    data["load"] = load
    data["stages"] = stages
    # Prompt tokens the server read from its prompt cache cost (almost) nothing: count them apart.
    data["cached_tokens"] = sum(st.get("cached_prompt_tokens") or 0 for st in stages)
    return data


def processed(data: dict) -> int:
    return data["tokens"] - data["cached_tokens"]


def describe(label: str, data: dict) -> None:
    print(
        f"  {label:<9} wall {data['wall']:6.1f} s · deep read {data['seconds']:6.1f} s · "
        f"{data['llm_calls']:3d} calls · {data['tokens']:7,d} tokens "
        f"({data['cached_tokens']:,d} of them from the prompt cache) · "
        f"load average {data['load']:.1f} (other work on the machine)"
    )
    for st in data.get("stages", []):
        timed = (
            f" · server {st['prompt_s']:.0f} s prompt + {st['generation_s']:.0f} s generation"
            if st.get("prompt_s") is not None
            else ""
        )
        cached = st.get("cached_prompt_tokens") or 0
        print(
            f"  {'':<9} {st['key']:<22} {st['calls']:3d} calls · {st['prompt_tokens']:6,d} prompt "
            f"({cached:,d} cached) + {st['completion_tokens']:5,d} generated tokens{timed}"
        )
    for a in data["analyses"]:
        ratios = " -> ".join(f"{r:.2f}" for r in a["ratio_per_iteration"])
        flagged = ", ".join(
            f"{f}/{n}" for f, n in zip(a["flagged_per_iteration"], a["sentences_per_iteration"])
        )
        print(
            f"  {'':<9} {a['kind']:<10} flagged per iteration {flagged} (ratio {ratios}); "
            f"regenerations {a['regenerations']}"
        )


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument(
        "--papers", nargs="+", default=DEFAULT_PAPERS, help="file names in ../shared/papers or papers/"
    )
    parser.add_argument("--baseline", metavar="REV", help="also read them with the code of this revision")
    parser.add_argument(
        "--baseline-env",
        metavar="NAME=VALUE,…",
        help="also read them with the current code and these settings (READER_TABLES=off,READER_FIGURES=off)",
    )
    parser.add_argument("--repeat", type=int, default=1, help="pairs per paper (the writer samples)")
    parser.add_argument("--words", type=int, default=None, help="passed to reader read --words")
    parser.add_argument(
        "--review-jobs",
        type=int,
        metavar="J",
        help="review the papers as one batch with --jobs J instead of reading each",
    )
    args = parser.parse_args()
    if args.review_jobs:
        review_batch(args)
        return

    baseline = export(args.baseline) if args.baseline else None
    env = dict(pair.split("=", 1) for pair in args.baseline_env.split(",")) if args.baseline_env else None
    compared = baseline is not None or env is not None
    print(f"reader read, embedded model, response cache off; baseline {args.baseline or env or '(none)'}")
    totals: dict[str, float] = {"baseline": 0.0, "current": 0.0}
    try:
        for name in args.papers:
            pdf = paper_path(name)
            for n in range(args.repeat):
                print(f"{name} (pair {n + 1} of {args.repeat}):")
                runs = {}
                if compared:
                    runs["baseline"] = read_once(pdf, baseline, args.words, env)
                    describe("baseline", runs["baseline"])
                runs["current"] = read_once(pdf, None, args.words)
                describe("current", runs["current"])
                if compared:
                    show_ratio(runs["baseline"], runs["current"])
                    for label in totals:
                        totals[label] += runs[label]["seconds"]
        if compared:
            print(f"all pairs: deep read {totals['current'] / totals['baseline']:.2f} × the baseline's")
    finally:
        if baseline is not None:
            shutil.rmtree(baseline, ignore_errors=True)


def show_ratio(b: dict, c: dict) -> None:
    print(
        f"  ratio     wall {c['wall'] / b['wall']:.2f} · deep read {c['seconds'] / b['seconds']:.2f} · "
        f"calls {c['llm_calls'] / b['llm_calls']:.2f} · tokens {c['tokens'] / b['tokens']:.2f} · "
        f"tokens not from the cache {processed(c) / processed(b):.2f}"
    )


def review_batch(args) -> None:
    pdfs = [paper_path(name) for name in args.papers]
    baseline = export(args.baseline) if args.baseline else None
    print(f"reader review of {len(pdfs)} papers, --jobs {args.review_jobs}, embedded model, cache off")
    try:
        runs = {}
        if baseline is not None:
            print(f"baseline {args.baseline}:")
            runs["baseline"] = review_once(pdfs, baseline, args.review_jobs)
        print("current:")
        runs["current"] = review_once(pdfs, None, args.review_jobs)
        if baseline is not None:
            b, c = runs["baseline"], runs["current"]
            print(
                f"ratio current / baseline: wall {c['wall'] / b['wall']:.2f}, "
                f"papers/hour {(c['reviewed'] / c['wall']) / max(b['reviewed'] / b['wall'], 1e-9):.2f}"
            )
    finally:
        if baseline is not None:
            shutil.rmtree(baseline, ignore_errors=True)


if __name__ == "__main__":
    main()
