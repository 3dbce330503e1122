"""The optional external search behind one small interface, off by default.

An adapter (arXiv, Semantic Scholar, a local web index, ...) implements
`search(query, limit) -> list[ExternalHit]`. Nothing in the library calls the
network unless such an adapter is passed to the pipeline explicitly. External
hits are graded like library chunks and labelled as external in the answer.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Protocol

from reader.crag.evidence import Candidate


@dataclass
class ExternalHit:
    source: str  # adapter name, e.g. "arxiv"
    title: str
    url: str
    text: str  # the passage (an abstract, a snippet)


class ExternalSearch(Protocol):
    name: str

    def search(self, query: str, limit: int = 3) -> list[ExternalHit]: ...


def external_candidates(hits: list[ExternalHit]) -> list[Candidate]:
    out: list[Candidate] = []
    seen: set[str] = set()
    for n, hit in enumerate(hits):
        ident = hit.url or f"{hit.title}:{n}"
        if ident in seen or not hit.text.strip():
            continue
        seen.add(ident)
        label = f"{hit.title} ({hit.url})" if hit.url else hit.title
        out.append(Candidate(key=f"external:{hit.source}:{ident}", text=hit.text, paper_id=None,
                             chunk_id=None, origin="external", external=True,
                             source_label=f"[external: {hit.source}] {label}"))
    return out
