"""A paper: its page with the audited analyses, its PDF and page images, where a passage
stands, its status while reviewed, deleting it, reviewing it again, its note."""

from __future__ import annotations

from urllib.parse import quote

from fastapi import APIRouter, Depends, Form, Request
from fastapi.responses import FileResponse, HTMLResponse, JSONResponse, RedirectResponse, Response

from reader.errors import PaperNotFound
from reader.facade.paper import no_note_yet
from reader.web import library, page_text, paper_page, pdf
from reader.web.pages import (
    checked_paper_id,
    content_disposition,
    db_session,
    forged,
    page,
    reader_of,
    runner_of,
    user_of,
    wants_json,
)

router = APIRouter()


def shown_paper(session, paper_id: str, user: str | None = None):
    found = paper_page.paper_of(session, checked_paper_id(paper_id), user)
    if found is None:
        raise PaperNotFound(f"no paper with id {paper_id!r}; pick one from the library")
    return found


@router.get("/paper/{paper_id}", response_class=HTMLResponse)
def paper(request: Request, paper_id: str, session=Depends(db_session)):
    return page(request, "paper.html", paper=shown_paper(session, paper_id, user_of(request)), nav="library")


@router.get("/paper/{paper_id}/pdf")
def paper_pdf(paper_id: str, ctx=Depends(reader_of)):
    path, name = pdf.paper_file(ctx.library, checked_paper_id(paper_id))
    return FileResponse(
        path,
        media_type="application/pdf",
        headers={"content-disposition": content_disposition(name, "paper.pdf")},
    )


@router.get("/paper/{paper_id}/page/{number:id}.png")
def paper_page_image(paper_id: str, number: int, scale: float = pdf.RENDER_SCALES[0], ctx=Depends(reader_of)):
    """A page as a PNG at `scale` times 72 dpi, one of pdf.RENDER_SCALES (the nearest above
    one that is not), within the render limits."""
    checked_paper_id(paper_id)
    if number < 1:
        raise PaperNotFound(f"the paper has no page {number}")
    return FileResponse(
        pdf.page_image(ctx.library, paper_id, number, pdf.render_scale(scale)),
        media_type="image/png",
        headers={"cache-control": "private, max-age=86400"},
    )


@router.get("/paper/{paper_id}/figure/{number:id}.png")
def paper_figure_image(paper_id: str, number: int, ctx=Depends(reader_of)):
    """The picture of the paper's figure at `number` (1 for its first, in page order)."""
    png = ctx.library.view(paper_page.figure_image, checked_paper_id(paper_id), number - 1)
    return Response(png, media_type="image/png", headers={"cache-control": "private, max-age=86400"})


@router.get("/api/passage/{chunk_id:id}")
def passage_api(chunk_id: int, sentence: str = "", ctx=Depends(reader_of)):
    """Where a passage stands; with `sentence` (a sentence of the analysis) also where the
    passage's sentence nearest to it stands ("sentence_rects", [] when it cannot be placed)."""
    box = pdf.passage_box(ctx.library, chunk_id)
    if box is None:
        return JSONResponse({"error": f"no passage {chunk_id}"}, status_code=404)
    data = box.to_json()
    if sentence.strip():
        text = pdf.passage_text(ctx.library, chunk_id)
        data["sentence_rects"] = page_text.sentence_rects(
            ctx.library, box.paper_id, text, box.rects, sentence
        )
    return data


@router.get("/api/paper/{paper_id}/status")
def paper_status_api(paper_id: str, session=Depends(db_session)):
    status = library.paper_status_of(session, checked_paper_id(paper_id))
    if status is None:
        return JSONResponse({"error": f"no paper {paper_id}"}, status_code=404)
    return {"status": status, "reviewing": status.startswith(("pending", "running"))}


@router.get("/paper/{paper_id}/delete", response_class=HTMLResponse)
def confirm_delete(request: Request, paper_id: str, session=Depends(db_session)):
    return page(request, "delete.html", paper=shown_paper(session, paper_id), nav="library")


@router.post("/paper/{paper_id}/delete")
def delete_paper(request: Request, paper_id: str, csrf_token: str = Form(""), ctx=Depends(reader_of)):
    def again(message: str):
        shown = ctx.library.view(shown_paper, paper_id)
        return page(request, "delete.html", 403, paper=shown, nav="library", message=message)

    if (refusal := forged(request, csrf_token, again)) is not None:
        return refusal
    info = ctx.remove(checked_paper_id(paper_id))
    if wants_json(request):
        return {"deleted": info.id, "title": info.title}
    return RedirectResponse(f"/library?deleted={quote(info.title or info.id, safe='')}", status_code=303)


CACHE_CHOICES = ("reuse", "fresh")


@router.get("/paper/{paper_id}/review", response_class=HTMLResponse)
def review_choice(request: Request, paper_id: str, session=Depends(db_session)):
    """What a new review does, and the choice between the model's cached answers and fresh ones."""
    return page(request, "review_again.html", paper=shown_paper(session, paper_id), nav="library")


@router.post("/paper/{paper_id}/review")
def review_again(
    request: Request,
    paper_id: str,
    csrf_token: str = Form(""),
    cache: str = Form(""),
    ctx=Depends(reader_of),
    runner=Depends(runner_of),
):
    """Queue the paper for a new review. `cache`: "reuse" (the model's cached answers, the
    default for a script) or "fresh" (none); a page's form without it is shown the choice."""

    def again(message: str):
        shown = ctx.library.view(shown_paper, paper_id)
        return page(request, "review_again.html", 403, paper=shown, nav="library", message=message)

    if (refusal := forged(request, csrf_token, again)) is not None:
        return refusal
    if cache not in CACHE_CHOICES and not wants_json(request):
        return RedirectResponse(f"/paper/{checked_paper_id(paper_id)}/review", status_code=303)
    fresh = cache == "fresh"
    path, name = pdf.paper_file(ctx.library, checked_paper_id(paper_id))
    active = runner.active_for(path)
    job = active or runner.submit(path, name, force=True, fresh=fresh)
    if active:
        note = "It is being reviewed already; nothing more was queued."
    elif fresh:
        note = "Queued for a new review without the cache: every prompt goes to the model again."
    else:
        note = "Queued for a new review; the model's cached answers are reused for the prompts it answered before."
    if wants_json(request):
        return {"job": job.to_json(), "note": note}
    read = "" if active else ("fresh" if fresh else "cache")
    return RedirectResponse(f"/upload?job={job.id}" + (f"&read={read}" if read else ""), status_code=303)


@router.get("/paper/{paper_id}/note.md")
def paper_note(paper_id: str, request: Request, ctx=Depends(reader_of)):
    file_name, text = ctx.paper(checked_paper_id(paper_id)).note(user=user_of(request))
    return Response(
        text.encode("utf-8"),
        media_type="text/markdown; charset=utf-8",
        headers={"content-disposition": content_disposition(file_name)},
    )


@router.get("/paper/{paper_id}/note.zip")
def paper_note_zip(paper_id: str, request: Request, ctx=Depends(reader_of)):
    """The note with its tables' CSV and figures' PNG files beside it, as `reader export` writes them."""
    paper = ctx.paper(checked_paper_id(paper_id))
    data, notes = library.notes_zip(ctx, [paper.id], user_of(request))
    if not notes:
        raise no_note_yet(paper.info.title)
    return Response(
        data,
        media_type="application/zip",
        headers={"content-disposition": content_disposition(notes[0][:-3] + ".zip")},
    )
