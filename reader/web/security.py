"""The web app's guards: request size, access token or signed-in account, same-origin writes,
PDF sniffing.

Writes (every method but GET, HEAD and OPTIONS) pass only when
  1. the Origin header, if sent, is this server (`Origin: null` is another site);
  2. else the Referer header, if sent, is this server;
  3. and the request shows it is not a forged browser request, by one of:
     - the access token itself (`Authorization: Bearer`, `?token=`) — READER_WEB_TOKEN scripts;
     - `Accept: application/json` (a script, which no HTML form can send) with a same-origin
       Origin or Referer, or on a server without an access token — the upload page's script,
       and scripts on loopback;
     - the page's per-session form token (`csrf_token`, HMAC of the session cookie) — forms.
Steps 1-2 are checked here, step 3 by the routes with `FormSession.accepts` once the form
is read. docs/guide/web.md says the same for users.

With accounts (`reader serve --accounts`) every request but the sign-in page's and the static
files' needs a signed-in account (`SignedIn`): pages are sent to /login, scripts get a 401.
"""

from __future__ import annotations

import hashlib
import hmac
import ipaddress
import json
import re
import secrets
import socket
from urllib.parse import parse_qs, urlencode, urlsplit

LOOPBACK_HOSTS = ("127.0.0.1", "localhost", "[::1]")  # as Host headers carry them
TOKEN_COOKIE = "reader_token"
SESSION_COOKIE = "reader_session"
ACCOUNT_COOKIE = "reader_account"
FORM_TOKEN_FIELD = "csrf_token"
SAFE_METHODS = ("GET", "HEAD", "OPTIONS")
NEEDS_TOKEN = (
    "This reader server needs its access token: open it once with "
    "?token=<READER_WEB_TOKEN> or send 'Authorization: Bearer <token>'."
)
NEEDS_SIGN_IN = "Sign in first: this reader server has accounts (POST /login with name and password)."
OPEN_PATHS = ("/login", "/favicon.ico")  # and /static/: what the sign-in page needs
_SESSION_ID = re.compile(r"^[A-Za-z0-9_-]{43}$")
PDF_MAGIC = b"%PDF-"
# The PDF reference lets the header start anywhere in the first 1024 bytes.
PDF_HEADER_WINDOW = 1024

SECURITY_HEADERS = [
    (
        b"content-security-policy",
        b"default-src 'self'; script-src 'self'; style-src 'self'; img-src 'self' data:; "
        b"object-src 'none'; base-uri 'none'; frame-ancestors 'none'; form-action 'self'",
    ),
    (b"x-content-type-options", b"nosniff"),
    (b"x-frame-options", b"DENY"),
    # "same-origin" keeps the Origin header on same-site POSTs (no-referrer would null it).
    (b"referrer-policy", b"same-origin"),
]


def loopback_address(host: str) -> str | None:
    """The loopback address `host` names, canonical ('127.0.0.2' for '127.0.0.2' or '127.2',
    '::1'), or None. Numeric addresses and `localhost` only: any other name resolves wherever
    DNS says."""
    if host.lower() == "localhost":
        return "127.0.0.1"
    try:
        found = socket.getaddrinfo(host.strip("[]"), None, flags=socket.AI_NUMERICHOST)
        address = ipaddress.ip_address(found[0][4][0])
    except (OSError, UnicodeError, ValueError, IndexError):
        return None
    return str(address) if address.is_loopback else None


def is_loopback(host: str) -> bool:
    return loopback_address(host) is not None


def served_host_names(host: str) -> list[str]:
    """The Host header names a server bound to loopback `host` answers to: the loopback names,
    and `host` both as given (the address `reader serve` prints) and canonical (what a browser
    sends for http://127.1/); IPv6 in brackets, as Host headers carry it."""
    names = set(LOOPBACK_HOSTS)
    for name in (host, loopback_address(host) or ""):
        bare = name.strip("[]").lower()
        if bare:
            names.add(f"[{bare}]" if ":" in bare else bare)
    return sorted(names)


