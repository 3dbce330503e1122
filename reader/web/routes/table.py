"""The extraction table across papers: choose papers, see their table, download it as CSV.

GET /table lists the library's papers with a checkbox each; with `?paper=ID&paper=ID` it shows
those papers' table (built through the façade, every cell audited) and a "Download CSV" link to
/table.csv with the same query."""

from __future__ import annotations

from urllib.parse import urlencode

from fastapi import APIRouter, Depends, Query, Request
from fastapi.responses import HTMLResponse, Response

from reader.web.pages import checked_paper_id, content_disposition, page, reader_of

router = APIRouter()
CSV_NAME = "extraction-table.csv"


@router.get("/table", response_class=HTMLResponse)
def table_page(request: Request, paper: list[str] = Query(default=[]), ctx=Depends(reader_of)):
    chosen = [checked_paper_id(p) for p in dict.fromkeys(paper)]
    table = ctx.extraction_table(chosen) if chosen else None
    return page(
        request,
        "table.html",
        papers=ctx.papers(),
        chosen=set(chosen),
        table=table,
        query=urlencode([("paper", p) for p in chosen]),
        nav="library",
    )


@router.get("/table.csv")
def table_csv(paper: list[str] = Query(default=[]), ctx=Depends(reader_of)):
    chosen = [checked_paper_id(p) for p in dict.fromkeys(paper)]
    table = ctx.extraction_table(chosen)  # none chosen: a one-line error page
    return Response(
        table.to_csv().encode("utf-8-sig"),
        media_type="text/csv; charset=utf-8",
        headers={"content-disposition": content_disposition(CSV_NAME, fallback=CSV_NAME)},
    )
