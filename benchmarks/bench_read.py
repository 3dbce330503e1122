"""`reader read` on one shared paper with the embedded default model.

Runs the real command in a fresh READER_HOME (the embedded model file is
linked from the usual models directory, the LLM cache is off) and prints the
total time, LLM calls, tokens and the flagged ratio per iteration of the
critique and the synthesis.

    .venv/bin/python benchmarks/bench_read.py [--paper acl2007_P07-1088.pdf] [--keep DIR]
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


def models_dir() -> Path:
    sys.path.insert(0, str(ROOT))
    from reader.config import load_settings

    return load_settings().models_dir


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--paper", default="acl2007_P07-1088.pdf")
    parser.add_argument("--keep", help="use this READER_HOME and keep it (default: a temporary one)")
    parser.add_argument("--words", type=int, default=None, help="passed to reader read --words")
    args = parser.parse_args()

    pdf = PAPERS / args.paper
    home = Path(args.keep) if args.keep else Path(tempfile.mkdtemp(prefix="bench_read_"))
    home.mkdir(parents=True, exist_ok=True)
    if not (home / "models").exists():
        (home / "models").symlink_to(models_dir(), target_is_directory=True)
    env = {k: v for k, v in os.environ.items() if not k.startswith("READER_")}
    env.update(READER_HOME=str(home), READER_CACHE="0")
    reader = str(ROOT / ".venv" / "bin" / "reader")
    cmd = [reader, "read", str(pdf), "--json"] + (["--words", str(args.words)] if args.words else [])

    start = time.perf_counter()
    proc = subprocess.run(cmd, env=env, capture_output=True, text=True)
    total = time.perf_counter() - start
    if proc.returncode != 0:
        print(proc.stderr[-3000:])
        sys.exit(f"reader read failed with status {proc.returncode}")
    data = json.loads(proc.stdout)
    stages = [line for line in proc.stderr.splitlines() if line.startswith("[")]

    print(f"reader read {args.paper} (embedded model, cache off)")
    print(f"total wall time        {total:8.1f} s  (ingest + index + read; deep read {data['seconds']:.1f} s)")
    print(f"LLM calls              {data['llm_calls']:8d}")
    print(f"tokens                 {data['tokens']:8,d}")
    for a in data["analyses"]:
        ratios = " -> ".join(f"{r:.2f}" for r in a["ratio_per_iteration"])
        flagged = ", ".join(f"{f}/{n}" for f, n in zip(a["flagged_per_iteration"], a["sentences_per_iteration"]))
        print(f"{a['kind']:<10} flagged per iteration {flagged}  (ratio {ratios}); "
              f"regenerations {a['regenerations']}; final ratio {a['flagged_ratio']:.2f}")
        if a["left_out_sections"]:
            print(f"{'':<10} left out: {', '.join(a['left_out_sections'])}")
    print("progress lines:")
    for line in stages:
        print("  " + line)
    if not args.keep:
        shutil.rmtree(home, ignore_errors=True)


if __name__ == "__main__":
    main()
