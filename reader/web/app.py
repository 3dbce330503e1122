"""The web app: upload PDFs, follow their reviews, read audited analyses, ask questions.

`create_app(ctx)` takes a reader.facade.Reader (tests build one with a scripted
LLM and a fake embedder); the pages call only its methods.
Pages are rendered on the server with autoescaping Jinja2; the little
JavaScript there is (upload progress, tooltips) only ever sets textContent.
"""

from __future__ import annotations

import re
from contextlib import asynccontextmanager
from pathlib import Path

from fastapi import FastAPI, File, Form, Request, UploadFile
from fastapi.responses import HTMLResponse, JSONResponse, RedirectResponse, Response
from fastapi.staticfiles import StaticFiles
from fastapi.templating import Jinja2Templates
from jinja2 import Environment, FileSystemLoader, select_autoescape
from markupsafe import Markup, escape

from reader.errors import PaperNotFound, ReaderError
from reader.web import services
from reader.web.jobs import ReviewRunner, store_upload
from reader.web.security import (
    FORM_TOKEN_FIELD, BodyTooLarge, Guard, display_name, looks_like_pdf,
)

HERE = Path(__file__).resolve().parent
MAX_FILES_PER_REQUEST = 10
PAPER_ID = re.compile(r"^[0-9a-f]{64}$")
FORM_REFUSED = ("This form did not come from this server's own page, or the page is out of "
                "date: reload the page and send it again.")
FORM_REFUSED_JSON = (f"Refused a write without this page's form token ({FORM_TOKEN_FIELD}): "
                     f"reload the page, or from a script send "
                     f"'Authorization: Bearer <READER_WEB_TOKEN>'.")


_HEADING = re.compile(r"^#{1,6}[ \t]+(.+?)[ \t#]*$", re.M)
_BOLD = re.compile(r"\*\*(?=\S)(.+?)(?<=\S)\*\*")


def prose(text: str) -> Markup:
    """LLM prose for the page: escaped first, then Markdown headings and bold made visible."""
    html = str(escape(text))
    html = _HEADING.sub(r'<span class="md-h">\1</span>', html)
    return Markup(_BOLD.sub(r"<strong>\1</strong>", html))


def _templates() -> Jinja2Templates:
    env = Environment(
        loader=FileSystemLoader(HERE / "templates"),
        autoescape=select_autoescape(["html", "j2"], default_for_string=True, default=True),
        trim_blocks=True,
        lstrip_blocks=True,
    )
    env.filters["percent"] = lambda x: "–" if x is None else f"{x * 100:.0f}%"
    env.filters["prose"] = prose
    return Jinja2Templates(env=env)


def content_disposition(file_name: str) -> str:
    """An attachment header that survives any title: ASCII fallback plus RFC 5987 UTF-8."""
    from urllib.parse import quote

    ascii_name = re.sub(r'[^A-Za-z0-9._-]+', "_", file_name).strip("_") or "note.md"
    return f"attachment; filename=\"{ascii_name}\"; filename*=UTF-8''{quote(file_name)}"


