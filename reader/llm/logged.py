"""The call log and the response cache, around any LLM.

Every call becomes one `LLMCall` row (stage, role, model, paper, tokens,
latency, cached flag, error, and the prompt and generation seconds and prompt-cache
tokens the server reported, when it did; a cache hit has none). Answers are cached
in `LLMCacheEntry` under a key made of the model, the full messages and the
parameters, so re-running finished work costs no LLM calls. With use_cache=False
the cache is not read, but fresh answers still replace the stored ones.

A caller that can tell a usable reply from an unusable one passes
`accept=check` (check(completion) -> bool; the audit's verifier does: a reply
that answers none of its claims is a failed call). A reply the check rejects is
not cached, and is logged with an error, and a cached reply it rejects (stored
before the check existed) is not served: the model is asked again. The check is
never passed on to the wrapped LLM, so an LLM of the user's own need not know it.

A reply's text leaves here without control characters (reader.text.controls): a NUL, which
PostgreSQL refuses in text, or a terminal's escape sequence is outside text like any other, and
this is where every reply enters. A failed call's error is cleaned the same way.

The log and the cache are written through `calls` (reader.store.calls.CallStore
in the product, anything with the same three methods in a test), so this layer
never touches the database itself.
"""

from __future__ import annotations

import hashlib
import json
import time
from collections.abc import Callable

from reader.errors import NotStored
from reader.llm.base import (
    Capabilities,
    Completion,
    Message,
    capabilities_of,
    supports_logprobs,
    supports_sampling,
)
from reader.text.controls import clean_text

Accept = Callable[[Completion], bool]
REJECTED = "reply rejected by the caller's check (unusable); not cached"


def cache_key(
    model: str,
    messages: list[Message],
    temperature: float,
    max_tokens: int,
    logprobs: int = 0,
    sampling: dict | None = None,
) -> str:
    params = {
        "model": model,
        "messages": messages,
        "temperature": float(temperature),
        "max_tokens": int(max_tokens),
    }
    if logprobs:
        params["logprobs"] = int(logprobs)
    if sampling:
        params["sampling"] = sampling
    payload = json.dumps(
        params,
        sort_keys=True,
        ensure_ascii=False,
        separators=(",", ":"),
    )
    return hashlib.sha256(payload.encode("utf-8")).hexdigest()


class LoggedLLM:
    supports_accept = True  # complete(..., accept=check): see the module docstring

    def __init__(self, inner, role: str, calls, use_cache: bool = True, *, only_stored: bool = False):
        self.inner = inner
        self.role = role
        self.calls = calls
        self.use_cache = use_cache
        self.only_stored = only_stored

    def uncached(self) -> LoggedLLM:
        """The same LLM, logged as before, never answered from the cache (a fresh read)."""
        return LoggedLLM(self.inner, self.role, self.calls, use_cache=False)

    def stored_only(self) -> LoggedLLM:
        """The same LLM answering from the cache alone, whatever use_cache says: a call whose
        answer is not stored raises NotStored and the model is not asked. Nothing is logged
        either: this is what a GET request serves, and a GET writes nothing."""
        return LoggedLLM(self.inner, self.role, self.calls, use_cache=True, only_stored=True)

    @property
    def model(self) -> str:
        return self.inner.model

    @property
    def capabilities(self) -> Capabilities:
        return capabilities_of(self.inner)

    @property
    def supports_logprobs(self) -> bool:
        return supports_logprobs(self.inner)

    @property
    def supports_sampling(self) -> bool:
        return supports_sampling(self.inner)

    def complete(
        self,
        messages: list[Message],
        *,
        temperature: float = 0.0,
        max_tokens: int = 512,
        stage: str = "",
        paper_id: str | None = None,
        logprobs: int = 0,
        accept: Accept | None = None,
        sampling: dict | None = None,
    ) -> Completion:
        start = time.perf_counter()
        logprobs = logprobs if self.supports_logprobs else 0
        sampling = sampling if self.supports_sampling else None
        key = cache_key(self.model, messages, temperature, max_tokens, logprobs, sampling)
        hit = self._stored_answer(key, stage, paper_id, accept, start)
        if hit is not None:
            return hit
        extra = {"logprobs": logprobs} if logprobs else {}
        if sampling:
            extra["sampling"] = sampling
        try:
            completion = self.inner.complete(
                messages,
                temperature=temperature,
                max_tokens=max_tokens,
                stage=stage,
                paper_id=paper_id,
                **extra,
            )
        except Exception as exc:
            failed = Completion(text="", latency_s=time.perf_counter() - start, model=self.model)
            error = clean_text(f"{type(exc).__name__}: {exc}")
            self._log(stage, paper_id, failed, cached=False, error=error)
            raise
        # Outside text enters here: no NUL (PostgreSQL refuses it) or terminal escape goes on
        # to the cache, the stored analyses, the notes or a terminal.
        completion.text = clean_text(completion.text)
        usable = accept is None or accept(completion)
        if completion.text.strip() and usable:
            self._store(key, completion)
        self._log(stage, paper_id, completion, cached=False, error="" if usable else REJECTED)
        return completion

    def _stored_answer(
        self, key: str, stage: str, paper_id: str | None, accept: Accept | None, start: float
    ) -> Completion | None:
        """The stored answer for `key` that `accept` takes, or None when the model is to be
        called; NotStored when only stored answers may be used and there is none."""
        if self.only_stored:
            hit = self._cached(key)
            if hit is None or (accept is not None and not accept(hit)):
                raise NotStored(f"no stored answer for this {stage or 'call'}; it would take a model call")
            hit.latency_s = time.perf_counter() - start
            return hit
        if not self.use_cache:
            return None
        hit = self._cached(key)
        if hit is None or (accept is not None and not accept(hit)):
            return None
        hit.latency_s = time.perf_counter() - start
        self._log(stage, paper_id, hit, cached=True)
        return hit

    def _cached(self, key: str) -> Completion | None:
        answer = self.calls.cached(key)
        if answer is None:
            return None
        answer["text"] = clean_text(answer["text"])  # stored before replies were cleaned
        return Completion(cached=True, **answer)

    def _store(self, key: str, completion: Completion) -> None:
        self.calls.remember(
            key,
            {
                "model": self.model,
                "text": completion.text,
                "prompt_tokens": completion.prompt_tokens,
                "completion_tokens": completion.completion_tokens,
                "logprobs": completion.logprobs,
            },
        )

    def _log(
        self, stage: str, paper_id: str | None, completion: Completion, *, cached: bool, error: str = ""
    ) -> None:
        # A cache hit spent no server time: its row carries no timings.
        spent = not cached
        self.calls.log(
            stage=stage,
            role=self.role,
            model=self.model,
            paper_id=paper_id,
            prompt_tokens=completion.prompt_tokens,
            completion_tokens=completion.completion_tokens,
            latency_s=completion.latency_s,
            cached=cached,
            error=error,
            prompt_s=completion.prompt_s if spent else None,
            generation_s=completion.generation_s if spent else None,
            cached_prompt_tokens=completion.cached_prompt_tokens if spent else None,
            drafted_tokens=completion.drafted_tokens if spent else None,
            accepted_tokens=completion.accepted_tokens if spent else None,
        )
