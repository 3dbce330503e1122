"""The call log and the response cache as tables: what LoggedLLM writes through.

The LLM layer never imports the store; the façade hands a CallStore to each
LoggedLLM. Stages call from many threads, so each write uses its own short session.
"""

from __future__ import annotations

from sqlalchemy.exc import IntegrityError
from sqlalchemy.orm import sessionmaker

from reader.store.tables import LLMCacheEntry, LLMCall

CACHED_FIELDS = ("model", "text", "prompt_tokens", "completion_tokens", "logprobs")


class CallStore:
    def __init__(self, db: sessionmaker):
        self.db = db

    def cached(self, key: str) -> dict | None:
        """The stored answer for a cache key ({model, text, prompt_tokens, ...}), or None."""
        with self.db() as session:
            entry = session.get(LLMCacheEntry, key)
            return None if entry is None else {name: getattr(entry, name) for name in CACHED_FIELDS}

    def remember(self, key: str, answer: dict) -> None:
        """Store (or replace) the answer for a cache key; `answer` has CACHED_FIELDS."""
        values = {name: answer[name] for name in CACHED_FIELDS}
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

    def log(
        self,
        *,
        stage: str,
        role: str,
        model: str,
        paper_id: str | None,
        prompt_tokens: int,
        completion_tokens: int,
        latency_s: float,
        cached: bool,
        error: str = "",
        prompt_s: float | None = None,
        generation_s: float | None = None,
        cached_prompt_tokens: int | None = None,
        drafted_tokens: int | None = None,
        accepted_tokens: int | None = None,
    ) -> None:
        """One row of the call log (what `reader stats` sums). prompt_s, generation_s,
        cached_prompt_tokens, drafted_tokens and accepted_tokens are what the server reported
        spending (the last two: speculative decoding's drafted tokens and those the model kept),
        None when it did not say."""
        with self.db() as session:
            session.add(
                LLMCall(
                    stage=(stage or "")[:32],
                    role=role[:16],
                    model=model,
                    paper_id=paper_id,
                    prompt_tokens=prompt_tokens,
                    completion_tokens=completion_tokens,
                    latency_ms=latency_s * 1000.0,
                    cached=cached,
                    error=error,
                    prompt_ms=None if prompt_s is None else prompt_s * 1000.0,
                    generation_ms=None if generation_s is None else generation_s * 1000.0,
                    cached_prompt_tokens=cached_prompt_tokens,
                    drafted_tokens=drafted_tokens,
                    accepted_tokens=accepted_tokens,
                )
            )
            session.commit()
