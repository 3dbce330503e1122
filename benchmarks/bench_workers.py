"""Worker throughput: papers per minute of one `reader worker` against three sharing one
PostgreSQL database; prints both rates and their ratio.

The LLM is the loopback OpenAI-compatible server of the tests (tests/loopback_openai.py,
answering as the dry-run LLM does) at a fixed latency per request, the database a throwaway
cluster (tests/postgres_cluster.py; needs /usr/lib/postgresql/*/bin), started and removed here.
The measurement is tests/test_worker.py's `throughput`: the workers are started, warmed up and
idle before the papers are queued, and the rate counts from the first claim to the last finish.
docs/measurements/scale.md has runs.

    .venv/bin/python -m benchmarks.bench_workers [--latency-ms 1000] [--papers 6]
"""

from __future__ import annotations

import argparse
import sys
import tempfile
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]


def main() -> None:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--latency-ms", type=int, default=1000, help="the LLM server's time per request")
    parser.add_argument("--papers", type=int, default=6, help="papers queued for each run")
    args = parser.parse_args()

    sys.path.insert(0, str(ROOT / "tests"))  # the suite's cluster, LLM server and worker machines
    from loopback_openai import LoopbackOpenAI
    from postgres_cluster import empty_database, new_cluster, remove_cluster, server_binaries
    from test_worker import dry_run_reply, throughput

    bin_dir = server_binaries()
    if bin_dir is None:
        sys.exit("no PostgreSQL server binaries (/usr/lib/postgresql/*/bin): apt-get install postgresql")
    cluster = new_cluster(bin_dir)
    try:
        with (
            tempfile.TemporaryDirectory(prefix="bench-workers-") as work,
            LoopbackOpenAI(dry_run_reply, delay_s=args.latency_ms / 1000) as llm,
        ):
            one = throughput(Path(work), empty_database(cluster.url, "bench_one"), 1, args.papers, llm)
            three = throughput(Path(work), empty_database(cluster.url, "bench_three"), 3, args.papers, llm)
    finally:
        remove_cluster(cluster)
    print(
        f"LLM {args.latency_ms} ms per request, {args.papers} papers: 1 worker {one:.1f} papers/min, "
        f"3 workers {three:.1f} papers/min, ratio {three / one:.2f}"
    )


if __name__ == "__main__":
    main()
