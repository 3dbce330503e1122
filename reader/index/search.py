"""Multi-path evidence search: BM25 ∪ dense, fused by reciprocal rank.

RRF score of a chunk = Σ over paths of 1 / (RRF_K + rank on that path), rank
1-based. The hits are the union of each path's top k; their fused scores use
each path's ranks down to RANK_DEPTH, so a passage that is first by BM25 and
fifth by cosine is not scored as if the dense path had missed it (on SciFact
this lifts fused recall@3 from 0.923 to 0.938; see docs/measurements/retrieval.md).
A chunk found by one path only still comes back; one found by both comes back
once, with its rank and score on each path. Passages with the same
text (e.g. a boilerplate paragraph in two papers) collapse to the best-fused one.

A query of several sentences (the audit searches with a batch of claims
joined) is searched one sentence at a time, each sentence fused as above, and
the per-sentence rankings are fused again by RRF: one embedding of four topics
matches none of them well, so each claim gets its own evidence instead (on
SciFact, 4 claims per query: 0.538 -> 0.620 of claims with their abstract in the
top 3; see docs/measurements/retrieval.md).
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from typing import Protocol

import numpy as np

from reader.index.hits import SearchHit
from reader.text.split import split_sentences as split_text

RRF_K = 60
RANK_DEPTH = 20


class SearchablePaths(Protocol):
    def bm25_top(self, query: str, k: int, paper_id: str | None = None) -> list[tuple[int, float]]: ...

    def dense_top(
        self,
        query: str,
        k: int,
        paper_id: str | None = None,
        query_vector: np.ndarray | None = None,
    ) -> list[tuple[int, float]]: ...

    def chunk_details(self, chunk_ids: list[int]) -> dict[int, dict]: ...


@dataclass
class Fused:
    chunk_id: int
    score: float
    bm25_rank: int | None = None
    bm25_score: float | None = None
    dense_rank: int | None = None
    dense_score: float | None = None


def rrf_fuse(bm25: list[tuple[int, float]], dense: list[tuple[int, float]], k: int = RRF_K) -> list[Fused]:
    """Union of two ranked lists (best first), ordered by fused score.

    Ties (a chunk ranked r on one path vs another ranked r on the other) keep
    the better single-path rank first, then BM25 before dense.
    """
    fused: dict[int, Fused] = {}
    for rank, (chunk_id, score) in enumerate(bm25, start=1):
        item = fused.setdefault(chunk_id, Fused(chunk_id, 0.0))
        if item.bm25_rank is None:
            item.bm25_rank, item.bm25_score = rank, score
            item.score += 1.0 / (k + rank)
    for rank, (chunk_id, score) in enumerate(dense, start=1):
        item = fused.setdefault(chunk_id, Fused(chunk_id, 0.0))
        if item.dense_rank is None:
            item.dense_rank, item.dense_score = rank, score
            item.score += 1.0 / (k + rank)

    def order(item: Fused):
        best = min(r for r in (item.bm25_rank, item.dense_rank) if r is not None)
        return (-item.score, best, item.bm25_rank is None)

    return sorted(fused.values(), key=order)


MIN_SENTENCE_CHARS = 12


def split_sentences(query: str) -> list[str]:
    """The query's sentences (the audit's splitter, which keeps "Fig. 3", "e.g." and "0.5" whole);
    fragments shorter than MIN_SENTENCE_CHARS join the previous one."""
    sentences: list[str] = []
    for part in split_text(query):
        part = part.strip()
        if not part:
            continue
        if sentences and (len(part) < MIN_SENTENCE_CHARS or len(sentences[-1]) < MIN_SENTENCE_CHARS):
            sentences[-1] = f"{sentences[-1]} {part}"
        else:
            sentences.append(part)
    return sentences


def _fuse_one(index, query, paper_id, top_k_per_path, query_vector) -> list[Fused]:
    depth = max(RANK_DEPTH, top_k_per_path)
    bm25 = index.bm25_top(query, depth, paper_id)
    dense = index.dense_top(query, depth, paper_id, query_vector=query_vector)
    union = {cid for cid, _ in bm25[:top_k_per_path]} | {cid for cid, _ in dense[:top_k_per_path]}
    return [f for f in rrf_fuse(bm25, dense) if f.chunk_id in union]


def _fuse_sentences(index, sentences, paper_id, top_k_per_path) -> list[Fused]:
    """Each sentence fused on its own, then the per-sentence rankings fused by RRF.

    Ties (the first hit of each sentence) go to the hit with the higher
    per-sentence score, i.e. the one both paths agreed on. Each hit keeps its
    best BM25 and dense rank over the sentences. At most 2 x top_k_per_path hits.
    """
    embed = getattr(index, "embed_queries", None)
    vectors = embed(sentences) if embed is not None else [None] * len(sentences)
    merged: dict[int, Fused] = {}
    inner: dict[int, float] = {}
    for sentence, vector in zip(sentences, vectors):
        for rank, f in enumerate(_fuse_one(index, sentence, paper_id, top_k_per_path, vector), start=1):
            item = merged.setdefault(f.chunk_id, Fused(f.chunk_id, 0.0))
            item.score += 1.0 / (RRF_K + rank)
            inner[f.chunk_id] = max(inner.get(f.chunk_id, 0.0), f.score)
            if f.bm25_rank is not None and (item.bm25_rank is None or f.bm25_rank < item.bm25_rank):
                item.bm25_rank, item.bm25_score = f.bm25_rank, f.bm25_score
            if f.dense_rank is not None and (item.dense_rank is None or f.dense_rank < item.dense_rank):
                item.dense_rank, item.dense_score = f.dense_rank, f.dense_score
    ordered = sorted(merged.values(), key=lambda item: (-item.score, -inner[item.chunk_id]))
    return ordered[: 2 * top_k_per_path]


def _text_key(text: str) -> str:
    return re.sub(r"\s+", " ", text).strip().lower()


def multi_search(
    index: SearchablePaths,
    query: str,
    paper_id: str | None = None,
    top_k_per_path: int = 3,
    *,
    query_vector: np.ndarray | None = None,
    split: bool = True,
) -> list[SearchHit]:
    """Evidence for `query`: up to top_k_per_path chunks from each path, fused and de-duplicated.

    With paper_id the search runs within that paper's chunks only.
    query_vector: the query's embedding when the caller already has it (used
    only for a one-sentence query; when split, each sentence is
    embedded on its own).
    split: search a query of several sentences one sentence at a time
    and fuse the rankings (see the module docstring); False searches the whole
    text as one query.
    """
    if not query or not query.strip() or top_k_per_path <= 0:
        return []
    sentences = split_sentences(query) if split else [query]
    if len(sentences) > 1:
        fused = _fuse_sentences(index, sentences, paper_id, top_k_per_path)
    else:
        fused = _fuse_one(index, query, paper_id, top_k_per_path, query_vector)
    return _distinct_hits(fused, index.chunk_details([f.chunk_id for f in fused]))


def _distinct_hits(fused: list[Fused], details: dict[int, dict]) -> list[SearchHit]:
    """The fused chunks in order as hits, each text once; a chunk deleted since the index was
    loaded (no details) left out."""
    hits: list[SearchHit] = []
    seen_texts: set[str] = set()
    for f in fused:
        row = details.get(f.chunk_id)
        if row is None:
            continue
        key = _text_key(row["text"])
        if key in seen_texts:
            continue
        seen_texts.add(key)
        hits.append(
            SearchHit(
                chunk_id=f.chunk_id,
                paper_id=row["paper_id"],
                text=row["text"],
                section=row["section"],
                page_start=row["page_start"],
                page_end=row["page_end"],
                score=f.score,
                bm25_rank=f.bm25_rank,
                bm25_score=f.bm25_score,
                dense_rank=f.dense_rank,
                dense_score=f.dense_score,
            )
        )
    return hits
