"""Search latency over a 100,000-chunk index, and embedding throughput inside ingest.

The index: the chunks of the 14 shared papers (parsed and chunked as ingest
does) repeated, with the paper and a copy number appended to each text, to
--chunks rows in 500-chunk papers. Vectors: random unit vectors (a matrix
product costs the same whatever the numbers; embedding 100,000 chunks would
take hours here). Queries: sentences taken from the real chunks, embedded by
MiniLM.

Prints p50/p95 of the query embedding, each path, the database fetch of hit
metadata and the whole fused search without the query embedding; the cost of
opening the index and of an update at that size; and the throughput of the
ingest embedding path against the bare FlagModel on the same texts.

    .venv/bin/python -m benchmarks.bench_search_speed [--chunks 100000] [--queries 200]
"""

from __future__ import annotations

import argparse
import os
import random
import re
import statistics
import tempfile
import time
from pathlib import Path

import numpy as np

from benchmarks.common import SHARED_PAPERS
from reader.index.dense import (
    FlagEmbedder,
    cosine_top,
    encode_with_progress,
    packaged_model_path,
)
from reader.index.search import multi_search
from reader.index.store import IndexData, SearchIndex
from reader.ingest.chunk import chunk_paper
from reader.ingest.pdf import parse_pdf
from reader.store.db import open_database, transaction
from reader.store.tables import Chunk, Paper

PAPERS = SHARED_PAPERS
CHUNKS_PER_PAPER = 500


def percentiles(values: list[float]) -> str:
    ms = sorted(v * 1000 for v in values)
    p50 = statistics.median(ms)
    p95 = ms[min(len(ms) - 1, int(round(0.95 * (len(ms) - 1))))]
    return f"p50 {p50:7.2f} ms   p95 {p95:7.2f} ms"


def real_chunks() -> list[str]:
    texts = []
    for pdf in sorted(PAPERS.glob("*.pdf")):
        texts += [c.text for c in chunk_paper(parse_pdf(pdf))]
    return texts


