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

import math
from dataclasses import dataclass
from typing import Protocol


@dataclass(frozen=True)
class Capabilities:
    """How much a generator is given and asked for when it writes a deep read (reader.deepread).

    context_tokens: paper tokens put into the critique/synthesis prompt (the paper's
        sections are chosen to fit when it is longer);
    target_words: the length each critique/synthesis is asked to have.
    claim_evidence_chars: as a verifier, the evidence it is shown under each claim of a batch
        (reader.audit.evidence.claim_evidence).
    """

    context_tokens: int
    target_words: int
    claim_evidence_chars: int = 700


# The embedded 1.5B model: a short context and short drafts, which it can fill
# without drifting from the paper. On two cores it reads ~70 prompt tokens/s and writes
# ~14-23 tokens/s, and every sentence it writes costs a share of a verification call, so
# each word asked for costs about three times over (docs/design/llm.md, "Budgets").
# Its verify prompt reads 300 characters of evidence a claim: a third fewer prompt tokens than 700,
# the same fabrications caught (docs/measurements/audit.md, "A shorter verify prompt").
SMALL_LOCAL = Capabilities(context_tokens=2400, target_words=600, claim_evidence_chars=300)
# An OpenAI-compatible endpoint (and any LLM that does not say): more of the paper, longer drafts.
ENDPOINT = Capabilities(context_tokens=12000, target_words=1200)


@dataclass
class Completion:
    text: str
    prompt_tokens: int = 0
    completion_tokens: int = 0
    latency_s: float = 0.0
    model: str = ""
    cached: bool = False
    # Per generated token: {"token": str, "logprob": float | None, "top": {token: logprob}}, when
    # the caller asked for log-probabilities and the model gave them (None where its value was
    # unusable, see token_logprobs); None otherwise.
    logprobs: list[dict] | None = None
    # What the server says it spent (llama.cpp's `timings`, see server_timings): seconds
    # processing the prompt and generating, prompt tokens reused from its prompt cache, and the
    # tokens speculative decoding drafted and the model accepted of them (READER_SPECULATIVE).
    # None when the backend does not say (llama.cpp gives no draft figures for a reply that
    # drafted nothing).
    prompt_s: float | None = None
    generation_s: float | None = None
    cached_prompt_tokens: int | None = None
    drafted_tokens: int | None = None
    accepted_tokens: int | None = None
    calls: int = 1  # the calls this completion stands for (reader.deepread.writer joins one per heading)


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


def supports_sampling(llm) -> bool:
    """Does this LLM take `complete(..., sampling={...})`: llama.cpp's sampling controls by their
    server names (repeat_penalty, frequency_penalty, presence_penalty, dry_multiplier, min_p, ...)?
    The embedded model, an OpenAI-compatible endpoint and the call log do; an LLM of the user's own
    need not, and is then never passed the keyword."""
    return bool(getattr(llm, "supports_sampling", False))


def capabilities_of(llm) -> Capabilities:
    """The LLM's `capabilities`; ENDPOINT for one that has none (an LLM of the user's own need not)."""
    capabilities = getattr(llm, "capabilities", None)
    return capabilities if isinstance(capabilities, Capabilities) else ENDPOINT


LOGPROB_ROUNDING = 1e-6  # a log-probability this far above 0 is a rounded 0


def usable_logprob(value) -> float | None:
    """A log-probability as a float, or None when it is none: not a number, not finite, or above 0
    (a probability above 1). A server's "abc", null, 1000 or NaN is no log-probability (and -inf,
    probability 0, adds nothing and could not be stored as JSON)."""
    if isinstance(value, bool) or not isinstance(value, (int, float)):
        return None
    value = float(value)
    if not math.isfinite(value) or value > LOGPROB_ROUNDING:
        return None
    return min(value, 0.0)


def token_logprobs(content: list) -> list[dict]:
    """OpenAI-style `choices[0].logprobs.content` (dicts or objects) as plain dicts. A position
    keeps its token (readers find the answers by it); an unusable log-probability (usable_logprob)
    is None, and an alternative without a usable one is left out, so a reader falls back to the
    answer word there."""

    def get(item, name):
        return item.get(name) if isinstance(item, dict) else getattr(item, name, None)

    out = []
    for item in content if isinstance(content, list) else []:
        alternatives = get(item, "top_logprobs")
        top = {
            str(get(t, "token")): lp
            for t in (alternatives if isinstance(alternatives, list) else [])
            if get(t, "token") is not None and (lp := usable_logprob(get(t, "logprob"))) is not None
        }
        token = get(item, "token")
        out.append(
            {
                "token": token if isinstance(token, str) else "",
                "logprob": usable_logprob(get(item, "logprob")),
                "top": top,
            }
        )
    return out


def server_timings(timings) -> dict:
    """llama.cpp's `timings` object (the embedded server's and llama-server's replies:
    `prompt_n`, `prompt_ms`, `predicted_n`, `predicted_ms`, `cache_n`, ...) as the Completion
    fields prompt_s, generation_s and cached_prompt_tokens, and its `draft_n` and
    `draft_n_accepted` (only there when speculative decoding drafted something) as
    drafted_tokens and accepted_tokens; a field the server did not give (or gave as a negative
    or non-number) is None."""
    timings = timings if isinstance(timings, dict) else {}

    def number(name):
        value = timings.get(name)
        if isinstance(value, bool) or not isinstance(value, (int, float)) or not value >= 0:
            return None
        return value

    def count(name):
        value = number(name)
        return None if value is None or not math.isfinite(value) else int(value)

    prompt_ms, predicted_ms = number("prompt_ms"), number("predicted_ms")
    return {
        "prompt_s": None if prompt_ms is None else prompt_ms / 1000.0,
        "generation_s": None if predicted_ms is None else predicted_ms / 1000.0,
        "cached_prompt_tokens": count("cache_n"),
        "drafted_tokens": count("draft_n"),
        "accepted_tokens": count("draft_n_accepted"),
    }


def user(content: str) -> list[Message]:
    """A one-message conversation, the common case."""
    return [{"role": "user", "content": content}]
