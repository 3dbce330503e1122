"""Chat completion through any OpenAI-compatible endpoint (OpenAI, vLLM, llama-server, Ollama, ...).

Retries are done here rather than by the `openai` client so that the policy is
ours and visible: exponential backoff with jitter on 429 (honouring
Retry-After), 5xx, connection errors, timeouts, malformed replies and empty
answers; no retry on 401/403/404/400, which become an LLMError saying what to set.

The timeout is a deadline for each attempt as a whole (reader.http.bounded): an endpoint that
sends its reply a byte at a time is cut off when it passes, and a reply larger than
reader.http.MAX_REPLY_BYTES is refused, not read.
"""

from __future__ import annotations

import math
import random
import threading
import time
from email.utils import parsedate_to_datetime

from reader import http
from reader.config import LLMSettings
from reader.errors import LLMError
from reader.llm.base import ENDPOINT, Completion, Message, server_timings, token_logprobs

MAX_RETRY_AFTER_S = 60.0


OPENAI_SAMPLING = ("frequency_penalty", "presence_penalty")


class _Transient(Exception):
    """A failure worth another attempt; `wait_s` overrides the backoff when the server said so."""

    def __init__(self, reason: str, wait_s: float | None = None):
        super().__init__(reason)
        self.reason = reason
        self.wait_s = wait_s


class OpenAICompatLLM:
    def __init__(
        self,
        settings: LLMSettings,
        *,
        env_prefix: str = "READER_LLM",
        max_attempts: int = 3,
        backoff_base_s: float = 1.0,
        backoff_max_s: float = 30.0,
        sleep=time.sleep,
    ):
        if not settings.base_url:
            raise LLMError(f"{env_prefix}_BASE_URL is not set: an OpenAI-compatible endpoint needs a URL")
        self.settings = settings
        self.base_url = settings.base_url.rstrip("/")
        self.request_model = settings.model or "default"
        # Without a model name the endpoint picks its own; keep cache entries of
        # different endpoints apart then.
        self.model = settings.model or f"default@{self.base_url}"
        self.supports_logprobs = True  # servers that ignore the request simply return none
        self.supports_sampling = True
        self.capabilities = ENDPOINT
        self.env_prefix = env_prefix
        self.max_attempts = max(1, max_attempts)
        self.backoff_base_s = backoff_base_s
        self.backoff_max_s = backoff_max_s
        self._sleep = sleep
        self._slots = threading.BoundedSemaphore(max(1, settings.max_concurrency))
        self._client = None
        self._client_lock = threading.Lock()

    # -- the client ----------------------------------------------------------
    def client(self):
        with self._client_lock:
            if self._client is None:
                import openai

                self._client = openai.OpenAI(
                    base_url=self.base_url,
                    api_key=self.settings.api_key or "not-set",
                    timeout=self.settings.timeout_s,
                    max_retries=0,
                    http_client=http.bounded_client(timeout=self.settings.timeout_s, follow_redirects=True),
                )
            return self._client

    # -- the one method ------------------------------------------------------
    def complete(
        self,
        messages: list[Message],
        *,
        temperature: float = 0.0,
        max_tokens: int = 512,
        stage: str = "",
        paper_id: str | None = None,
        logprobs: int = 0,
        sampling: dict | None = None,
    ) -> Completion:
        start = time.perf_counter()
        reasons: list[str] = []
        with self._slots:
            for attempt in range(1, self.max_attempts + 1):
                try:
                    completion = self._attempt(messages, temperature, max_tokens, logprobs, sampling)
                except _Transient as fault:
                    reasons.append(fault.reason)
                    if attempt == self.max_attempts:
                        break
                    self._sleep(self._wait_before(attempt, fault.wait_s))
                    continue
                completion.latency_s = time.perf_counter() - start
                return completion
        raise LLMError(
            f"no answer from {self.base_url} after {self.max_attempts} attempts "
            f"(timeout {self.settings.timeout_s:g} s); last problem: {reasons[-1]}"
        )

    def _wait_before(self, attempt: int, server_wait_s: float | None) -> float:
        if server_wait_s is not None and math.isfinite(server_wait_s):
            return min(max(server_wait_s, 0.0), MAX_RETRY_AFTER_S)
        backoff = min(self.backoff_max_s, self.backoff_base_s * 2 ** (attempt - 1))
        return backoff + random.uniform(0, self.backoff_base_s)

    def _attempt(
        self,
        messages: list[Message],
        temperature: float,
        max_tokens: int,
        logprobs: int = 0,
        sampling: dict | None = None,
    ) -> Completion:
        extra = {"logprobs": True, "top_logprobs": logprobs} if logprobs else {}
        # only the OpenAI API's own penalties: an endpoint may refuse llama.cpp's other controls
        extra.update({k: v for k, v in (sampling or {}).items() if k in OPENAI_SAMPLING})
        response = self._request(messages, temperature, max_tokens, extra)
        return self._completion(response)

    def _request(self, messages: list[Message], temperature: float, max_tokens: int, extra: dict):
        """The endpoint's reply; _Transient for what another attempt may cure, LLMError for
        what it would not."""
        import openai

        client = self.client()  # made (and openai imported) before the deadline starts
        try:
            with http.bounded(self.settings.timeout_s, http.MAX_REPLY_BYTES):
                response = client.chat.completions.create(
                    model=self.request_model,
                    messages=messages,
                    temperature=temperature,
                    max_tokens=max_tokens,
                    **extra,
                )
        except openai.RateLimitError as exc:
            raise _Transient("rate limited (429)", retry_after_s(exc.response)) from exc
        except openai.APITimeoutError as exc:
            raise _Transient(f"timed out after {self.settings.timeout_s:g} s") from exc
        except http.ReplyTooLarge as exc:  # the next attempt would be as large: not retried
            raise LLMError(f"LLM endpoint {self.base_url} sent a reply too large to read: {exc}") from None
        except openai.APIConnectionError as exc:
            raise _Transient(f"cannot connect ({exc.__cause__ or exc})") from exc
        except openai.InternalServerError as exc:
            raise _Transient(f"server error ({exc.status_code})", retry_after_s(exc.response)) from exc
        except openai.APIStatusError as exc:
            raise self._permanent_error(exc) from exc
        except ValueError as exc:  # the body was not JSON
            raise _Transient(f"malformed reply ({exc})") from exc
        return response

    def _completion(self, response) -> Completion:
        choices = getattr(response, "choices", None)
        if not choices or getattr(choices[0], "message", None) is None:
            raise _Transient("malformed reply (no choices[0].message)")
        text = choices[0].message.content
        if not isinstance(text, str) or not text.strip():
            raise _Transient("empty answer")
        usage = getattr(response, "usage", None)
        content = getattr(getattr(choices[0], "logprobs", None), "content", None)
        return Completion(
            text=text,
            prompt_tokens=int(getattr(usage, "prompt_tokens", 0) or 0),
            completion_tokens=int(getattr(usage, "completion_tokens", 0) or 0),
            model=getattr(response, "model", None) or self.model,
            logprobs=token_logprobs(content) if content else None,
            **reported_timings(response),
        )

    def _permanent_error(self, exc) -> LLMError:
        code = exc.status_code
        detail = _server_message(exc)
        if code == 401:
            return LLMError(
                f"LLM endpoint {self.base_url} rejected the API key (401): set {self.env_prefix}_API_KEY"
            )
        if code == 403:
            return LLMError(
                f"LLM endpoint {self.base_url} refused access (403: {detail}): "
                f"check {self.env_prefix}_API_KEY and its permissions"
            )
        if code == 404 or (code in (400, 422) and "model" in detail.lower()):
            available = self.available_models()
            hint = (
                f"set {self.env_prefix}_MODEL to one of {', '.join(available)}"
                if available
                else f"check {self.env_prefix}_MODEL and {self.env_prefix}_BASE_URL"
            )
            return LLMError(f"model '{self.request_model}' not found at {self.base_url} ({code}): {hint}")
        return LLMError(f"LLM endpoint {self.base_url} rejected the request ({code}: {detail})")

    def available_models(self) -> list[str]:
        """The endpoint's model names, or [] when it cannot list them."""
        try:
            return sorted(m.id for m in self.client().models.list().data)[:20]
        except Exception:
            return []


