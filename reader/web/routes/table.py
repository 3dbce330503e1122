"""The extraction table across papers: choose papers, build their table, see it, download it as CSV.

GET /table lists the library's papers with a checkbox each; with `?paper=ID&paper=ID` it shows
those papers' table as stored: built from the verifier's answers given before, with no model
call (reader.errors.NotStored when they are not all there: the page then offers to build it).
Building spends model calls, so it is a POST that passes the checks of every form
(reader/web/security.py): another site cannot make the server spend them with an image tag.
It then shows the table at its GET address, with a "Download CSV" link to /table.csv, which
likewise serves only what is stored."""

from __future__ import annotations

from urllib.parse import urlencode

from fastapi import APIRouter, Depends, Form, Query, Request
from fastapi.responses import HTMLResponse, RedirectResponse, Response

from reader.errors import Conflict, NotStored
from reader.web.pages import checked_paper_id, content_disposition, forged, page, reader_of, wants_json

router = APIRouter()
CSV_NAME = "extraction-table.csv"
NOT_BUILT = (
    "The table of these papers is not built yet, or a paper was reviewed again since it was: "
    "building it has the model check each cell."
)


def _chosen(paper: list[str]) -> list[str]:
    return [checked_paper_id(p) for p in dict.fromkeys(paper)]


def _query(chosen: list[str]) -> str:
    return urlencode([("paper", p) for p in chosen])


@router.get("/table", response_class=HTMLResponse)
def table_page(request: Request, paper: list[str] = Query(default=[]), ctx=Depends(reader_of)):
    chosen = _chosen(paper)
    table, unbuilt = None, False
    if chosen:
        try:
            table = ctx.extraction_table(chosen, stored_only=True)
        except NotStored:
            unbuilt = True
    return page(
        request,
        "table.html",
        papers=ctx.papers(),
        chosen=set(chosen),
        table=table,
        unbuilt=NOT_BUILT if unbuilt else "",
        query=_query(chosen),
        nav="library",
    )


@router.post("/table")
def build_table(
    request: Request,
    paper: list[str] = Form(default=[]),
    csrf_token: str = Form(""),
    ctx=Depends(reader_of),
):
    if (refusal := forged(request, csrf_token)) is not None:
        return refusal
    chosen = _chosen(paper)
    table = ctx.extraction_table(chosen)  # none chosen: a one-line error page
    if wants_json(request):
        return table.to_json()
    return RedirectResponse(f"/table?{_query(chosen)}", status_code=303)


@router.get("/table.csv")
def table_csv(paper: list[str] = Query(default=[]), ctx=Depends(reader_of)):
    chosen = _chosen(paper)
    try:
        table = ctx.extraction_table(chosen, stored_only=True)  # none chosen: a one-line error page
    except NotStored:
        raise Conflict(
            f"{NOT_BUILT} Open /table?{_query(chosen)} and press “Build the table” first."
        ) from None
    return Response(
        table.to_csv().encode("utf-8-sig"),
        media_type="text/csv; charset=utf-8",
        headers={"content-disposition": content_disposition(CSV_NAME, fallback=CSV_NAME)},
    )
