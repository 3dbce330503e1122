"""The reader's own judgement of a sentence: the page where it is made (the sentence, the
audit's verdict and passages, the form) and the form's post, which keeps it through
Paper.judge (reader.facade.paper). The post passes the same checks as every form (reader/web/security.py).
On a server with accounts each account judges for itself (`user_of`)."""

from __future__ import annotations

from fastapi import APIRouter, Depends, Form, Request
from fastapi.responses import HTMLResponse, RedirectResponse

from reader.errors import PaperNotFound, ReaderError
from reader.web import paper_page
from reader.web.pages import checked_paper_id, db_session, forged, page, reader_of, user_of, wants_json

router = APIRouter()


@router.get("/paper/{paper_id}/judge/{sentence}", response_class=HTMLResponse)
def judge_page(request: Request, paper_id: str, sentence: str, session=Depends(db_session)):
    view = paper_page.judge_view_of(session, checked_paper_id(paper_id), sentence, user_of(request))
    if view is None:
        raise PaperNotFound(
            f"{sentence!r}: no such sentence in this paper's review; open it from the paper's page"
        )
    return page(
        request,
        "judge.html",
        paper=view.paper,
        s=view.sentence,
        key=view.key,
        previous=view.previous,
        next=view.next,
        next_flagged=view.next_flagged,
        comment_limit=view.comment_limit,
        nav="library",
    )


@router.post("/paper/{paper_id}/judgement")
def save_judgement(
    request: Request,
    paper_id: str,
    csrf_token: str = Form(""),
    sentence: str = Form(""),
    key: str = Form(""),
    verdict: str = Form(""),
    comment: str = Form(""),
    withdraw: str = Form(""),
    seen: str | None = Form(None),
    ctx=Depends(reader_of),
):
    if (refusal := forged(request, csrf_token)) is not None:
        return refusal
    checked_paper_id(paper_id)
    if not withdraw and verdict not in ("supported", "unsupported"):
        raise ReaderError("choose whether the paper supports the sentence (supported or unsupported)")
    result = ctx.paper(paper_id).judge(
        sentence,
        None if withdraw else verdict,
        comment=comment,
        expected=key or None,
        seen=seen or None,
        by=user_of(request) or "",
        user=user_of(request),
    )
    if wants_json(request):
        return result.to_json()
    where = f"#j-{result.sentence_id}" if result.judgement else "#judgements"
    return RedirectResponse(f"/paper/{paper_id}{where}", status_code=303)
