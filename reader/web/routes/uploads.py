"""Uploads: the Upload page, PDFs sent to the review queue, and the queue's jobs as JSON."""

from __future__ import annotations

import time

from fastapi import APIRouter, Depends, File, Form, Request, UploadFile
from fastapi.responses import HTMLResponse, JSONResponse

from reader.web import library, progress
from reader.web.jobs import store_named_upload
from reader.web.pages import forged, page, reader_of, runner_of, wants_json
from reader.web.security import display_name, looks_like_pdf

MAX_FILES_PER_REQUEST = 10

router = APIRouter()


def queued_message(n: int) -> str:
    return f"{n} paper{'' if n == 1 else 's'} queued for review."


def upload_limit_mb(request: Request) -> int:
    return request.app.state.ctx.settings.upload_limit_mb


READS = {
    "cache": "reusing the model's cached answers: each prompt it answered before gets the same "
    "answer again, so the analysis changes only where the paper's passages, the prompts or the "
    "settings did",
    "fresh": "asking the model afresh: no cached answer is used for it",
}


def review_notice(job, read: str) -> str:
    """What the page says of a paper just queued for a new review."""
    how = READS.get(read)
    name = job.name if job else "The paper"
    return f"{name} is queued for a new review" + (f", {how}." if how else ".") + " Its progress is below."


@router.get("/upload", response_class=HTMLResponse)
def upload_page(
    request: Request,
    job: str = "",
    read: str = "",
    runner=Depends(runner_of),
    limit_mb: int = Depends(upload_limit_mb),
):
    """The Upload page; `job` (a job id): the page follows that job (a new review's landing),
    `read` says how it reads ("cache" or "fresh")."""
    followed = runner.get(job) if job.isdigit() else None
    return page(
        request,
        "upload.html",
        jobs=runner.all(),
        limit_mb=limit_mb,
        messages=[],
        known=[],
        notices=[review_notice(followed, read)] if followed else [],
        follow=followed.id if followed else "",
    )


def accept_upload(upload: UploadFile, *, ctx, runner, limit_mb: int) -> tuple[dict | None, str | None]:
    name = display_name(upload.filename)
    limit_bytes = limit_mb * 1024 * 1024
    data = upload.file.read(limit_bytes + 1)
    if len(data) > limit_bytes:
        return (
            None,
            f"{name}: larger than the upload limit of {limit_mb} MB "
            f"(set READER_UPLOAD_LIMIT_MB to change it).",
        )
    if not data:
        return None, f"{name}: the file is empty; choose a PDF file."
    if not looks_like_pdf(data):
        return None, f"{name}: not a PDF (its content does not start with %PDF-); upload PDF files only."
    path = store_named_upload(ctx.settings.home / "uploads", data, name)
    digest = path.parent.name
    active = runner.active_for(path)
    if active is not None:
        return {**active.to_json(), "notice": f"{name} is already being reviewed."}, None
    known = ctx.library.view(library.paper_status_of, digest)
    if known is not None and not known.startswith("error"):
        # in the library already (or being reviewed by `reader review`): say so, no new job
        title = next((r.title for r in ctx.library.view(library.library_rows) if r.id == digest), name)
        return {
            "known": True,
            "name": name,
            "paper_id": digest,
            "title": title,
            "status": known,
            "url": f"/paper/{digest}",
            "review_url": f"/paper/{digest}/review",
        }, None
    return runner.submit(path, name).to_json(), None


def accept_uploads(files: list[UploadFile], *, ctx, runner, limit_mb: int) -> tuple[list[dict], list[str]]:
    """(the jobs queued or papers known, one per file accepted; the errors, one per file refused)."""
    if not files:
        return [], ["No file received: choose one or more PDF files."]
    if len(files) > MAX_FILES_PER_REQUEST:
        return [], [f"{len(files)} files in one upload; send at most {MAX_FILES_PER_REQUEST} at a time."]
    accepted, errors = [], []
    for upload_file in files:
        job, error = accept_upload(upload_file, ctx=ctx, runner=runner, limit_mb=limit_mb)
        if job:
            accepted.append(job)
        if error:
            errors.append(error)
    return accepted, errors


@router.post("/upload")
def upload(
    request: Request,
    files: list[UploadFile] = File(default=[]),
    csrf_token: str = Form(""),
    ctx=Depends(reader_of),
    runner=Depends(runner_of),
    limit_mb: int = Depends(upload_limit_mb),
):
    def again(message: str):
        return page(
            request,
            "upload.html",
            403,
            jobs=runner.all(),
            limit_mb=limit_mb,
            messages=[f"{message} A page cannot keep the files it sent: choose the files again."],
            known=[],
            notices=[],
        )

    if (refusal := forged(request, csrf_token, again)) is not None:
        return refusal
    accepted, errors = accept_uploads(files, ctx=ctx, runner=runner, limit_mb=limit_mb)
    known = [j for j in accepted if j.get("known")]
    accepted = [j for j in accepted if not j.get("known")]
    status = (
        200 if accepted or known or not errors else (413 if any("upload limit" in e for e in errors) else 400)
    )
    if wants_json(request):
        return JSONResponse({"jobs": accepted, "known": known, "errors": errors}, status_code=status)
    notices = [queued_message(len(accepted))] if accepted else []
    return page(
        request,
        "upload.html",
        status,
        jobs=runner.all(),
        limit_mb=limit_mb,
        messages=errors,
        known=known,
        notices=notices,
    )


MAX_FOLLOWED = 1000


@router.get("/api/jobs")
def jobs_api(runner=Depends(runner_of), batch: str = ""):
    """Every upload job; with `batch` (job ids, comma-separated: the ones the page follows) also
    their one bar and time left (reader.web.progress.batch_summary)."""
    jobs, now = runner.all(), time.time()
    answer: dict = {"jobs": [j.to_json() for j in jobs], "now": now}
    followed = set(b for b in batch.split(",")[:MAX_FOLLOWED] if b.isdigit())
    if followed:
        answer["batch"] = progress.batch_summary([j for j in jobs if j.id in followed], now, jobs)
    return answer


@router.get("/api/jobs/{job_id}")
def job_api(job_id: str, runner=Depends(runner_of)):
    job = runner.get(job_id)
    if job is None:
        return JSONResponse({"error": f"no upload job {job_id!r}"}, status_code=404)
    return job.to_json()