def throughput(embedder: FlagEmbedder, texts: list[str], rounds: int) -> None:
    """Ingest's path (progress callback, slices) against bare FlagModel.encode, alternating."""
    ours, bare = [], []
    for _ in range(rounds):
        t0 = time.perf_counter()
        embedder.model.encode(texts, max_length=embedder.max_length)
        bare.append(len(texts) / (time.perf_counter() - t0))
        t0 = time.perf_counter()
        encode_with_progress(embedder, texts, lambda done, total: None)
        ours.append(len(texts) / (time.perf_counter() - t0))
    b, o = statistics.median(bare), statistics.median(ours)
    print(
        f"\nembedding throughput on {len(texts)} real chunks, median of {rounds} alternating rounds "
        f"(max_length {embedder.max_length} for both)"
    )
    print(f"  bare FlagModel.encode      {b:6.1f} chunks/s")
    print(f"  ingest path (add_paper)    {o:6.1f} chunks/s   ratio {o / b:.2f}")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--chunks", type=int, default=100_000)
    parser.add_argument("--queries", type=int, default=200)
    parser.add_argument("--throughput-texts", type=int, default=64)
    parser.add_argument("--rounds", type=int, default=3)
    args = parser.parse_args()
    rng = np.random.default_rng(0)
    random.seed(0)

    t0 = time.perf_counter()
    texts = real_chunks()
    print(
        f"{len(texts)} real chunks from {len(list(PAPERS.glob('*.pdf')))} papers "
        f"(parsed and chunked in {time.perf_counter() - t0:.1f} s)"
    )
    embedder = FlagEmbedder(str(packaged_model_path()), name="all-MiniLM-L6-v2")

    throughput(embedder, random.sample(texts, min(args.throughput_texts, len(texts))), args.rounds)

    with tempfile.TemporaryDirectory() as tmp:
        db = open_database(f"sqlite:///{tmp}/speed.db")
        n_papers = (args.chunks + CHUNKS_PER_PAPER - 1) // CHUNKS_PER_PAPER
        paper_ids = [f"{i:064x}" for i in range(n_papers)]
        all_texts = []
        t0 = time.perf_counter()
        with transaction(db) as session:
            from sqlalchemy import insert

            session.execute(
                insert(Paper),
                [
                    {
                        "id": p,
                        "title": f"paper {i}",
                        "source_path": "x.pdf",
                        "source_kind": "pdf",
                        "pages": 10,
                    }
                    for i, p in enumerate(paper_ids)
                ],
            )
            rows = []
            for n in range(args.chunks):
                paper = n // CHUNKS_PER_PAPER
                text = f"{texts[n % len(texts)]} (paper {paper}, copy {n // len(texts)})"
                all_texts.append(text)
                rows.append(
                    {
                        "paper_id": paper_ids[paper],
                        "ordinal": n % CHUNKS_PER_PAPER,
                        "section": "",
                        "page_start": 1,
                        "page_end": 1,
                        "text": text,
                    }
                )
            session.execute(insert(Chunk), rows)
        with db() as session:
            from sqlalchemy import select

            chunk_rows = session.execute(select(Chunk.id, Chunk.paper_id).order_by(Chunk.id)).all()
        print(f"{args.chunks} chunk rows in {n_papers} papers written in {time.perf_counter() - t0:.1f} s")

        vectors = rng.standard_normal((args.chunks, embedder.dim)).astype(np.float32)
        vectors /= np.linalg.norm(vectors, axis=1, keepdims=True)

        index = SearchIndex(Path(tmp) / "index", db, embedder)
        t0 = time.perf_counter()
        data = IndexData.empty(embedder.name).append(
            [p for _, p in chunk_rows], [c for c, _ in chunk_rows], all_texts, vectors
        )
        t_tokens = time.perf_counter() - t0
        t0 = time.perf_counter()
        with index.files.write_lock():
            index._commit(data)
        print(
            f"index build without embedding: tokenize {t_tokens:.1f} s, "
            f"BM25 matrix + write {time.perf_counter() - t0:.1f} s"
        )

        fresh = SearchIndex(Path(tmp) / "index", db, embedder)
        t0 = time.perf_counter()
        assert len(fresh) == args.chunks
        print(
            f"open in a new process (load + consistency check with the DB): {time.perf_counter() - t0:.2f} s"
        )

        t0 = time.perf_counter()
        fresh.remove_paper(paper_ids[-1])
        print(
            f"an update at this size (remove one paper: BM25 rebuild + write): "
            f"{time.perf_counter() - t0:.1f} s"
        )

        queries = []
        for text in random.sample(texts, args.queries):
            sentences = [s for s in re.split(r"(?<=[.!?])\s+", text) if 40 <= len(s) <= 250]
            queries.append(random.choice(sentences) if sentences else text[:200])

        timings: dict[str, list[float]] = {}
        cpu: dict[str, list[float]] = {}

        def timed(key, fn):
            w0, c0 = time.perf_counter(), time.process_time()
            result = fn()
            timings.setdefault(key, []).append(time.perf_counter() - w0)
            cpu.setdefault(key, []).append(time.process_time() - c0)
            return result

        fresh.search(queries[0])  # warm-up
        # One loop per measurement: interleaved, the threads that OpenBLAS and
        # torch leave spinning after a product would slow whatever runs next.
        vectors = [timed("embed", lambda: fresh.embed_query(query)) for query in queries]
        bm25_hits = [timed("bm25", lambda: fresh.bm25_top(query, 20)) for query in queries]
        for vector in vectors:
            timed("dense32", lambda: cosine_top(fresh._data.vectors, vector, 20))
        dense_hits = [
            timed("dense", lambda: fresh.dense_top(query, 20, query_vector=vector))
            for query, vector in zip(queries, vectors)
        ]
        for bm25, dense in zip(bm25_hits, dense_hits):
            timed("fetch", lambda: fresh.chunk_details([c for c, _ in bm25[:3] + dense[:3]]))
        # split=False: the query is searched as one sentence with its one
        # vector, so no sentence of it is embedded inside the timing
        for query, vector in zip(queries, vectors):
            timed(
                "fused",
                lambda: multi_search(fresh, query, top_k_per_path=3, query_vector=vector, split=False),
            )
        for query, vector in zip(queries, vectors):
            timed(
                "fused_paper",
                lambda: multi_search(
                    fresh, query, paper_id=paper_ids[3], top_k_per_path=3, query_vector=vector, split=False
                ),
            )
        for query in queries:
            timed("end_to_end", lambda: multi_search(fresh, query, top_k_per_path=3, split=False))

        n = len(fresh)
        load = os.getloadavg()[0]
        print(
            f"\nsearch over {n} chunks, {len(queries)} queries; load average {load:.1f} on "
            f"{os.cpu_count()} cores. Wall time, then CPU time of this process (all its threads),"
            " which other processes on the machine inflate less"
        )
        labels = {
            "embed": "query embedding (MiniLM)",
            "bm25": "BM25 path, top 20",
            "dense32": "baseline: plain float32 numpy product",
            "dense": "dense path, top 20, as the index runs it",
            "fetch": "hit metadata from the DB (one query)",
            "fused": "fused search, no query embedding",
            "fused_paper": "same, within one 500-chunk paper",
            "end_to_end": "query embedding + fused search",
        }
        for key, label in labels.items():
            print(f"  {label:40} wall {percentiles(timings[key])}   cpu {percentiles(cpu[key])}")
        ratio = statistics.median(timings["dense32"]) / statistics.median(timings["dense"])
        print(f"  the dense path is {ratio:.1f}x faster than the plain product (p50, same run)")


if __name__ == "__main__":
    main()
