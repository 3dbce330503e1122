"""Page numbers as reader writes them: one formatter for a page or a range of pages."""

from __future__ import annotations


def page_range(start: int | None, end: int | None = None, *, prose: bool = False) -> str:
    """A page or a range: "3" or "3-4" (the form JSON and prompts carry), or with `prose`
    "p. 3" or "pp. 3–4" (the form a reader sees beside evidence). "" without a first page
    (None or 0); an end that is missing or the first page is one page."""
    if not start:
        return ""
    if not end or end == start:
        return f"p. {start}" if prose else str(start)
    return f"pp. {start}–{end}" if prose else f"{start}-{end}"
