"""What every route shares: the Jinja2 templates and their filters, the page renderer, the
refusal of forged writes, and the dependencies that hand a route its Reader, a database
session, the upload runner or the question runner (from the app's state, set by create_app)."""

from __future__ import annotations

import re
from collections.abc import Callable
from pathlib import Path

from fastapi import Request
from fastapi.responses import HTMLResponse, JSONResponse, Response
from fastapi.templating import Jinja2Templates
from jinja2 import Environment, FileSystemLoader, select_autoescape
from markupsafe import Markup, escape
from starlette.convertors import Convertor, register_url_convertor

from reader.errors import PaperNotFound
from reader.web.security import FORM_TOKEN_FIELD

HERE = Path(__file__).resolve().parent
PAPER_ID = re.compile(r"^[0-9a-f]{64}$")
FORM_REFUSED = (
    "This form did not come from this server's own page, or the page is out of "
    "date: reload the page and send it again."
)
# a form whose token this server did not issue, sent from one of its own pages: the page was
# opened before the server restarted (form tokens last as long as the server)
FORM_OUT_OF_DATE = (
    "This page was opened before the server restarted, so the server could not accept its "
    "form and nothing was done."
)
FORM_REFUSED_JSON = (
    f"Refused a write without this page's form token ({FORM_TOKEN_FIELD}): "
    f"reload the page, or from a script send "
    f"'Authorization: Bearer <READER_WEB_TOKEN>'."
)

_HEADING = re.compile(r"^(#{1,6})[ \t]+(.+?)[ \t#]*$", re.M)
_BOLD = re.compile(r"\*\*(?=\S)(.+?)(?<=\S)\*\*")
_CITATION = re.compile(r"\[(\d{1,2})\]")


def _heading(match: re.Match) -> str:
    # the analysis is under an h2: "#" and "##" are its h3s, deeper ones h4
    level = 3 if len(match.group(1)) <= 2 else 4
    return f'<h{level} class="md-h">{match.group(2)}</h{level}>'


def prose(text: str) -> Markup:
    """LLM prose for the page: escaped first, then Markdown headings made headings (h3, h4:
    the page's outline and a screen reader's heading list have them) and bold made visible."""
    html = str(escape(text))
    html = _HEADING.sub(_heading, html)
    return Markup(_BOLD.sub(r"<strong>\1</strong>", html))


def cite_marks(html: Markup, citations, kind: str) -> Markup:
    """Each citation marker of an escaped sentence made a link to its row in the analysis's list
    of references cited (`<kind>-cite-<n>`, the n-th of `citations`), its entry (or that it has
    none) shown on hover and read out as its description, so the keyboard reaches it too:
    <a class="cite" href="#critique-cite-1" title="entry" aria-describedby="critique-cite-1">[12]</a>."""
    if not citations:
        return html
    text = str(html)
    numbered = sorted(enumerate(citations, 1), key=lambda nc: len(nc[1].marker), reverse=True)
    for n, cited_ref in numbered:
        marker = str(escape(cited_ref.marker))
        if marker not in text:
            continue
        # the entry only: the attribution note belongs to one sentence, the list below names it
        title = (
            " | ".join(cited_ref.entries) if cited_ref.entries else "no entry in the paper’s reference list"
        )
        row = escape(f"{kind}-cite-{n}")
        wrapped = (
            f'<a class="cite" href="#{row}" title="{escape(title)}" aria-describedby="{row}">{marker}</a>'
        )
        text = re.sub(r"(?<![\w>])" + re.escape(marker) + r"(?!</a>)", lambda _, w=wrapped: w, text)
    return Markup(text)


def marked(text: str, words: str) -> Markup:
    """`text` escaped, every case-insensitive occurrence of one of `words` (a search's words,
    split at spaces) wrapped in <mark>."""
    terms = sorted({w for w in words.split() if w}, key=len, reverse=True)
    if not terms or not text:
        return Markup(escape(text))
    found = re.compile("|".join(re.escape(t) for t in terms), re.IGNORECASE)
    html, at = [], 0
    for m in found.finditer(text):
        html.append(str(escape(text[at : m.start()])) + f"<mark>{escape(m.group())}</mark>")
        at = m.end()
    html.append(str(escape(text[at:])))
    return Markup("".join(html))


