"""The one interface every stage that thinks goes through.

An LLM is anything with a `model` name and a `complete()` method. `stage` and
`paper_id` only label the call for the call log and `reader stats`.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Protocol



@dataclass
class Completion:
    text: str
    prompt_tokens: int = 0
    completion_tokens: int = 0
    latency_s: float = 0.0
    model: str = ""
    cached: bool = False
    # Per generated token: {"token": str, "logprob": float, "top": {token: logprob}}, when the
    # caller asked for log-probabilities and the model gave them; None otherwise.
    logprobs: list[dict] | None = None


Message = dict  # {"role": "system" | "user" | "assistant", "content": str}


class LLM(Protocol):
    model: str

    def complete(
        self,
        messages: list[Message],
        *,
        temperature: float = 0.0,
        max_tokens: int = 512,
        stage: str = "",
        paper_id: str | None = None,
    ) -> Completion: ...


def supports_logprobs(llm) -> bool:
    """Does this LLM take `complete(..., logprobs=k)`? (An LLM of the user's own need not.)"""
    return bool(getattr(llm, "supports_logprobs", False))


def token_logprobs(content: list) -> list[dict]:
    """OpenAI-style `choices[0].logprobs.content` (dicts or objects) as plain dicts."""
    def get(item, name):
        return item.get(name) if isinstance(item, dict) else getattr(item, name, None)

    out = []
    for item in content or []:
        top = {get(t, "token"): float(get(t, "logprob")) for t in (get(item, "top_logprobs") or [])}
        out.append({"token": get(item, "token") or "", "logprob": float(get(item, "logprob") or 0.0),
                    "top": top})
    return out


def user(content: str) -> list[Message]:
    """A one-message conversation, the common case."""
    return [{"role": "user", "content": content}]
