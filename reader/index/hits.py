"""What a search returns."""

from __future__ import annotations

from dataclasses import dataclass


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
        if self.page_start == self.page_end:
            return str(self.page_start)
        return f"{self.page_start}-{self.page_end}"