def cited(answer: str, sources) -> Markup:
    """The answer escaped, its [n] markers made links to source n (when there is one); a marker
    with no source n is the paper's own citation copied from a passage, set apart from them."""
    numbers = {s.number for s in sources}
    html = str(escape(answer))

    def link(m: re.Match) -> str:
        n = int(m.group(1))
        if n in numbers:
            return f'<a class="cite" href="#source-{n}">[{n}]</a>'
        return (
            f'<span class="own-cite" title="The paper\'s own reference [{n}], quoted from a passage; '
            f"not one of the sources below\">{m.group(0)}<small> (paper's ref.)</small></span>"
        )

    return Markup(_CITATION.sub(link, html))


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
    env.filters["marked"] = marked
    env.globals["cited"] = cited
    return Jinja2Templates(env=env)


TEMPLATES = _templates()


def content_disposition(file_name: str, fallback: str = "note.md") -> str:
    """An attachment header that survives any title: ASCII fallback plus RFC 5987 UTF-8."""
    from urllib.parse import quote

    ascii_name = re.sub(r"[^A-Za-z0-9._-]+", "_", file_name).strip("_") or fallback
    return f"attachment; filename=\"{ascii_name}\"; filename*=UTF-8''{quote(file_name)}"


def page(request: Request, name: str, status_code: int = 200, **context) -> HTMLResponse:
    context.setdefault("nav", name.removesuffix(".html"))
    context.setdefault("csrf_token", request.state.reader_session.form_token)
    context.setdefault("signed_in", user_of(request))
    return TEMPLATES.TemplateResponse(request, name, context, status_code=status_code)


def wants_json(request: Request) -> bool:
    return "application/json" in request.headers.get("accept", "")


def forged(
    request: Request, form_token: str, again: Callable[[str], Response] | None = None
) -> Response | None:
    """The refusal for a write that is not shown to come from this server's pages or from a
    script (the rule in reader/web/security.py), else None. `again(message)`: the route's
    own page with its form filled in again (what was typed kept, a new token), shown when
    the form came from this server's page but from before a restart."""
    session = request.state.reader_session
    if session.accepts(form_token, wants_json=wants_json(request)):
        return None
    if wants_json(request):
        return JSONResponse({"error": FORM_REFUSED_JSON}, status_code=403)
    # only a same-site sender is offered the form again: another site cannot have a form
    # of its own choosing put in front of the reader, one click from being sent
    if again is not None and form_token and session.same_site_header:
        return again(FORM_OUT_OF_DATE)
    return page(request, "error.html", 403, message=FORM_REFUSED)


class RowId(Convertor):
    """A row id or page number in a path (`{chunk_id:id}`): 1-18 digits, so any value fits the
    database's 64-bit integers; anything else does not match the route and is a 404."""

    regex = "[0-9]{1,18}"

    def convert(self, value: str) -> int:
        return int(value)

    def to_string(self, value: int) -> str:
        return str(value)


# registered before the routes (which import this module) compile their paths
register_url_convertor("id", RowId())


def checked_paper_id(paper_id: str) -> str:
    if not PAPER_ID.match(paper_id):
        raise PaperNotFound(f"no paper with id {paper_id!r}; pick one from the library")
    return paper_id


# ---------------------------------------------------------------- dependencies


def reader_of(request: Request):
    """The app's Reader (reader.facade.Reader)."""
    return request.app.state.ctx


def db_session(request: Request):
    """One database session for the request's read models (the Reader's Library.reading)."""
    with request.app.state.ctx.library.reading() as session:
        yield session


def runner_of(request: Request):
    """The uploads' review runner (reader.web.jobs)."""
    return request.app.state.runner


def user_of(request: Request) -> str | None:
    """The account the request is signed in as on a `reader serve --accounts` server (its own
    judgements and highlights), None otherwise (the single-user and token modes)."""
    return getattr(request.state, "reader_user", None)


def asker_of(request: Request):
    """The questions' runner (reader.web.asking.AskRunner)."""
    return request.app.state.asker
