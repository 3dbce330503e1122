"""The reader's own highlights on the PDF: the viewer posts a selection (JSON: page, rectangles,
text, note) and the list's delete buttons post a form. Both pass the same checks as every form
(reader/web/security.py): another site's Origin is refused before the route runs. On a server
with accounts each account keeps and deletes only its own (`user_of`)."""

from __future__ import annotations

import json

from fastapi import APIRouter, Depends, Form, Request
from fastapi.concurrency import run_in_threadpool
from fastapi.responses import JSONResponse, RedirectResponse

from reader.errors import PaperNotFound, ReaderError
from reader.web.pages import checked_paper_id, forged, reader_of, user_of, wants_json

router = APIRouter()


@router.post("/paper/{paper_id}/highlights")
async def add_highlight(request: Request, paper_id: str, ctx=Depends(reader_of)):
    try:
        body = json.loads(await request.body() or b"{}")
    except (ValueError, UnicodeDecodeError):
        body = None
    except RecursionError:  # JSON nested 200,000 deep
        raise ReaderError("the highlight's JSON is nested too deeply: send one flat object") from None
    if not isinstance(body, dict):
        raise ReaderError('send the highlight as a JSON object: {"page", "rects", "text", "note"}')
    if (refusal := forged(request, str(body.get("csrf_token") or ""))) is not None:
        return refusal
    checked_paper_id(paper_id)

    user = user_of(request)

    def keep():
        return ctx.paper(paper_id).highlight(
            body.get("page"), body.get("rects"), body.get("text", ""), body.get("note") or "", user=user
        )

    item = await run_in_threadpool(keep)
    return JSONResponse(item.to_json(), status_code=201)


@router.post("/paper/{paper_id}/highlights/{highlight_id:id}/delete")
def delete_highlight(
    request: Request, paper_id: str, highlight_id: int, csrf_token: str = Form(""), ctx=Depends(reader_of)
):
    if (refusal := forged(request, csrf_token)) is not None:
        return refusal
    if not ctx.paper(checked_paper_id(paper_id)).delete_highlight(highlight_id, user=user_of(request)):
        raise PaperNotFound(f"this paper has no highlight {highlight_id}; it may have been deleted already")
    if wants_json(request):
        return {"deleted": highlight_id}
    return RedirectResponse(f"/paper/{paper_id}#highlights", status_code=303)
