"""The call log and the response cache, around any LLM.

Every call becomes one `LLMCall` row (stage, role, model, paper, tokens,
latency, cached flag, error). Answers are cached in `LLMCacheEntry` under a
key made of the model, the full messages and the parameters, so re-running
finished work costs no LLM calls. With use_cache=False the cache is not read,
but fresh answers still replace the stored ones.

Stages call from many threads, so each database write uses its own short session.
"""

from __future__ import annotations

import hashlib
import json
import time

from sqlalchemy.exc import IntegrityError

from reader.llm.base import Completion, Message, supports_logprobs
from reader.store.tables import LLMCacheEntry, LLMCall


def cache_key(model: str, messages: list[Message], temperature: float, max_tokens: int,
              logprobs: int = 0) -> str:
    params = {"model": model, "messages": messages, "temperature": float(temperature),
              "max_tokens": int(max_tokens)}
    if logprobs:
        params["logprobs"] = int(logprobs)
    payload = json.dumps(
        params,
        sort_keys=True, ensure_ascii=False, separators=(",", ":"),
    )
    return hashlib.sha256(payload.encode("utf-8")).hexdigest()


class LoggedLLM:
    def __init__(self, inner, role: str, db, use_cache: bool = True):
        self.inner = inner
        self.role = role
        self.db = db
        self.use_cache = use_cache

    @property
    def model(self) -> str:
        return self.inner.model

    @property
    def supports_logprobs(self) -> bool:
        return supports_logprobs(self.inner)

    def complete(
        self,
        messages: list[Message],
        *,
        temperature: float = 0.0,
        max_tokens: int = 512,
        stage: str = "",
        paper_id: str | None = None,
        logprobs: int = 0,
    ) -> Completion:
        start = time.perf_counter()
        logprobs = logprobs if self.supports_logprobs else 0
        key = cache_key(self.model, messages, temperature, max_tokens, logprobs)
        if self.use_cache:
            hit = self._cached(key)
            if hit is not None:
                hit.latency_s = time.perf_counter() - start
                self._log(stage, paper_id, hit, cached=True)
                return hit
        try:
            extra = {"logprobs": logprobs} if logprobs else {}
            completion = self.inner.complete(
                messages, temperature=temperature, max_tokens=max_tokens,
                stage=stage, paper_id=paper_id, **extra,
            )
        except Exception as exc:
            failed = Completion(text="", latency_s=time.perf_counter() - start, model=self.model)
            self._log(stage, paper_id, failed, cached=False, error=f"{type(exc).__name__}: {exc}")
            raise
        if completion.text.strip():
            self._store(key, completion)
        self._log(stage, paper_id, completion, cached=False)
        return completion

    # -- database ------------------------------------------------------------
    def _cached(self, key: str) -> Completion | None:
        with self.db() as session:
            entry = session.get(LLMCacheEntry, key)
            if entry is None:
                return None
            return Completion(
                text=entry.text,
                prompt_tokens=entry.prompt_tokens,
                completion_tokens=entry.completion_tokens,
                model=entry.model,
                cached=True,
                logprobs=entry.logprobs,
            )

    def _store(self, key: str, completion: Completion) -> None:
        values = dict(model=self.model, text=completion.text,
                      prompt_tokens=completion.prompt_tokens,
                      completion_tokens=completion.completion_tokens,
                      logprobs=completion.logprobs)
        with self.db() as session:
            entry = session.get(LLMCacheEntry, key)
            if entry is None:
                session.add(LLMCacheEntry(key=key, **values))
            else:
                for name, value in values.items():
                    setattr(entry, name, value)
            try:
                session.commit()
            except IntegrityError:  # another thread stored the same prompt first
                session.rollback()

    def _log(self, stage: str, paper_id: str | None, completion: Completion, *,
             cached: bool, error: str = "") -> None:
        with self.db() as session:
            session.add(LLMCall(
                stage=(stage or "")[:32],
                role=self.role[:16],
                model=self.model,
                paper_id=paper_id,
                prompt_tokens=completion.prompt_tokens,
                completion_tokens=completion.completion_tokens,
                latency_ms=completion.latency_s * 1000.0,
                cached=cached,
                error=error,
            ))
            session.commit()