def create_app(ctx, *, review=None, allowed_hosts: list[str] | None = None) -> FastAPI:
    """The ASGI app over `ctx`. `review(pdf_path, ctx, on_progress) -> paper_id` runs an
    upload's review (default: services.review_upload, i.e. the Reader's `review` of that
    one file, as `reader review` does it). `allowed_hosts` restricts the Host header (loopback serving)."""
    settings = ctx.settings
    limit_mb = settings.upload_limit_mb
    limit_bytes = limit_mb * 1024 * 1024
    limit_message = (
        f"The upload is larger than the limit of {limit_mb} MB per file "
        f"(set READER_UPLOAD_LIMIT_MB to change it)."
    )
    upload_dir = settings.home / "uploads"
    runner = ReviewRunner(ctx, review or services.review_upload)
    templates = _templates()

    @asynccontextmanager
    async def lifespan(_app):
        yield
        runner.shutdown()

    app = FastAPI(title="reader", docs_url=None, redoc_url=None, openapi_url=None,
                  lifespan=lifespan)
    app.state.ctx = ctx
    app.state.runner = runner
    app.add_middleware(
        Guard, token=settings.web_token,
        max_body=limit_bytes * MAX_FILES_PER_REQUEST + 64 * 1024,
        limit_message=limit_message,
    )
    if allowed_hosts:
        from starlette.middleware.trustedhost import TrustedHostMiddleware

        app.add_middleware(TrustedHostMiddleware, allowed_hosts=allowed_hosts)
    app.mount("/static", StaticFiles(directory=HERE / "static", html=False), name="static")

    def page(request: Request, name: str, status_code: int = 200, **context) -> HTMLResponse:
        context.setdefault("nav", name.removesuffix(".html"))
        context.setdefault("csrf_token", request.state.reader_session.form_token)
        return templates.TemplateResponse(request, name, context, status_code=status_code)

    def wants_json(request: Request) -> bool:
        return "application/json" in request.headers.get("accept", "")

    def forged(request: Request, form_token: str) -> Response | None:
        """The refusal for a write that is not shown to come from this server's pages or
        from a script (the rule in reader/web/security.py), else None."""
        if request.state.reader_session.accepts(form_token, wants_json=wants_json(request)):
            return None
        if wants_json(request):
            return JSONResponse({"error": FORM_REFUSED_JSON}, status_code=403)
        return page(request, "error.html", 403, message=FORM_REFUSED)

    @app.exception_handler(BodyTooLarge)
    async def _too_large(request: Request, exc: BodyTooLarge):
        if wants_json(request):
            return JSONResponse({"error": str(exc)}, status_code=413)
        return page(request, "error.html", 413, message=str(exc))

    @app.exception_handler(ReaderError)
    async def _reader_error(request: Request, exc: ReaderError):
        status = 404 if isinstance(exc, PaperNotFound) else 400
        if wants_json(request):
            return JSONResponse({"error": str(exc)}, status_code=status)
        return page(request, "error.html", status, message=str(exc))

    @app.exception_handler(404)
    async def _not_found(request: Request, exc):
        message = getattr(exc, "detail", None) or "Not found."
        if wants_json(request) or request.url.path.startswith("/static/"):
            return JSONResponse({"error": message}, status_code=404)
        return page(request, "error.html", 404, message=message)

    @app.get("/", include_in_schema=False)
    def home():
        return RedirectResponse("/library", status_code=303)

    # ---- upload -------------------------------------------------------------------
    @app.get("/upload", response_class=HTMLResponse)
    def upload_page(request: Request):
        jobs = runner.all()
        return page(request, "upload.html", jobs=jobs, limit_mb=limit_mb, messages=[])

    def accept_upload(upload: UploadFile) -> tuple[dict | None, str | None]:
        name = display_name(upload.filename)
        data = upload.file.read(limit_bytes + 1)
        if len(data) > limit_bytes:
            return None, f"{name}: larger than the upload limit of {limit_mb} MB " \
                         f"(set READER_UPLOAD_LIMIT_MB to change it)."
        if not data:
            return None, f"{name}: the file is empty; choose a PDF file."
        if not looks_like_pdf(data):
            return None, f"{name}: not a PDF (its content does not start with %PDF-); " \
                         f"upload PDF files only."
        path = store_upload(upload_dir, data)
        return runner.submit(path, name).to_json(), None

    @app.post("/upload")
    def upload(request: Request, files: list[UploadFile] = File(default=[]),
               csrf_token: str = Form("")):
        if (refusal := forged(request, csrf_token)) is not None:
            return refusal
        if not files:
            errors = ["No file received: choose one or more PDF files."]
            accepted = []
        elif len(files) > MAX_FILES_PER_REQUEST:
            errors = [f"{len(files)} files in one upload; send at most "
                      f"{MAX_FILES_PER_REQUEST} at a time."]
            accepted = []
        else:
            accepted, errors = [], []
            for upload_file in files:
                job, error = accept_upload(upload_file)
                if job:
                    accepted.append(job)
                if error:
                    errors.append(error)
        status = 200 if accepted or not errors else (
            413 if any("upload limit" in e for e in errors) else 400)
        if wants_json(request):
            return JSONResponse({"jobs": accepted, "errors": errors}, status_code=status)
        jobs = runner.all()
        return page(request, "upload.html", status, jobs=jobs, limit_mb=limit_mb,
                    messages=errors)

    @app.get("/api/jobs")
    def jobs_api():
        jobs = runner.all()
        return {"jobs": [j.to_json() for j in jobs]}

    @app.get("/api/jobs/{job_id}")
    def job_api(job_id: str):
        job = runner.get(job_id)
        if job is None:
            return JSONResponse({"error": f"no upload job {job_id!r}"}, status_code=404)
        return job.to_json()

    # ---- library and papers ------------------------------------------------------
    @app.get("/library", response_class=HTMLResponse)
    def library(request: Request, q: str = "", sort: str = "added", order: str = "desc"):
        sort = sort if sort in ctx.library_sorts() else "added"
        descending = order != "asc"
        rows = ctx.library_rows(title_filter=q, sort=sort, descending=descending)
        return page(request, "library.html", rows=rows, q=q, sort=sort,
                    order="desc" if descending else "asc")

    def checked_paper_id(paper_id: str) -> str:
        if not PAPER_ID.match(paper_id):
            raise PaperNotFound(f"no paper with id {paper_id!r}; pick one from the library")
        return paper_id

    @app.get("/paper/{paper_id}", response_class=HTMLResponse)
    def paper_page(request: Request, paper_id: str):
        checked_paper_id(paper_id)
        view = ctx.paper_page(paper_id)
        if view is None:
            raise PaperNotFound(f"no paper with id {paper_id!r}; pick one from the library")
        return page(request, "paper.html", paper=view, nav="library")

    @app.get("/paper/{paper_id}/note.md")
    def paper_note(paper_id: str):
        checked_paper_id(paper_id)
        file_name, text = ctx.note(paper_id)
        return Response(
            text.encode("utf-8"), media_type="text/markdown; charset=utf-8",
            headers={"content-disposition": content_disposition(file_name)},
        )

    # ---- ask ---------------------------------------------------------------------
    def ask_context(paper: str) -> dict:
        choices = ctx.paper_choices()
        return {"choices": choices, "scope": paper if paper in dict(choices) else ""}

    @app.get("/ask", response_class=HTMLResponse)
    def ask_page(request: Request, paper: str = ""):
        return page(request, "ask.html", question="", result=None, **ask_context(paper))

    @app.post("/ask", response_class=HTMLResponse)
    def ask(request: Request, question: str = Form(""), paper: str = Form(""),
            csrf_token: str = Form("")):
        if (refusal := forged(request, csrf_token)) is not None:
            return refusal
        context = ask_context(paper)
        question = question.strip()
        if not question:
            return page(request, "ask.html", 400, question="", result=None,
                        message="Type a question first.", **context)
        try:
            result = services.ask(ctx, question, context["scope"] or None)
        except ReaderError as exc:
            if wants_json(request):
                return JSONResponse({"error": str(exc)}, status_code=400)
            return page(request, "ask.html", 400, question=question, result=None,
                        message=str(exc), **context)
        if wants_json(request):
            return JSONResponse(result.to_json())
        return page(request, "ask.html", question=question, result=result, **context)

    return app