def looks_like_pdf(head: bytes) -> bool:
    return PDF_MAGIC in head[:PDF_HEADER_WINDOW]


_UNSAFE_NAME = re.compile(r"[\x00-\x1f\x7f]")


def display_name(filename: str | None) -> str:
    """The uploaded name, fit for showing (never for a path): no control characters, no
    directories, at most 120 characters."""
    name = _UNSAFE_NAME.sub("", filename or "")
    name = name.replace("\\", "/").rsplit("/", 1)[-1].strip()
    if len(name) > 120:
        name = name[:117] + "…"
    return name or "upload.pdf"


def token_matches(given: str | None, expected: str) -> bool:
    return bool(given) and hmac.compare_digest(given.encode(), expected.encode())


def signature(secret: bytes, text: str) -> str:
    """HMAC-SHA256 of `text` under `secret`, in hex: what this server signs its cookies and form
    tokens with (the access cookie, the form token of a session, the account session cookie in
    reader.web.sign_in); check one with `token_matches`."""
    return hmac.new(secret, text.encode(), hashlib.sha256).hexdigest()


def access_cookie_value(token: str) -> str:
    """What the access cookie holds: derived from READER_WEB_TOKEN, never the token itself."""
    return signature(token.encode(), "reader-session")


def same_origin(url: str, host: str) -> bool:
    """Whether an Origin or Referer names this server: an http(s) URL whose host:port is the
    request's Host header. `null`, look-alikes and anything unparsable are not."""
    try:
        parts = urlsplit(url.strip())
    except ValueError:
        return False
    return bool(host) and parts.scheme in ("http", "https") and parts.netloc.lower() == host.strip().lower()


def site_of(url: str) -> str:
    """scheme://host of a URL, for a message (not the rest of someone's Referer)."""
    try:
        parts = urlsplit(url.strip())
    except ValueError:
        parts = None
    if parts and parts.scheme and parts.netloc:
        return f"{parts.scheme}://{parts.netloc}"[:200]
    return url.strip()[:200] or "an empty header"


def cookie_header(name: str, value: str, *, same_site: str, secure: bool) -> tuple[bytes, bytes]:
    flags = f"; HttpOnly; SameSite={same_site}; Path=/" + ("; Secure" if secure else "")
    return b"set-cookie", f"{name}={value}{flags}".encode()


class FormSession:
    """One browser's session for the pages' form token, kept in `request.state.reader_session`.

    The session id lives in an HttpOnly cookie (SameSite=Lax, so a link from another site
    does not start a new session under open tabs; Lax cookies are not sent on cross-site
    POSTs); the form token is HMAC-SHA256(server secret, session id). The cookie is set
    only on a response whose page asked for the token.
    """

    def __init__(
        self,
        secret: bytes,
        session_id: str | None,
        *,
        explicit_token: bool,
        token_configured: bool,
        same_site_header: bool,
    ):
        self.new = session_id is None
        self.session_id = session_id or secrets.token_urlsafe(32)
        self.issued = False
        self.explicit_token = explicit_token
        self.token_configured = token_configured
        self.same_site_header = same_site_header
        self._secret = secret

    def form_token(self) -> str:
        self.issued = True
        return signature(self._secret, self.session_id)

    def accepts(self, given: str | None, *, wants_json: bool) -> bool:
        """Step 3 of the rule in this module's docstring (steps 1-2 passed in Guard)."""
        if self.explicit_token:
            return True
        if wants_json and (self.same_site_header or not self.token_configured):
            return True
        if self.new or not given:
            return False
        return token_matches(given, self.form_token())


def _header(scope, name: bytes) -> str | None:
    for key, value in scope.get("headers", []):
        if key == name:
            return value.decode("latin-1")
    return None


def _cookie(scope, name: str) -> str | None:
    raw = _header(scope, b"cookie") or ""
    for part in raw.split(";"):
        key, _, value = part.strip().partition("=")
        if key == name:
            return value
    return None


