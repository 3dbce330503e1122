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
from fastapi.responses import FileResponse, HTMLResponse, JSONResponse, RedirectResponse, Response
from fastapi.staticfiles import StaticFiles
from fastapi.templating import Jinja2Templates
from jinja2 import Environment, FileSystemLoader, select_autoescape
from markupsafe import Markup, escape

from reader.errors import PaperNotFound, ReaderError
from reader.web import library as library_rows, paper_page as paper_pages, pdf, questions, services
from reader.web.jobs import QueueRunner, store_named_upload
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


def cite_marks(html: Markup, citations) -> Markup:
    """Each citation marker of an escaped sentence wrapped so that its reference entry (or that
    it has none) shows on hover: <abbr class="cite" title="entry">[12]</abbr>."""
    if not citations:
        return html
    text = str(html)
    for cited in sorted(citations, key=lambda c: len(c.marker), reverse=True):
        marker = str(escape(cited.marker))
        if marker not in text:
            continue
        # the entry only: the attribution note belongs to one sentence, the list below names it
        title = " | ".join(cited.entries) if cited.entries else "no entry in the paper’s reference list"
        wrapped = f'<abbr class="cite" title="{escape(title)}">{marker}</abbr>'
        text = re.sub(r"(?<![\w>])" + re.escape(marker) + r"(?!</abbr>)", lambda _, w=wrapped: w, text)
    return Markup(text)


def _templates() -> Jinja2Templates:
    env = Environment(
        loader=FileSystemLoader(HERE / "templates"),
        autoescape=select_autoescape(["html", "j2"], default_for_string=True, default=True),
        trim_blocks=True,
        lstrip_blocks=True,
    )
    env.filters["percent"] = lambda x: "–" if x is None else f"{x * 100:.0f}%"
    env.filters["prose"] = prose
    env.filters["cite_marks"] = cite_marks
    env.globals["cited"] = cited
    return Jinja2Templates(env=env)


def content_disposition(file_name: str, fallback: str = "note.md") -> str:
    """An attachment header that survives any title: ASCII fallback plus RFC 5987 UTF-8."""
    from urllib.parse import quote

    ascii_name = re.sub(r'[^A-Za-z0-9._-]+', "_", file_name).strip("_") or fallback
    return f"attachment; filename=\"{ascii_name}\"; filename*=UTF-8''{quote(file_name)}"


_CITATION = re.compile(r"\[(\d{1,2})\]")


def cited(answer: str, sources) -> Markup:
    """The answer escaped, its [n] markers made links to source n (when there is one)."""
    numbers = {s.number for s in sources}
    html = str(escape(answer))

    def link(m: re.Match) -> str:
        n = int(m.group(1))
        return f'<a class="cite" href="#source-{n}">[{n}]</a>' if n in numbers else m.group(0)

    return Markup(_CITATION.sub(link, html))


