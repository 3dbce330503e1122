"""The PDF viewer's own data: a page's words and their places (its text layer) and search
inside the paper (reader/web/page_text.py). Both answer JSON, errors included."""

from __future__ import annotations

from fastapi import APIRouter, Depends
from fastapi.responses import JSONResponse

from reader.errors import PaperNotFound, ReaderError
from reader.web import page_text
from reader.web.pages import checked_paper_id, reader_of

router = APIRouter()


def _error(exc: ReaderError) -> JSONResponse:
    return JSONResponse({"error": str(exc)}, status_code=404 if isinstance(exc, PaperNotFound) else 400)


@router.get("/api/paper/{paper_id}/page/{number:id}/words")
def page_words(paper_id: str, number: int, ctx=Depends(reader_of)):
    try:
        words = page_text.page_words_of(ctx.library, checked_paper_id(paper_id), number)
    except ReaderError as exc:
        return _error(exc)
    return JSONResponse(words, headers={"cache-control": "private, max-age=86400"})


@router.get("/api/paper/{paper_id}/search")
def search(paper_id: str, q: str = "", ctx=Depends(reader_of)):
    try:
        return page_text.search_paper(ctx.library, checked_paper_id(paper_id), q)
    except ReaderError as exc:
        return _error(exc)
