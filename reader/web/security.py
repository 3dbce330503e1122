"""The web app's guards: request size, access token, same-origin writes, PDF sniffing."""

from __future__ import annotations

import hmac
import json
import re
from urllib.parse import parse_qs, urlsplit

LOOPBACK_HOSTS = ("127.0.0.1", "localhost", "::1", "[::1]")
TOKEN_COOKIE = "reader_token"
PDF_MAGIC = b"%PDF-"
# The PDF reference lets the header start anywhere in the first 1024 bytes.
PDF_HEADER_WINDOW = 1024

SECURITY_HEADERS = [
    (b"content-security-policy",
     b"default-src 'self'; script-src 'self'; style-src 'self'; img-src 'self' data:; "
     b"object-src 'none'; base-uri 'none'; frame-ancestors 'none'; form-action 'self'"),
    (b"x-content-type-options", b"nosniff"),
    (b"x-frame-options", b"DENY"),
    # "same-origin" keeps the Origin header on same-site POSTs (no-referrer would null it).
    (b"referrer-policy", b"same-origin"),
]


def is_loopback(host: str) -> bool:
    return host in LOOPBACK_HOSTS or host.startswith("127.")


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
    await send({
        "type": "http.response.start",
        "status": status,
        "headers": [(b"content-type", ctype), (b"content-length", str(len(body)).encode()),
                    *SECURITY_HEADERS, *extra_headers],
    })
    await send({"type": "http.response.body", "body": body})


def _wants_json(scope) -> bool:
    return "application/json" in (_header(scope, b"accept") or "")


class Guard:
    """ASGI middleware in front of every route.

    - adds security headers to every response;
    - with a token configured, lets a request through only with the token (query
      `?token=`, which also sets a cookie, `Authorization: Bearer`, or the cookie);
    - refuses state-changing requests whose Origin is another site;
    - caps request bodies at `max_body` bytes (Content-Length first, then counted).
    """

    def __init__(self, app, *, token: str | None, max_body: int, limit_message: str):
        self.app = app
        self.token = token
        self.max_body = max_body
        self.limit_message = limit_message

    async def __call__(self, scope, receive, send):
        if scope["type"] != "http":
            return await self.app(scope, receive, send)
        as_json = _wants_json(scope)
        extra_headers = []

        if self.token:
            query = parse_qs(scope.get("query_string", b"").decode("latin-1"))
            from_query = (query.get("token") or [None])[0]
            auth = _header(scope, b"authorization") or ""
            bearer = auth[7:] if auth.lower().startswith("bearer ") else None
            if token_matches(from_query, self.token):
                extra_headers.append((b"set-cookie", (
                    f"{TOKEN_COOKIE}={self.token}; HttpOnly; SameSite=Strict; Path=/"
                ).encode()))
            elif not (token_matches(bearer, self.token)
                      or token_matches(_cookie(scope, TOKEN_COOKIE), self.token)):
                return await _send_text(
                    send, 401,
                    "This reader server needs its access token: open it once with "
                    "?token=<READER_WEB_TOKEN> or send 'Authorization: Bearer <token>'.",
                    as_json=as_json)

        if scope["method"] not in ("GET", "HEAD", "OPTIONS"):
            origin = _header(scope, b"origin")
            host = _header(scope, b"host") or ""
            if origin is not None and urlsplit(origin).netloc != host:
                return await _send_text(
                    send, 403, f"Refused a request from another site ({origin}).",
                    as_json=as_json)
            length = _header(scope, b"content-length")
            if length is not None and length.isdigit() and int(length) > self.max_body:
                return await _send_text(send, 413, self.limit_message, as_json=as_json)

        received = 0
        started = False

        async def counted_receive():
            nonlocal received
            message = await receive()
            if message["type"] == "http.request":
                received += len(message.get("body", b""))
                if received > self.max_body:
                    raise BodyTooLarge(self.limit_message)
            return message

        async def send_with_headers(message):
            nonlocal started
            if message["type"] == "http.response.start":
                started = True
                message = dict(message)
                message["headers"] = [*message.get("headers", []), *SECURITY_HEADERS,
                                      *extra_headers]
            await send(message)

        try:
            await self.app(scope, counted_receive, send_with_headers)
        except BodyTooLarge:
            # The app registers a handler for this; here only if it escaped before a response.
            if not started:
                await _send_text(send, 413, self.limit_message, as_json=as_json)


class BodyTooLarge(Exception):
    """A request body went over the limit while it was being read."""
