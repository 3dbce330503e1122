"""How fast the web pages answer, on a synthetic library, through FastAPI's test client.

    .venv/bin/python -m benchmarks.bench_web [--papers 300] [--sentences 60] [--repeat 20]

Prints the median time of each page and its ratio to a static file served in the
same run (the framework's own floor), so figures from a busy machine stay comparable.
No LLM or model is involved: pages only read stored rows.
"""

from __future__ import annotations

import argparse
import hashlib
import statistics
import sys
import tempfile
import time


def build_library(db, n_papers: int, n_sentences: int) -> str:
    from reader.store.db import transaction
    from reader.store.tables import (
        Analysis,
        AnalysisIteration,
        Paper,
        SentenceVerdict,
        VerdictEvidence,
    )

    first = None
    with transaction(db) as s:
        for p in range(n_papers):
            pid = hashlib.sha256(f"paper {p}".encode()).hexdigest()
            first = first or pid
            s.add(
                Paper(
                    id=pid,
                    title=f"Paper {p}: a study of topic {p % 17}",
                    source_path=f"{p}.pdf",
                    source_kind="pdf",
                    language="en",
                    pages=12,
                )
            )
            s.flush()
            for kind in ("synthesis", "critique"):
                sentences = [
                    f"Sentence {i} of the {kind} states result {i * 7 % 13}.0 on set {i}."
                    for i in range(n_sentences)
                ]
                flagged = set(range(0, n_sentences, 5))
                text = " ".join(("[待验证] " if i in flagged else "") + t for i, t in enumerate(sentences))
                a = Analysis(
                    paper_id=pid,
                    kind=kind,
                    final_text=text,
                    flagged_ratio=len(flagged) / n_sentences,
                    regenerations=p % 3,
                )
                it = AnalysisIteration(
                    iteration=0,
                    text=text,
                    n_sentences=n_sentences,
                    n_flagged=len(flagged),
                    flagged_ratio=len(flagged) / n_sentences,
                )
                for i, t in enumerate(sentences):
                    v = SentenceVerdict(
                        ordinal=i, text=t, verdict="unsupported" if i in flagged else "supported"
                    )
                    v.evidence = [
                        VerdictEvidence(
                            rank=r,
                            page_start=r + 1,
                            page_end=r + 2,
                            text=f"Evidence passage {r} " + "words " * 60,
                        )
                        for r in range(3)
                    ]
                    it.verdicts.append(v)
                a.iterations.append(it)
                s.add(a)
    return first


def timed(client, method: str, url: str, repeat: int, **kwargs) -> float:
    samples = []
    for _ in range(repeat):
        start = time.perf_counter()
        response = client.request(method, url, **kwargs)
        samples.append(time.perf_counter() - start)
        assert response.status_code < 500, (url, response.status_code)
    return statistics.median(samples)


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--papers", type=int, default=300)
    parser.add_argument("--sentences", type=int, default=60)
    parser.add_argument("--repeat", type=int, default=20)
    args = parser.parse_args(argv)

    from fastapi.testclient import TestClient

    from reader.config import load_settings
    from reader.facade import Reader
    from reader.web.app import create_app

    with tempfile.TemporaryDirectory() as home:
        # READER_WORKERS: uploads are only queued (for `reader worker`s), none reviewed here
        settings = load_settings({"READER_HOME": home, "READER_WORKERS": "on"})
        base = Reader(settings)
        started = time.perf_counter()
        pid = build_library(base.services.db, args.papers, args.sentences)
        print(
            f"library: {args.papers} papers x 2 analyses x {args.sentences} sentences x 3 evidence "
            f"(built in {time.perf_counter() - started:.1f} s)"
        )

        ctx = base
        pdf = b"%PDF-1.4\n" + b"0" * (1024 * 1024)
        with TestClient(create_app(ctx)) as client:
            baseline = timed(client, "GET", "/static/style.css", args.repeat)
            rows = [
                ("static file (baseline)", baseline),
                (
                    f"paper page ({2 * args.sentences} sentences)",
                    timed(client, "GET", f"/paper/{pid}", args.repeat),
                ),
                (f"library ({args.papers} papers)", timed(client, "GET", "/library", args.repeat)),
                ("library, title filter", timed(client, "GET", "/library?q=topic+3&sort=title", args.repeat)),
                ("upload page", timed(client, "GET", "/upload", args.repeat)),
                (
                    "upload 1 MB PDF (check + store)",
                    timed(
                        client,
                        "POST",
                        "/upload",
                        args.repeat,
                        headers={"Accept": "application/json"},
                        files={"files": ("p.pdf", pdf, "application/pdf")},
                    ),
                ),
                (
                    "reject 1 MB non-PDF",
                    timed(
                        client,
                        "POST",
                        "/upload",
                        args.repeat,
                        headers={"Accept": "application/json"},
                        files={"files": ("p.pdf", b"x" + pdf, "application/pdf")},
                    ),
                ),
            ]
            size = len(client.get(f"/paper/{pid}").content)
        width = max(len(name) for name, _ in rows)
        print(f"{'request'.ljust(width)}  median ms  x baseline")
        for name, seconds in rows:
            print(f"{name.ljust(width)}  {seconds * 1000:9.1f}  {seconds / baseline:10.1f}")
        print(f"paper page size: {size / 1024:.0f} KiB")
    return 0


if __name__ == "__main__":
    sys.exit(main())
