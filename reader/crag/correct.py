"""Corrective retrieval: rewrite the question three ways, search for all rewrites
concurrently, de-duplicate, grade what is new and keep only what passes.

An empty result is a valid outcome: no evidence is better than bad evidence.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Iterable, Sequence
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, field

from reader.crag.evidence import Candidate
from reader.index.hits import SearchHit
from reader.llm.base import LLM
from reader.prompts import messages
from reader.text.sections import is_reference_list

Search = Callable[[str, "str | None"], list[SearchHit]]

_LIST_MARK = re.compile(r"^\s*(?:[-*•]+|\(?\d+[.):]|q\d+[.):]|query\s*\d*\s*[:.])\s*", re.IGNORECASE)


@dataclass
class Correction:
    rewrites: list[str] = field(default_factory=list)
    candidates: list[Candidate] = field(default_factory=list)  # new, graded
    error: str = ""


def parse_rewrites(text: str, question: str, n: int = 3) -> list[str]:
    """Up to n distinct queries, one per line, without list marks, quotes or the question itself."""
    seen = {question.strip().lower()}
    queries: list[str] = []
    for line in text.splitlines():
        query = _LIST_MARK.sub("", line).strip().strip("\"'`“”").strip()
        if len(query) < 3 or query.endswith(":") or query.lower() in seen:
            continue
        seen.add(query.lower())
        queries.append(query)
        if len(queries) == n:
            break
    return queries


def write_rewrites(
    question: str, why: str, llm: LLM, *, n: int = 3, paper_id: str | None = None
) -> list[str]:
    conversation = messages("rewrite_queries", question=question, why_missed=why, n=n)
    completion = llm.complete(
        conversation, temperature=0.3, max_tokens=160, stage="crag-rewrite", paper_id=paper_id
    )
    return parse_rewrites(completion.text, question, n)


def retrieve_all(
    queries: Sequence[str],
    search: Search,
    paper_id: str | None,
    *,
    origin: str,
    skip_keys: Iterable[str] = (),
    skip_paper: str | None = None,
    max_workers: int = 4,
) -> list[Candidate]:
    """Search for every query concurrently; one Candidate per chunk (best fused score wins),
    leaving out chunks already seen, the papers' reference lists (an entry's title is no answer
    about the paper's content: questions about what a paper cites go to the citation graph) and,
    for the collection fallback, the asked-about paper."""
    if not queries:
        return []
    with ThreadPoolExecutor(max_workers=max(1, min(max_workers, len(queries)))) as pool:
        results = list(pool.map(lambda q: (q, search(q, paper_id)), queries))
    skip = set(skip_keys)
    merged: dict[str, Candidate] = {}
    for query, hits in results:
        for hit in hits:
            if (skip_paper is not None and hit.paper_id == skip_paper) or is_reference_list(hit.section):
                continue
            candidate = Candidate.from_hit(hit, origin, query)
            if candidate.key in skip:
                continue
            known = merged.get(candidate.key)
            if known is None:
                merged[candidate.key] = candidate
            else:
                known.queries.append(query)
                known.fused_score = max(known.fused_score, candidate.fused_score)
    return sorted(merged.values(), key=lambda c: -c.fused_score)


def corrective_retrieval(
    question: str,
    why: str,
    *,
    llm: LLM,
    search: Search,
    paper_id: str | None,
    seen_keys: Iterable[str],
    grade: Callable[[list[Candidate]], None],
    n_rewrites: int = 3,
    max_workers: int = 4,
) -> Correction:
    """One corrective round. `grade` grades candidates in place (the pipeline's grader)."""
    try:
        rewrites = write_rewrites(question, why, llm, n=n_rewrites, paper_id=paper_id)
    except Exception as exc:
        return Correction(error=f"rewriting failed: {type(exc).__name__}: {exc}")
    candidates = retrieve_all(
        rewrites, search, paper_id, origin="rewrite", skip_keys=seen_keys, max_workers=max_workers
    )
    grade(candidates)
    return Correction(rewrites=rewrites, candidates=candidates)
