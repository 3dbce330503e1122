"""Who is signed in on a `reader serve --accounts` server, and the slower answers to an address
that keeps giving wrong passwords.

A sign-in starts a session: a random id the server keeps with the account's name and the
session's end, sent as a cookie together with its HMAC under this server's secret (so a cookie
this server did not make is known without a look-up). Sessions live in the server's memory:
signing out ends one, a restart ends all. The passwords themselves are checked by
reader.accounts (reader/annotations/accounts.py), which also locks an account after 5 wrong ones.
"""

from __future__ import annotations

import asyncio
import secrets
import threading
import time
from collections.abc import Awaitable, Callable
from urllib.parse import urlsplit

from reader.web.security import signature, token_matches

SESSION_HOURS = 12
SESSIONS_KEPT = 10_000
FIRST_DELAY = 0.5  # seconds before answering an address's first failed sign-in; doubled each time
MAX_DELAY = 8.0
FORGET_AFTER = 15 * 60  # seconds without a failure after which an address starts again


class SignedIn:
    """The sessions of signed-in accounts. `has_account(name)` is asked at each request (but the
    static files', which Guard lets through unlooked), so an account removed with `reader user
    remove`, in another process, is signed out at once."""

    def __init__(self, has_account: Callable[[str], bool], *, clock: Callable[[], float] = time.time):
        self._has_account = has_account
        self._clock = clock
        self._secret = secrets.token_bytes(32)
        self._sessions: dict[str, tuple[str, float]] = {}  # id -> (account, end)
        self._lock = threading.Lock()

    def start(self, name: str) -> str:
        """A new session for account `name` -> the cookie's value."""
        session_id = secrets.token_urlsafe(32)
        now = self._clock()
        with self._lock:
            if len(self._sessions) >= SESSIONS_KEPT:
                self._sessions = {k: v for k, v in self._sessions.items() if v[1] > now}
            self._sessions[session_id] = (name, now + SESSION_HOURS * 3600)
        return f"{session_id}.{signature(self._secret, session_id)}"

    def _session_id(self, cookie: str | None) -> str | None:
        session_id, _, signed = (cookie or "").partition(".")
        if session_id and token_matches(signed, signature(self._secret, session_id)):
            return session_id
        return None

    def account(self, cookie: str | None) -> str | None:
        """The account the cookie's session is signed in as, or None (no session, another
        server's or an ended one, or an account since removed)."""
        session_id = self._session_id(cookie)
        with self._lock:
            name, end = self._sessions.get(session_id or "", (None, 0.0))
        if name is None or end <= self._clock() or not self._has_account(name):
            return None
        return name

    def end(self, cookie: str | None) -> None:
        """Sign the cookie's session out."""
        session_id = self._session_id(cookie)
        with self._lock:
            self._sessions.pop(session_id or "", None)


class Throttle:
    """Failed sign-ins from one address are answered ever later: FIRST_DELAY seconds after the
    first, doubling up to MAX_DELAY; a sign-in that passes, or FORGET_AFTER seconds without a
    failure, starts the address again. `sleep` is asyncio.sleep unless a test gives its own."""

    def __init__(
        self,
        sleep: Callable[[float], Awaitable[None]] = asyncio.sleep,
        clock: Callable[[], float] = time.monotonic,
    ):
        self.sleep = sleep
        self._clock = clock
        self._failures: dict[str, tuple[int, float]] = {}  # address -> (failures, last)

    def _count(self, address: str) -> int:
        count, last = self._failures.get(address, (0, 0.0))
        return 0 if self._clock() - last > FORGET_AFTER else count

    def delay(self, address: str) -> float:
        """How long the next failed answer to `address` waits."""
        return min(FIRST_DELAY * 2 ** self._count(address), MAX_DELAY)

    async def failed(self, address: str) -> None:
        wait, count = self.delay(address), self._count(address)
        if len(self._failures) >= SESSIONS_KEPT:
            self._failures.clear()
        self._failures[address] = (count + 1, self._clock())
        await self.sleep(wait)

    def passed(self, address: str) -> None:
        self._failures.pop(address, None)


def local_path(target: str | None) -> str:
    """Where to go after signing in: a path on this server ('/paper/…'), else /library (never
    another site: '//evil.example' and 'https://…' are not paths here)."""
    target = (target or "").strip()
    parts = urlsplit(target)
    if (
        not target.startswith("/")
        or target.startswith("//")
        or parts.scheme
        or parts.netloc
        or "\\" in target
    ):
        return "/library"
    return target
