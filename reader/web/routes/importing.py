"""Papers brought in by identifier (the Upload page's form, a citation card's "Add" button) and a
paper's note written into Zotero (its page's button)."""

from __future__ import annotations

from fastapi import APIRouter, Depends, Form, Request
from fastapi.responses import JSONResponse

from reader.errors import ReaderError
from reader.web import paper_page
from reader.web.pages import checked_paper_id, forged, page, reader_of, runner_of, wants_json

router = APIRouter()
MAX_IDENTIFIERS = 20


@router.post("/import")
def import_identifiers(
    request: Request,
    identifiers: str = Form(""),
    csrf_token: str = Form(""),
    ctx=Depends(reader_of),
    runner=Depends(runner_of),
):
    """Import the DOIs and arXiv ids or URLs of the form, one per line (READER_IMPORT_SERVICES
    says where they may be fetched); the Upload page says what became of each."""

    def shown(status: int, notices: list[str], messages: list[str]):
        return page(
            request,
            "upload.html",
            status,
            jobs=runner.all(),
            limit_mb=ctx.settings.upload_limit_mb,
            messages=messages,
            known=[],
            notices=notices,
            nav="upload",
        )

    if (refusal := forged(request, csrf_token, lambda message: shown(403, [], [message]))) is not None:
        return refusal
    wanted = [line.strip() for line in identifiers.splitlines() if line.strip()][:MAX_IDENTIFIERS]
    if not wanted:
        return shown(400, [], ["No identifier received: give a DOI or an arXiv id, one per line."])
    try:
        rows = ctx.library.import_papers(wanted).rows
    except ReaderError as exc:
        if wants_json(request):
            return JSONResponse({"error": str(exc)}, status_code=400)
        return shown(400, [], [str(exc)])
    if wants_json(request):
        return {"papers": [row.to_json() for row in rows]}
    notices = [
        f"{row.source}: {row.status} as “{row.title}”"
        + (" (its title and abstract only: no open-access PDF was found)" if row.pdf == "metadata" else "")
        + f" — /paper/{row.paper_id}"
        for row in rows
        if not row.error
    ]
    return shown(200, notices, [f"{row.source}: {row.error}" for row in rows if row.error])


@router.post("/paper/{paper_id}/zotero-note")
def zotero_note(request: Request, paper_id: str, csrf_token: str = Form(""), ctx=Depends(reader_of)):
    """Write the paper's audited note into Zotero as a child note of its item."""

    def shown(status: int, notice: str):
        found = ctx.library.view(paper_page.paper_of, checked_paper_id(paper_id))
        return page(request, "paper.html", status, paper=found, nav="library", notice=notice)

    if (refusal := forged(request, csrf_token, lambda message: shown(403, message))) is not None:
        return refusal
    [row] = ctx.library.zotero_note([checked_paper_id(paper_id)]).rows
    if wants_json(request):
        return JSONResponse(row.to_json(), status_code=400 if row.status == "error" else 200)
    words = {"created": "The note was written into Zotero", "updated": "The note in Zotero was updated"}
    notice = words.get(row.status, f"Not written into Zotero ({row.status})")
    return shown(400 if row.status == "error" else 200, f"{notice}{': ' + row.detail if row.detail else '.'}")
