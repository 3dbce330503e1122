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
MAX_QUESTION_CHARS = 300
# the rigour checklist's items a table may add as columns (reader.table.build.EXTRA_COLUMNS)
EXTRA_COLUMNS = [
    ("metrics", "Metrics"),
    ("ablations", "Ablations"),
    ("variance", "Variance, CI or significance"),
    ("runs", "Runs or seeds"),
    ("hyperparameters", "Hyperparameters"),
    ("compute", "Compute and hardware"),
    ("code", "Code available"),
    ("data", "Data available"),
    ("limitations", "Limitations section"),
    ("ethics", "Ethics statement"),
    ("contributions", "Stated contributions"),
]
NOT_BUILT = (
    "The table of these papers is not built yet, or a paper was reviewed again since it was: "
    "building it has the model check each cell."
)


def _chosen(paper: list[str]) -> list[str]:
    return [checked_paper_id(p) for p in dict.fromkeys(paper)]


def _questions(ask: list[str]) -> list[str]:
    return [q.strip()[:MAX_QUESTION_CHARS] for q in ask if q and q.strip()]


def _query(chosen: list[str], column: list[str] = (), ask: list[str] = ()) -> str:
    return urlencode(
        [("paper", p) for p in chosen] + [("column", c) for c in column] + [("ask", q) for q in ask]
    )


@router.get("/table", response_class=HTMLResponse)
def table_page(
    request: Request,
    paper: list[str] = Query(default=[]),
    column: list[str] = Query(default=[]),
    ask: list[str] = Query(default=[]),
    ctx=Depends(reader_of),
):
    chosen, asked = _chosen(paper), _questions(ask)
    table, unbuilt = None, False
    if chosen:
        try:
            table = ctx.library.extraction_table(chosen, stored_only=True, columns=column, questions=asked)
        except NotStored:
            unbuilt = True
    return page(
        request,
        "table.html",
        papers=ctx.papers(),
        chosen=set(chosen),
        table=table,
        unbuilt=NOT_BUILT if unbuilt else "",
        query=_query(chosen, column, asked),
        extra_columns=EXTRA_COLUMNS,
        columns=set(column),
        asked=asked,
        nav="library",
    )


@router.post("/table")
def build_table(
    request: Request,
    paper: list[str] = Form(default=[]),
    column: list[str] = Form(default=[]),
    ask: list[str] = Form(default=[]),
    csrf_token: str = Form(""),
    ctx=Depends(reader_of),
):
    if (refusal := forged(request, csrf_token)) is not None:
        return refusal
    chosen, asked = _chosen(paper), _questions(ask)
    table = ctx.library.extraction_table(
        chosen, columns=column, questions=asked
    )  # none chosen: an error page
    if wants_json(request):
        return table.to_json()
    return RedirectResponse(f"/table?{_query(chosen, column, asked)}", status_code=303)


@router.get("/table.csv")
def table_csv(
    paper: list[str] = Query(default=[]),
    column: list[str] = Query(default=[]),
    ask: list[str] = Query(default=[]),
    ctx=Depends(reader_of),
):
    chosen, asked = _chosen(paper), _questions(ask)
    try:  # none chosen: a one-line error page
        table = ctx.library.extraction_table(chosen, stored_only=True, columns=column, questions=asked)
    except NotStored:
        raise Conflict(
            f"{NOT_BUILT} Open /table?{_query(chosen, column, asked)} and press “Build the table” first."
        ) from None
    return Response(
        table.to_csv().encode("utf-8-sig"),
        media_type="text/csv; charset=utf-8",
        headers={"content-disposition": content_disposition(CSV_NAME, fallback=CSV_NAME)},
    )
