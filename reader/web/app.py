"""The web app: upload PDFs, follow their reviews, read audited analyses, ask questions.

`create_app(ctx)` takes a reader.facade.Reader (tests build one with a scripted LLM and a
fake embedder). The routes (reader/web/routes/) get the Reader, a database session of its
Library (`Library.reading`) and the runners as dependencies (reader/web/pages.py) and show the
read models of reader/web; what they change goes through the Reader and the Paper, Library and
ReviewQueue it hands out.
Pages are rendered on the server with autoescaping Jinja2; the little JavaScript there is
(upload progress, tooltips) only ever sets textContent.
"""

from __future__ import annotations

from contextlib import asynccontextmanager

from fastapi import FastAPI, Request
from fastapi.responses import FileResponse, JSONResponse, RedirectResponse
from fastapi.staticfiles import StaticFiles

from reader.errors import Conflict, PaperNotFound, ReaderError
from reader.web import pdf
from reader.web.asking import AskRunner
from reader.web.jobs import QueueRunner
from reader.web.pages import HERE, page, wants_json
from reader.web.routes import (
    ask,
    highlights,
    importing,
    judgements,
    library,
    login,
    papers,
    table,
    uploads,
    viewer,
)
from reader.web.security import Guard
from reader.web.sign_in import SignedIn, Throttle


def create_app(ctx, *, allowed_hosts: list[str] | None = None, accounts: bool | None = None) -> FastAPI:
    """The ASGI app over `ctx`. Uploads go on the database's review queue (they survive a
    restart), reviewed by a worker thread of this server or by `reader worker`s.
    `allowed_hosts` restricts the Host header (loopback serving). `accounts` (default
    READER_WEB_ACCOUNTS): people sign in with the accounts of `reader user add`, each with
    their own judgements and highlights; READER_WEB_TOKEN is not asked for then."""
    if accounts is None:
        accounts = ctx.settings.web_accounts
    runner = QueueRunner(ctx)
    asker = AskRunner(ctx)

    @asynccontextmanager
    async def lifespan(_app):
        runner.start()  # jobs a stopped server left pending or running are taken up again
        pdf.start_renderer()
        yield
        runner.shutdown()
        asker.shutdown()

    app = FastAPI(title="reader", docs_url=None, redoc_url=None, openapi_url=None, lifespan=lifespan)
    app.state.ctx, app.state.runner, app.state.asker = ctx, runner, asker
    _guard(app, ctx, accounts)
    if allowed_hosts:
        from starlette.middleware.trustedhost import TrustedHostMiddleware

        app.add_middleware(TrustedHostMiddleware, allowed_hosts=allowed_hosts)
    app.mount("/static", StaticFiles(directory=HERE / "static", html=False), name="static")
    _handle_errors(app)
    for routes in (uploads, library, papers, ask, viewer, table, judgements, highlights, importing, login):
        app.include_router(routes.router)

    @app.get("/favicon.ico", include_in_schema=False)
    def favicon():
        return FileResponse(
            HERE / "static" / "favicon.svg",
            media_type="image/svg+xml",
            headers={"cache-control": "public, max-age=604800"},
        )

    @app.get("/", include_in_schema=False)
    def home():
        return RedirectResponse("/library", status_code=303)

    return app


def _guard(app: FastAPI, ctx, accounts: bool) -> None:
    """The Guard in front of every route (reader/web/security.py): the access token, or with
    `accounts` the signed-in sessions (reader/web/sign_in.py, kept in the app's state for the
    sign-in routes with the slower answers to failed sign-ins), and the body cap."""
    limit_mb = ctx.settings.upload_limit_mb
    app.state.signed_in = SignedIn(ctx.accounts.exists) if accounts else None
    app.state.throttle = Throttle()
    app.add_middleware(
        Guard,
        token=None if accounts else ctx.settings.web_token,
        signed_in=app.state.signed_in,
        max_body=limit_mb * 1024 * 1024 * uploads.MAX_FILES_PER_REQUEST + 64 * 1024,
        limit_message=(
            f"The upload is larger than the limit of {limit_mb} MB per file "
            f"(set READER_UPLOAD_LIMIT_MB to change it)."
        ),
    )


def _handle_errors(app: FastAPI) -> None:
    """A ReaderError and a 404 become the error page (or JSON for a script). A body over the
    cap is answered by the Guard (reader/web/security.py)."""

    @app.exception_handler(ReaderError)
    async def _reader_error(request: Request, exc: ReaderError):
        status = 404 if isinstance(exc, PaperNotFound) else 409 if isinstance(exc, Conflict) else 400
        if wants_json(request):
            return JSONResponse({"error": str(exc)}, status_code=status)
        return page(request, "error.html", status, message=str(exc))

    @app.exception_handler(404)
    async def _not_found(request: Request, exc):
        message = getattr(exc, "detail", None) or "Not found."
        if wants_json(request) or request.url.path.startswith("/static/"):
            return JSONResponse({"error": message}, status_code=404)
        return page(request, "error.html", 404, message=message)
