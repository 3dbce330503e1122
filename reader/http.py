"""One GET for the public scholarly APIs: the search beyond the library (reader.crag.scholarly)
and the reference lookups of the notes (reader.export.lookup).

`get` waits once for a 429 whose Retry-After asks for at most `max_retry_after_s` seconds and
raises `HttpFailure` for everything else that went wrong; each caller words the failure its own
way from `kind`: "timeout", "unreachable", "rate-limited", "status" or "not-json".
"""

from __future__ import annotations

import time
from collections.abc import Callable, Collection

import httpx

TIMEOUT_S = 10.0
MAX_RETRY_AFTER_S = 5.0  # a 429 asking to wait longer than this is reported, not waited for


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
        return max(0.0, float(value))
    except ValueError:
        return None  # an HTTP date or nothing: not waited for


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
) -> httpx.Response:
    """The response to GET `url`; statuses of 400 and above raise HttpFailure unless in `accept`."""
    for attempt in (1, 2):
        try:
            if client is not None:
                response = client.get(url, params=params, headers=headers)
            else:
                response = httpx.get(url, params=params, headers=headers or {}, timeout=timeout_s)
        except httpx.TimeoutException:
            raise HttpFailure("timeout", f"no reply within {timeout_s:g} s") from None
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
