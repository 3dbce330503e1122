"""A deterministic LLM for tests and dry runs.

Answers come from a queue (`enqueue`) or, when the queue is empty, from
`respond(prompt_text) -> str` (`respond(prompt_text, stage) -> str` with
`with_stage=True`). Every call is recorded in `history`.
`latency_s` sleeps per call so benchmarks can model a remote endpoint.
`capabilities` (default ENDPOINT, as for an LLM that does not say) sizes a
deep read as for a real model, e.g. SMALL_LOCAL to test the embedded model's.
"""

from __future__ import annotations

import threading
import time
from collections import deque
from collections.abc import Callable

from reader.llm.base import ENDPOINT, Capabilities, Completion, Message
from reader.text.tokens import estimate_tokens


class ScriptedLLM:
    def __init__(
        self,
        respond: Callable[[str], str] | None = None,
        *,
        model: str = "scripted",
        latency_s: float = 0.0,
        capabilities: Capabilities = ENDPOINT,
        with_stage: bool = False,
    ):
        self.model = model
        self.capabilities = capabilities
        self.supports_sampling = True
        self.respond = respond
        self.with_stage = with_stage
        self.latency_s = latency_s
        self.history: list[dict] = []
        self._queue: deque[str | Exception] = deque()
        self._lock = threading.Lock()

    def enqueue(self, *answers: str | Exception) -> ScriptedLLM:
        """Queue answers; an Exception instance is raised instead of answering."""
        with self._lock:
            self._queue.extend(answers)
        return self

    @property
    def calls(self) -> int:
        return len(self.history)

    def complete(
        self,
        messages: list[Message],
        *,
        temperature: float = 0.0,
        max_tokens: int = 512,
        stage: str = "",
        paper_id: str | None = None,
        sampling: dict | None = None,
    ) -> Completion:
        prompt = "\n\n".join(m["content"] for m in messages)
        with self._lock:
            answer = self._queue.popleft() if self._queue else None
            self.history.append(
                {
                    "messages": messages,
                    "prompt": prompt,
                    "stage": stage,
                    "paper_id": paper_id,
                    "temperature": temperature,
                    "max_tokens": max_tokens,
                    "sampling": sampling,
                }
            )
        start = time.perf_counter()
        if self.latency_s:
            time.sleep(self.latency_s)
        if isinstance(answer, Exception):
            raise answer
        if answer is None:
            if self.respond is None:
                raise RuntimeError("ScriptedLLM: queue is empty and no respond function was given")
            answer = self.respond(prompt, stage) if self.with_stage else self.respond(prompt)
        return Completion(
            text=answer,
            prompt_tokens=estimate_tokens(prompt),
            completion_tokens=estimate_tokens(answer),
            latency_s=time.perf_counter() - start,
            model=self.model,
        )
