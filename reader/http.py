"""One GET for the public scholarly APIs: the search beyond the library (reader.crag.scholarly)
and the reference lookups of the notes (reader.export.lookup); and the bounded HTTP client that
the OpenAI-compatible LLM client (reader.llm.openai_compat) sends through as well.

`get` waits once for a 429 whose Retry-After asks for at most `max_retry_after_s` seconds and
raises `HttpFailure` for everything else that went wrong; each caller words the failure its own
way from `kind`: "timeout", "unreachable", "rate-limited", "status", "too-large" or "not-json".

A timeout is a deadline for the whole request, not a limit per read: httpx's timeouts bound each
socket operation, so a server that sends its reply a byte at a time is never cut off. A client made
by `bounded_client` gives every socket operation only the time left before the deadline of
`bounded(seconds, max_bytes)` in the calling thread, and stops reading once the reply passes
`max_bytes` (it asks for uncompressed replies, so the bytes counted are the bytes kept).
"""

from __future__ import annotations

import math
import threading
import time
from collections.abc import Callable, Collection, Iterator
from contextlib import contextmanager
from dataclasses import dataclass

import httpcore
import httpx

TIMEOUT_S = 10.0
MAX_RETRY_AFTER_S = 5.0  # a 429 asking to wait longer than this is reported, not waited for
MAX_REPLY_BYTES = 16 * 2**20  # a search or LLM reply of a few kB to a few MB; a larger one is refused


class ReplyTooLarge(Exception):
    """A bounded client's reply passed its byte cap; raised from the read that passed it."""

    def __init__(self, max_bytes: int):
        super().__init__(f"the reply is larger than {max_bytes / 2**20:g} MB")
        self.max_bytes = max_bytes


@dataclass
class _Budget:
    deadline: float  # time.monotonic()
    max_bytes: int
    received: int = 0

    def wait(self, timeout: float | None, error: type[Exception]) -> float:
        """The time a socket operation may take: its own timeout, at most the time left."""
        left = self.deadline - time.monotonic()
        if left <= 0:
            raise error("the deadline passed")
        return left if timeout is None else min(timeout, left)

    def count(self, data: bytes) -> bytes:
        self.received += len(data)
        if self.received > self.max_bytes:
            raise ReplyTooLarge(self.max_bytes)
        return data


_local = threading.local()


def _budget() -> _Budget | None:
    return getattr(_local, "budget", None)


@contextmanager
def bounded(seconds: float, max_bytes: int = MAX_REPLY_BYTES) -> Iterator[None]:
    """Within: the requests of a `bounded_client` in this thread end `seconds` from now (a timeout
    exception) and read at most `max_bytes` (ReplyTooLarge)."""
    before = _budget()
    _local.budget = _Budget(time.monotonic() + seconds, max_bytes)
    try:
        yield
    finally:
        _local.budget = before


class _BoundedStream(httpcore.NetworkStream):
    def __init__(self, inner: httpcore.NetworkStream):
        self._inner = inner

    def read(self, max_bytes: int, timeout: float | None = None) -> bytes:
        budget = _budget()
        if budget is None:
            return self._inner.read(max_bytes, timeout)
        return budget.count(self._inner.read(max_bytes, budget.wait(timeout, httpcore.ReadTimeout)))

    def write(self, buffer: bytes, timeout: float | None = None) -> None:
        budget = _budget()
        self._inner.write(buffer, budget.wait(timeout, httpcore.WriteTimeout) if budget else timeout)

    def close(self) -> None:
        self._inner.close()

    def start_tls(self, ssl_context, server_hostname=None, timeout=None) -> httpcore.NetworkStream:
        budget = _budget()
        timeout = budget.wait(timeout, httpcore.ConnectTimeout) if budget else timeout
        return _BoundedStream(self._inner.start_tls(ssl_context, server_hostname, timeout))

    def get_extra_info(self, info: str):
        return self._inner.get_extra_info(info)


class _BoundedBackend(httpcore.NetworkBackend):
    def __init__(self, inner: httpcore.NetworkBackend):
        self._inner = inner

    def connect_tcp(self, host, port, timeout=None, local_address=None, socket_options=None):
        budget = _budget()
        timeout = budget.wait(timeout, httpcore.ConnectTimeout) if budget else timeout
        return _BoundedStream(self._inner.connect_tcp(host, port, timeout, local_address, socket_options))

    def connect_unix_socket(self, path, timeout=None, socket_options=None):
        budget = _budget()
        timeout = budget.wait(timeout, httpcore.ConnectTimeout) if budget else timeout
        return _BoundedStream(self._inner.connect_unix_socket(path, timeout, socket_options))

    def sleep(self, seconds: float) -> None:
        self._inner.sleep(seconds)


