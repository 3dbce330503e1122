"""Asking: the Ask page, a stored answer's page, and questions answered in the background
(POST /api/ask starts one, GET /api/ask/{job} tells its stage) or at once (POST /ask)."""

from __future__ import annotations

from fastapi import APIRouter, Depends, Form, Request
from fastapi.responses import HTMLResponse, JSONResponse, RedirectResponse

from reader.errors import PaperNotFound, ReaderError
from reader.web import asking, library, questions
from reader.web.pages import asker_of, db_session, forged, page, reader_of, wants_json

router = APIRouter()


def ask_context(session, paper: str) -> dict:
    choices = library.paper_choices(session)
    return {"choices": choices, "scope": paper if paper in dict(choices) else ""}


@router.get("/ask", response_class=HTMLResponse)
def ask_page(request: Request, paper: str = "", session=Depends(db_session)):
    return page(
        request,
        "ask.html",
        question="",
        result=None,
        history=questions.question_history(session),
        **ask_context(session, paper),
    )


@router.get("/ask/{question_id:id}", response_class=HTMLResponse)
def asked_page(request: Request, question_id: int, session=Depends(db_session)):
    result = questions.question_of(session, question_id)
    if result is None:
        raise PaperNotFound(f"no question {question_id}; see the history on the Ask page")
    return page(
        request,
        "ask.html",
        question=result.question,
        result=result,
        nav="ask",
        history=questions.question_history(session),
        **ask_context(session, result.paper_id or ""),
    )


@router.post("/api/ask")
def ask_job(
    request: Request,
    question: str = Form(""),
    paper: str = Form(""),
    csrf_token: str = Form(""),
    session=Depends(db_session),
    asker=Depends(asker_of),
):
    if (refusal := forged(request, csrf_token)) is not None:
        return refusal
    question = question.strip()
    if not question:
        return JSONResponse({"error": "Type a question first."}, status_code=400)
    job = asker.submit(question, ask_context(session, paper)["scope"] or None)
    return JSONResponse(asker.get(job.id), status_code=202)


@router.get("/api/ask/{job_id}")
def ask_job_status(job_id: str, asker=Depends(asker_of)):
    job = asker.get(job_id)
    if job is None:
        return JSONResponse({"error": f"no question being answered as {job_id!r}"}, status_code=404)
    return job


@router.post("/ask", response_class=HTMLResponse)
def ask(
    request: Request,
    question: str = Form(""),
    paper: str = Form(""),
    csrf_token: str = Form(""),
    ctx=Depends(reader_of),
    session=Depends(db_session),
):
    context = ask_context(session, paper)

    def again(message: str):
        return page(
            request,
            "ask.html",
            403,
            question=question,
            result=None,
            message=f"{message} Your question is kept below: send it again.",
            history=[],
            **context,
        )

    if (refusal := forged(request, csrf_token, again)) is not None:
        return refusal
    session.close()  # answering takes a while: no session held open meanwhile
    question = question.strip()
    if not question:
        return page(
            request,
            "ask.html",
            400,
            question="",
            result=None,
            message="Type a question first.",
            history=[],
            **context,
        )
    try:
        if wants_json(request):
            return JSONResponse(asking.ask(ctx, question, context["scope"] or None).to_json())
        question_id = ctx.ask(question, context["scope"] or None).question_id
    except ReaderError as exc:
        if wants_json(request):
            return JSONResponse({"error": str(exc)}, status_code=400)
        return page(
            request, "ask.html", 400, question=question, result=None, message=str(exc), history=[], **context
        )
    return RedirectResponse(f"/ask/{question_id}", status_code=303)