def reported_timings(response) -> dict:
    """prompt_s, generation_s, cached_prompt_tokens and the drafted/accepted tokens from what
    the server reported: llama.cpp-based servers add `timings` to the body (kept by the client in
    `response.model_extra`); OpenAI reports prompt-cache hits as
    `usage.prompt_tokens_details.cached_tokens`, used when `timings` has no `cache_n`."""
    extra = getattr(response, "model_extra", None) or {}
    found = server_timings(extra.get("timings"))
    if found["cached_prompt_tokens"] is None:
        details = getattr(getattr(response, "usage", None), "prompt_tokens_details", None)
        cached = getattr(details, "cached_tokens", None)
        if isinstance(cached, int) and not isinstance(cached, bool) and cached >= 0:
            found["cached_prompt_tokens"] = cached
    return found


def retry_after_s(response) -> float | None:
    """Seconds the server asked us to wait (Retry-After / retry-after-ms), if it said; a value that
    is no finite number ("nan", "inf") says nothing, and the usual back-off applies."""
    headers = getattr(response, "headers", None) or {}
    millis = headers.get("retry-after-ms")
    if millis:
        try:
            seconds = float(millis) / 1000.0
            if math.isfinite(seconds):
                return seconds
        except ValueError:
            pass
    value = headers.get("retry-after")
    if not value:
        return None
    try:
        seconds = float(value)
        return seconds if math.isfinite(seconds) else None
    except ValueError:
        pass
    try:
        return parsedate_to_datetime(value).timestamp() - time.time()
    except (TypeError, ValueError):
        return None


def _server_message(exc) -> str:
    body = getattr(exc, "body", None)
    if isinstance(body, dict):
        inner = body.get("error", body)
        if isinstance(inner, dict) and inner.get("message"):
            return str(inner["message"])
        if body.get("message"):
            return str(body["message"])
    return str(getattr(exc, "message", "") or exc)