def bounded_client(**options) -> httpx.Client:
    """An httpx.Client (`options` as httpx.Client takes them) whose requests keep to `bounded`."""
    headers = {"Accept-Encoding": "identity", **(options.pop("headers", None) or {})}
    client = httpx.Client(headers=headers, **options)
    # httpx has no public hook for the sockets: its transports' connection pools take a network
    # backend, which is wrapped here (the proxies' transports too)
    for transport in [client._transport, *client._mounts.values()]:
        pool = getattr(transport, "_pool", None)
        if pool is not None:
            pool._network_backend = _BoundedBackend(pool._network_backend)
    return client


class HttpFailure(Exception):
    def __init__(
        self,
        kind: str,
        message: str,
        *,
        status: int | None = None,
        retry_after: float | None = None,
        exception: str | None = None,
    ):
        super().__init__(message)
        self.kind = kind
        self.status = status
        self.retry_after = retry_after
        self.exception = exception  # the httpx exception's class name, for "unreachable"


def retry_after(response: httpx.Response) -> float | None:
    value = response.headers.get("Retry-After", "").strip()
    try:
        seconds = float(value)
    except ValueError:
        return None  # an HTTP date or nothing: not waited for
    return max(0.0, seconds) if math.isfinite(seconds) else None  # "nan", "inf": no number


def get(
    url: str,
    params: dict | None = None,
    *,
    headers: dict | None = None,
    timeout_s: float = TIMEOUT_S,
    client: httpx.Client | None = None,
    sleep: Callable[[float], None] = time.sleep,
    max_retry_after_s: float = MAX_RETRY_AFTER_S,
    accept: Collection[int] = (),
    max_bytes: int = MAX_REPLY_BYTES,
) -> httpx.Response:
    """The response to GET `url`; statuses of 400 and above raise HttpFailure unless in `accept`.
    Each attempt ends within `timeout_s` and reads at most `max_bytes` (with a `client` of the
    caller's own: when it was made by `bounded_client`)."""
    for attempt in (1, 2):
        try:
            with bounded(timeout_s, max_bytes):
                if client is not None:
                    response = client.get(url, params=params, headers=headers)
                else:
                    with bounded_client(timeout=timeout_s) as own:
                        response = own.get(url, params=params, headers=headers)
        except httpx.TimeoutException:
            raise HttpFailure("timeout", f"no reply within {timeout_s:g} s") from None
        except ReplyTooLarge as exc:
            raise HttpFailure("too-large", str(exc)) from None
        except httpx.HTTPError as exc:
            name = type(exc).__name__
            raise HttpFailure("unreachable", f"{name}: {exc}", exception=name) from None
        if response.status_code in accept:
            return response
        if response.status_code == 429:
            wait = retry_after(response)
            if attempt == 1 and wait is not None and wait <= max_retry_after_s:
                sleep(wait)
                continue
            later = f"; it asks to retry after {wait:g} s" if wait is not None else ""
            raise HttpFailure("rate-limited", f"rate limited (HTTP 429){later}", status=429, retry_after=wait)
        if response.status_code >= 400:
            raise HttpFailure("status", f"HTTP {response.status_code}", status=response.status_code)
        return response
    raise AssertionError("unreachable")


def json_object(response: httpx.Response) -> dict:
    try:
        data = response.json()
    except ValueError:
        raise HttpFailure("not-json", "the reply is not JSON") from None
    if not isinstance(data, dict):
        raise HttpFailure("not-json", "the reply is not a JSON object")
    return data


def send(
    method: str,
    url: str,
    body=None,
    *,
    headers: dict | None = None,
    timeout_s: float = TIMEOUT_S,
    accept: Collection[int] = (),
) -> httpx.Response:
    """One write (POST, PUT, PATCH) of a JSON `body`, never retried (a write may have been done);
    statuses of 400 and above raise HttpFailure unless in `accept`, as `get` does."""
    try:
        with bounded(timeout_s), bounded_client(timeout=timeout_s) as client:
            response = client.request(method, url, json=body, headers=headers)
    except httpx.TimeoutException:
        raise HttpFailure("timeout", f"no reply within {timeout_s:g} s") from None
    except ReplyTooLarge as exc:
        raise HttpFailure("too-large", str(exc)) from None
    except httpx.HTTPError as exc:
        name = type(exc).__name__
        raise HttpFailure("unreachable", f"{name}: {exc}", exception=name) from None
    if response.status_code in accept or response.status_code < 400:
        return response
    if response.status_code == 429:
        wait = retry_after(response)
        later = f"; it asks to retry after {wait:g} s" if wait is not None else ""
        raise HttpFailure("rate-limited", f"rate limited (HTTP 429){later}", status=429, retry_after=wait)
    raise HttpFailure("status", f"HTTP {response.status_code}", status=response.status_code)