async def _send_text(send, status: int, message: str, *, as_json: bool, extra_headers=()):
    if as_json:
        body = json.dumps({"error": message}, ensure_ascii=False).encode()
        ctype = b"application/json"
    else:
        body = message.encode()
        ctype = b"text/plain; charset=utf-8"
    await send(
        {
            "type": "http.response.start",
            "status": status,
            "headers": [
                (b"content-type", ctype),
                (b"content-length", str(len(body)).encode()),
                *SECURITY_HEADERS,
                *extra_headers,
            ],
        }
    )
    await send({"type": "http.response.body", "body": body})


def _wants_json(scope) -> bool:
    return "application/json" in (_header(scope, b"accept") or "")


def _open_path(path: str) -> bool:
    return path in OPEN_PATHS or path.startswith("/static/")


def _asset_path(path: str) -> bool:
    """The files the pages load (/static/, the icon): open to all and the same for every
    account, so no account is looked up for them."""
    return path == "/favicon.ico" or path.startswith("/static/")


async def _to_sign_in(send, scope, as_json: bool):
    """A request without a signed-in account: a script is told to sign in (401), a page is sent
    to the sign-in page, which comes back to it (`next`) once signed in."""
    if as_json:
        return await _send_text(send, 401, NEEDS_SIGN_IN, as_json=True)
    back = scope.get("path", "/")
    if scope.get("query_string"):
        back += "?" + scope["query_string"].decode("latin-1")
    target = "/login" if scope["method"] not in SAFE_METHODS else "/login?" + urlencode({"next": back})
    await send(
        {
            "type": "http.response.start",
            "status": 303,
            "headers": [
                (b"location", target.encode("latin-1")),
                (b"content-length", b"0"),
                *SECURITY_HEADERS,
            ],
        }
    )
    await send({"type": "http.response.body", "body": b""})


