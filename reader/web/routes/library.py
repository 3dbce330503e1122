"""The library: the table of papers (filter, sort, full-text search) and the notes zip."""

from __future__ import annotations

from fastapi import APIRouter, Depends, Request
from fastapi.responses import HTMLResponse, Response

from reader.errors import ReaderError
from reader.web import library as rows
from reader.web.pages import content_disposition, db_session, page, reader_of, user_of

router = APIRouter()


@router.get("/library", response_class=HTMLResponse)
def library(
    request: Request,
    q: str = "",
    sort: str = "",
    order: str = "desc",
    text: str = "",
    deleted: str = "",
    ctx=Depends(reader_of),
    session=Depends(db_session),
):
    full = bool(text) and bool(q.strip())
    sorts = tuple(rows.SORT_KEYS) + (("relevance",) if full else ())
    sort = sort if sort in sorts else ("relevance" if full else "added")
    descending = order != "asc"
    if full:
        found = rows.search_rows(ctx.library, q, sort=sort, descending=descending)
    else:
        found = rows.library_rows(session, title_filter=q, sort=sort, descending=descending)
    return page(
        request,
        "library.html",
        rows=found,
        q=q,
        sort=sort,
        full=full,
        order="desc" if descending else "asc",
        deleted=deleted[:300],
    )


@router.get("/library/notes.zip")
def notes_zip(request: Request, ctx=Depends(reader_of)):
    data, notes = rows.notes_zip(ctx, user=user_of(request))
    if not notes:
        raise ReaderError("no paper has a review yet, so there are no notes to export")
    return Response(
        data,
        media_type="application/zip",
        headers={"content-disposition": content_disposition("reader-notes.zip")},
    )
