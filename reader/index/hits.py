"""What a search returns."""

from __future__ import annotations

from dataclasses import dataclass, field

from reader.text.pages import page_range


@dataclass
class SearchHit:
    chunk_id: int
    paper_id: str
    text: str
    section: str
    page_start: int
    page_end: int
    score: float  # fused reciprocal-rank score
    bm25_rank: int | None = None  # 1-based; None when this path did not find it
    bm25_score: float | None = None
    dense_rank: int | None = None
    dense_score: float | None = None

    @property
    def pages(self) -> str:
        return page_range(self.page_start, self.page_end)

    def to_json(self) -> dict:
        return {
            "chunk_id": self.chunk_id,
            "paper_id": self.paper_id,
            "text": self.text,
            "pages": self.pages,
            "section": self.section,
            "score": round(self.score, 6),
            "bm25_rank": self.bm25_rank,
            "dense_rank": self.dense_rank,
        }


@dataclass
class SearchResults:
    query: str
    hits: list[SearchHit] = field(default_factory=list)
    library_size: int = 0  # passages in the index (0: the library is empty)

    def to_json(self) -> dict:
        return {"hits": [hit.to_json() for hit in self.hits]}