class Guard:
    """ASGI middleware in front of every route.

    - adds security headers to every response;
    - with a token configured, lets a request through only with the token (query
      `?token=`, which also sets a cookie holding `access_cookie_value(token)`,
      `Authorization: Bearer`, or that cookie);
    - refuses state-changing requests whose Origin, or else Referer, is another site;
    - with accounts (`signed_in`, a reader.web.sign_in.SignedIn), lets a request through only
      from a signed-in account, but for OPEN_PATHS and /static/; puts the account's name in
      the request's state (`reader_user`, None without accounts, and for the static files and
      the icon, whose requests look no account up);
    - puts a `FormSession` in the request's state for the routes' form-token check;
    - caps request bodies at `max_body` bytes: from Content-Length before the app runs, else
      counted as the body streams in (chunked), answered 413 the moment it goes over.
    """

    def __init__(self, app, *, token: str | None, max_body: int, limit_message: str, signed_in=None):
        self.app = app
        self.token = token
        self.signed_in = signed_in
        self.cookie_value = access_cookie_value(token) if token else None
        self.max_body = max_body
        self.limit_message = limit_message
        # form tokens last as long as the server: a restart asks open pages to reload
        self.secret = secrets.token_bytes(32)

    async def __call__(self, scope, receive, send):
        if scope["type"] != "http":
            return await self.app(scope, receive, send)
        as_json = _wants_json(scope)
        secure = scope.get("scheme") == "https"
        access = self._access(scope, secure)
        if access is None:
            return await _send_text(send, 401, NEEDS_TOKEN, as_json=as_json)
        explicit_token, extra_headers = access
        user = None if _asset_path(scope["path"]) else self._account(scope)
        if user is None and self.signed_in is not None and not _open_path(scope["path"]):
            return await _to_sign_in(send, scope, as_json)
        same_site_header = False
        if scope["method"] not in SAFE_METHODS:
            refusal, same_site_header = self._write_refusal(scope)
            if refusal is not None:
                status, message = refusal
                return await _send_text(send, status, message, as_json=as_json)

        session_id = _cookie(scope, SESSION_COOKIE)
        session = FormSession(
            self.secret,
            session_id if session_id and _SESSION_ID.match(session_id) else None,
            explicit_token=explicit_token,
            token_configured=bool(self.token) or self.signed_in is not None,
            same_site_header=same_site_header,
        )
        scope.setdefault("state", {})["reader_session"] = session
        scope["state"]["reader_user"] = user
        exchange = _CappedExchange(
            receive, send, self.max_body, self.limit_message, session, extra_headers, secure
        )
        try:
            await self.app(scope, exchange.receive, exchange.send)
        except BodyTooLarge:
            pass
        if exchange.too_large and not exchange.started:
            # a streamed (chunked) body went over the cap: whatever the app made of the error
            # (FastAPI turns it into "There was an error parsing the body"), this is the answer
            await _send_text(send, 413, self.limit_message, as_json=as_json, extra_headers=extra_headers)

    def _access(self, scope, secure: bool) -> tuple[bool, list] | None:
        """None when this server has an access token and the request shows none; else whether
        the request carries the token itself, and the headers to add to its response (the
        access cookie when the token came in the query)."""
        if not self.token:
            return False, []
        query = parse_qs(scope.get("query_string", b"").decode("latin-1"))
        from_query = (query.get("token") or [None])[0]
        auth = _header(scope, b"authorization") or ""
        bearer = auth[7:] if auth.lower().startswith("bearer ") else None
        if token_matches(from_query, self.token):
            return True, [cookie_header(TOKEN_COOKIE, self.cookie_value, same_site="Strict", secure=secure)]
        if token_matches(bearer, self.token):
            return True, []
        if token_matches(_cookie(scope, TOKEN_COOKIE), self.cookie_value):
            return False, []
        return None

    def _account(self, scope) -> str | None:
        """The account the request is signed in as (None without accounts, or not signed in)."""
        if self.signed_in is None:
            return None
        return self.signed_in.account(_cookie(scope, ACCOUNT_COOKIE))

    def _write_refusal(self, scope) -> tuple[tuple[int, str] | None, bool]:
        """Steps 1-2 of the rule in this module's docstring and the Content-Length cap, for a
        write: (status, message) when it is refused, else None; and whether it came with a
        same-origin Origin or Referer."""
        host = _header(scope, b"host") or ""
        origin = _header(scope, b"origin")
        sender = origin if origin is not None else _header(scope, b"referer")
        if sender is not None and not same_origin(sender, host):
            return (403, f"Refused a request from another site ({site_of(sender)})."), False
        length = _header(scope, b"content-length")
        if length is not None and length.isdigit() and int(length) > self.max_body:
            return (413, self.limit_message), sender is not None
        return None, sender is not None


class _CappedExchange:
    """One request's receive and send as the app sees them: the body counted as it streams in
    (BodyTooLarge the moment it goes over `max_body`), and the security headers, the access
    cookie and a new session's cookie added to the response."""

    def __init__(self, receive, send, max_body: int, limit_message: str, session, extra_headers, secure):
        self._receive = receive
        self._send = send
        self.max_body = max_body
        self.limit_message = limit_message
        self.session = session
        self.extra_headers = extra_headers
        self.secure = secure
        self.received = 0
        self.started = False
        self.too_large = False

    async def receive(self):
        if self.too_large:
            return {"type": "http.disconnect"}
        message = await self._receive()
        if message["type"] == "http.request":
            self.received += len(message.get("body", b""))
            if self.received > self.max_body:
                self.too_large = True
                raise BodyTooLarge(self.limit_message)
        return message

    async def send(self, message):
        if self.too_large:
            return  # the app's answer to a body it could not finish (a parser's 400): the Guard's instead
        if message["type"] == "http.response.start":
            self.started = True
            message = dict(message)
            if self.session.new and self.session.issued:
                self.extra_headers.append(
                    cookie_header(
                        SESSION_COOKIE, self.session.session_id, same_site="Lax", secure=self.secure
                    )
                )
            message["headers"] = [*message.get("headers", []), *SECURITY_HEADERS, *self.extra_headers]
        await self._send(message)


class BodyTooLarge(Exception):
    """A request body went over the limit while it was being read."""