def create_app(ctx, *, allowed_hosts: list[str] | None = None) -> FastAPI:
    """The ASGI app over `ctx`; uploads are reviewed by the engine of `reader worker` (`ctx.work`).
    `allowed_hosts` restricts the Host header (loopback serving)."""
    settings = ctx.settings
    limit_mb = settings.upload_limit_mb
    limit_bytes = limit_mb * 1024 * 1024
    limit_message = (
        f"The upload is larger than the limit of {limit_mb} MB per file "
        f"(set READER_UPLOAD_LIMIT_MB to change it)."
    )
    upload_dir = settings.home / "uploads"
    # Uploads go on the database's review queue (they survive a restart), reviewed by a worker
    # thread of this server or by `reader worker`s.
    runner = QueueRunner(ctx)
    asker = services.AskRunner(ctx)
    templates = _templates()

    @asynccontextmanager
    async def lifespan(_app):
        runner.start()  # jobs a stopped server left pending or running are taken up again
        yield
        runner.shutdown()
        asker.shutdown()

    app = FastAPI(title="reader", docs_url=None, redoc_url=None, openapi_url=None,
                  lifespan=lifespan)
    app.state.ctx = ctx
    app.state.runner = runner
    app.state.asker = asker
    app.add_middleware(
        Guard, token=settings.web_token,
        max_body=limit_bytes * MAX_FILES_PER_REQUEST + 64 * 1024,
        limit_message=limit_message,
    )
    if allowed_hosts:
        from starlette.middleware.trustedhost import TrustedHostMiddleware

        app.add_middleware(TrustedHostMiddleware, allowed_hosts=allowed_hosts)
    app.mount("/static", StaticFiles(directory=HERE / "static", html=False), name="static")

    def read(read_model, *args, **kwargs):
        """A read model's answer over one database session."""
        with ctx.services.db() as session:
            return read_model(session, *args, **kwargs)

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

    @app.get("/favicon.ico", include_in_schema=False)
    def favicon():
        return FileResponse(HERE / "static" / "favicon.svg", media_type="image/svg+xml",
                            headers={"cache-control": "public, max-age=604800"})

    @app.get("/", include_in_schema=False)
    def home():
        return RedirectResponse("/library", status_code=303)

    # ---- upload -------------------------------------------------------------------
    @app.get("/upload", response_class=HTMLResponse)
    def upload_page(request: Request):
        jobs = runner.all()
        return page(request, "upload.html", jobs=jobs, limit_mb=limit_mb, messages=[], known=[],
                    notices=[])

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
        path = store_named_upload(upload_dir, data, name)
        digest = path.parent.name
        active = runner.active_for(path)
        if active is not None:
            return {**active.to_json(), "notice": f"{name} is already being reviewed."}, None
        known = read(library_rows.paper_status_of, digest)
        if known is not None and not known.startswith("error"):
            # in the library already (or being reviewed by `reader review`): say so, no new job
            title = next((r.title for r in read(library_rows.library_rows) if r.id == digest), name)
            return {"known": True, "name": name, "paper_id": digest, "title": title,
                    "status": known, "url": f"/paper/{digest}",
                    "review_url": f"/paper/{digest}/review"}, None
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
        known = [j for j in accepted if j.get("known")]
        accepted = [j for j in accepted if not j.get("known")]
        status = 200 if accepted or known or not errors else (
            413 if any("upload limit" in e for e in errors) else 400)
        if wants_json(request):
            return JSONResponse({"jobs": accepted, "known": known, "errors": errors},
                                status_code=status)
        jobs = runner.all()
        notices = [queued_message(len(accepted))] if accepted else []
        return page(request, "upload.html", status, jobs=jobs, limit_mb=limit_mb,
                    messages=errors, known=known, notices=notices)

    @app.get("/api/jobs")
    def jobs_api():
        import time

        jobs = runner.all()
        return {"jobs": [j.to_json() for j in jobs], "now": time.time()}

    @app.get("/api/jobs/{job_id}")
    def job_api(job_id: str):
        job = runner.get(job_id)
        if job is None:
            return JSONResponse({"error": f"no upload job {job_id!r}"}, status_code=404)
        return job.to_json()

    # ---- library and papers ------------------------------------------------------
    @app.get("/library", response_class=HTMLResponse)
    def library(request: Request, q: str = "", sort: str = "", order: str = "desc",
                text: str = "", deleted: str = ""):
        full = bool(text) and bool(q.strip())
        sorts = tuple(library_rows.SORT_KEYS) + (("relevance",) if full else ())
        sort = sort if sort in sorts else ("relevance" if full else "added")
        descending = order != "asc"
        if full:
            rows = library_rows.search_rows(ctx.services, q, sort=sort, descending=descending)
        else:
            rows = read(library_rows.library_rows, title_filter=q, sort=sort, descending=descending)
        return page(request, "library.html", rows=rows, q=q, sort=sort, full=full,
                    order="desc" if descending else "asc", deleted=deleted[:300])

    @app.get("/library/notes.zip")
    def notes_zip():
        data, count = library_rows.notes_zip(ctx)
        if not count:
            raise ReaderError("no paper has a review yet, so there are no notes to export")
        return Response(data, media_type="application/zip",
                        headers={"content-disposition": content_disposition("reader-notes.zip")})

    def checked_paper_id(paper_id: str) -> str:
        if not PAPER_ID.match(paper_id):
            raise PaperNotFound(f"no paper with id {paper_id!r}; pick one from the library")
        return paper_id

    def paper_view(paper_id: str):
        view = read(paper_pages.paper_view, checked_paper_id(paper_id))
        if view is None:
            raise PaperNotFound(f"no paper with id {paper_id!r}; pick one from the library")
        return view

    @app.get("/paper/{paper_id}", response_class=HTMLResponse)
    def paper_page(request: Request, paper_id: str):
        return page(request, "paper.html", paper=paper_view(paper_id), nav="library")

    @app.get("/paper/{paper_id}/pdf")
    def paper_pdf(paper_id: str):
        checked_paper_id(paper_id)
        path, name = pdf.paper_file(ctx.services, paper_id)
        return FileResponse(path, media_type="application/pdf",
                            headers={"content-disposition": content_disposition(name, "paper.pdf")})

    @app.get("/paper/{paper_id}/page/{number}.png")
    def paper_page_image(paper_id: str, number: int):
        checked_paper_id(paper_id)
        if number < 1:
            raise PaperNotFound(f"the paper has no page {number}")
        return FileResponse(pdf.page_image(ctx.services, paper_id, number), media_type="image/png",
                            headers={"cache-control": "private, max-age=86400"})

    @app.get("/api/passage/{chunk_id}")
    def passage_api(chunk_id: int):
        box = pdf.passage_box(ctx.services, chunk_id)
        if box is None:
            return JSONResponse({"error": f"no passage {chunk_id}"}, status_code=404)
        return box.to_json()

    @app.get("/api/paper/{paper_id}/status")
    def paper_status_api(paper_id: str):
        checked_paper_id(paper_id)
        status = read(library_rows.paper_status_of, paper_id)
        if status is None:
            return JSONResponse({"error": f"no paper {paper_id}"}, status_code=404)
        return {"status": status, "reviewing": status.startswith(("pending", "running"))}

    @app.get("/paper/{paper_id}/delete", response_class=HTMLResponse)
    def confirm_delete(request: Request, paper_id: str):
        return page(request, "delete.html", paper=paper_view(paper_id), nav="library")

    @app.post("/paper/{paper_id}/delete")
    def delete_paper(request: Request, paper_id: str, csrf_token: str = Form("")):
        if (refusal := forged(request, csrf_token)) is not None:
            return refusal
        checked_paper_id(paper_id)
        info = library_rows.delete_paper(ctx, paper_id)
        if wants_json(request):
            return {"deleted": info.id, "title": info.title}
        from urllib.parse import quote

        return RedirectResponse(f"/library?deleted={quote(info.title or info.id, safe='')}", status_code=303)

    @app.post("/paper/{paper_id}/review")
    def review_again(request: Request, paper_id: str, csrf_token: str = Form("")):
        if (refusal := forged(request, csrf_token)) is not None:
            return refusal
        checked_paper_id(paper_id)
        path, name = pdf.paper_file(ctx.services, paper_id)
        job = runner.active_for(path) or runner.submit(path, name, force=True)
        if wants_json(request):
            return {"job": job.to_json()}
        return RedirectResponse("/upload", status_code=303)

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
        choices = read(library_rows.paper_choices)
        return {"choices": choices, "scope": paper if paper in dict(choices) else ""}

    @app.get("/ask", response_class=HTMLResponse)
    def ask_page(request: Request, paper: str = ""):
        return page(request, "ask.html", question="", result=None,
                    history=read(questions.question_history), **ask_context(paper))

    @app.get("/ask/{question_id}", response_class=HTMLResponse)
    def asked_page(request: Request, question_id: int):
        result = read(questions.question_view, question_id)
        if result is None:
            raise PaperNotFound(f"no question {question_id}; see the history on the Ask page")
        return page(request, "ask.html", question=result.question, result=result, nav="ask",
                    history=read(questions.question_history), **ask_context(result.paper_id or ""))

    @app.post("/api/ask")
    def ask_job(request: Request, question: str = Form(""), paper: str = Form(""),
                csrf_token: str = Form("")):
        if (refusal := forged(request, csrf_token)) is not None:
            return refusal
        question = question.strip()
        if not question:
            return JSONResponse({"error": "Type a question first."}, status_code=400)
        job = asker.submit(question, ask_context(paper)["scope"] or None)
        return JSONResponse(asker.get(job.id), status_code=202)

    @app.get("/api/ask/{job_id}")
    def ask_job_status(job_id: str):
        job = asker.get(job_id)
        if job is None:
            return JSONResponse({"error": f"no question being answered as {job_id!r}"}, status_code=404)
        return job

    @app.post("/ask", response_class=HTMLResponse)
    def ask(request: Request, question: str = Form(""), paper: str = Form(""),
            csrf_token: str = Form("")):
        if (refusal := forged(request, csrf_token)) is not None:
            return refusal
        context = ask_context(paper)
        question = question.strip()
        if not question:
            return page(request, "ask.html", 400, question="", result=None,
                        message="Type a question first.", history=[], **context)
        if wants_json(request):
            try:
                result = services.ask(ctx, question, context["scope"] or None)
            except ReaderError as exc:
                return JSONResponse({"error": str(exc)}, status_code=400)
            return JSONResponse(result.to_json())
        try:
            question_id = ctx.ask(question, context["scope"] or None).question_id
        except ReaderError as exc:
            return page(request, "ask.html", 400, question=question, result=None,
                        message=str(exc), history=[], **context)
        return RedirectResponse(f"/ask/{question_id}", status_code=303)

    return app


def queued_message(n: int) -> str:
    return f"{n} paper{'' if n == 1 else 's'} queued for review."
