"""The one interface every stage that thinks goes through.

An LLM is anything with a `model` name and a `complete()` method. `stage` and
`paper_id` only label the call for the call log and `reader stats`.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Protocol

from reader.ingest.text import CJK_CHARS


@dataclass
class Completion:
    text: str
    prompt_tokens: int = 0
    completion_tokens: int = 0
    latency_s: float = 0.0
    model: str = ""
    cached: bool = False


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


def user(content: str) -> list[Message]:
    """A one-message conversation, the common case."""
    return [{"role": "user", "content": content}]


def estimate_tokens(text: str) -> int:
    """Rough token count without a tokenizer: ~4 characters per token for
    Latin script, ~1 per CJK character (ideographs, extension A, kana)."""
    cjk = len(CJK_CHARS.findall(text))
    return cjk + max(0, len(text) - cjk) // 4 + 1
