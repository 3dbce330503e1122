"""The one interface every stage that thinks goes through.

An LLM is anything with a `model` name and a `complete()` method. `stage` and
`paper_id` only label the call for the call log and `reader stats`.

What a model can do is an attribute of the LLM object, not a guess from its
name: an LLM may carry `capabilities` (a `Capabilities`, e.g. `SMALL_LOCAL`),
`supports_logprobs` and `supports_accept`; `capabilities_of(llm)`,
`supports_logprobs(llm)` and `supports_accept(llm)` read them with defaults for
an LLM of the user's own that has none of them.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Protocol


@dataclass(frozen=True)
class Capabilities:
    """How much a generator is given and asked for when it writes a deep read (reader.deepread).

    context_tokens: paper tokens put into the critique/synthesis prompt (the paper's
        sections are chosen to fit when it is longer);
    target_words: the length each critique/synthesis is asked to have.
    """

    context_tokens: int
    target_words: int


# The embedded 1.5B model: a short context and short drafts, which it can fill
# without drifting from the paper.
SMALL_LOCAL = Capabilities(context_tokens=3000, target_words=450)
# An OpenAI-compatible endpoint (and any LLM that does not say): more of the paper, longer drafts.
ENDPOINT = Capabilities(context_tokens=12000, target_words=900)


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


def supports_accept(llm) -> bool:
    """Does this LLM take `complete(..., accept=check)`? The call log and cache (reader.llm.logged)
    do: a reply for which `check(completion)` is false is neither cached nor served from the cache.
    A bare LLM of the user's own need not, and is then never passed the keyword."""
    return bool(getattr(llm, "supports_accept", False))


def capabilities_of(llm) -> Capabilities:
    """The LLM's `capabilities`; ENDPOINT for one that has none (an LLM of the user's own need not)."""
    capabilities = getattr(llm, "capabilities", None)
    return capabilities if isinstance(capabilities, Capabilities) else ENDPOINT


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
