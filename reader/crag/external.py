"""The optional external search behind one small interface, off by default.

An adapter (reader.crag.scholarly: Semantic Scholar, arXiv, OpenAlex; or one of the
user's own) implements `search(query, limit) -> list[ExternalHit]`. Nothing in the
library calls the network unless adapters are passed to the pipeline explicitly.
External hits are graded like library chunks and labelled as external in the prompt,
the answer's sources and the stored question; they have no paper id and no pages.
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
    year: int | None = None


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
        title = f"{hit.title}, {hit.year}" if hit.year else hit.title
        label = f"{title} ({hit.url})" if hit.url else title
        out.append(
            Candidate(
                key=f"external:{hit.source}:{ident}",
                text=hit.text,
                paper_id=None,
                chunk_id=None,
                origin="external",
                external=True,
                source_label=f"[external: {hit.source}] {label}",
            )
        )
    return out
