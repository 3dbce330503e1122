"""The one record every CRAG stage passes along: a passage and what we learned about it."""

from __future__ import annotations

from dataclasses import dataclass, field

from reader.crag.grade import Grade
from reader.index.hits import SearchHit
from reader.text.pages import page_range


@dataclass
class Candidate:
    key: str  # "chunk:<id>" for library chunks, "external:<source>:<n>" otherwise
    text: str
    paper_id: str | None
    chunk_id: int | None
    page_start: int = 0
    page_end: int = 0
    section: str = ""
    fused_score: float = 0.0  # the retrieval's reciprocal-rank score (0 for external hits)
    origin: str = "retrieval"  # retrieval | rewrite | collection | external
    external: bool = False
    source_label: str = ""  # external hits: title and address
    grade: Grade | None = None
    refined: str = ""  # the verbatim sentences kept by refine
    refine_note: str = ""
    queries: list[str] = field(default_factory=list)  # which queries found it

    @classmethod
    def from_hit(cls, hit: SearchHit, origin: str, query: str = "") -> Candidate:
        return cls(
            key=f"chunk:{hit.chunk_id}",
            text=hit.text,
            paper_id=hit.paper_id,
            chunk_id=hit.chunk_id,
            page_start=hit.page_start,
            page_end=hit.page_end,
            section=hit.section,
            fused_score=float(hit.score or 0.0),
            origin=origin,
            queries=[query] if query else [],
        )

    @property
    def pages(self) -> str:
        return page_range(self.page_start, self.page_end)

    @property
    def score(self) -> float:
        return self.grade.score if self.grade else 0.0

    def passes(self, threshold: float) -> bool:
        return self.grade is not None and self.grade.score >= threshold
