"""A tiny in-memory library, a keyword search over it and a scripted LLM that plays
every CRAG role, shared by the CRAG tests."""

from __future__ import annotations

import re
import threading
import time

from reader.index.hits import SearchHit
from reader.llm.scripted import ScriptedLLM

PAPER_A = "a" * 64
PAPER_B = "b" * 64

CHUNKS = [
    # (chunk_id, paper_id, page, text)
    (1, PAPER_A, 1, "We introduce a topic model for citation graphs. It scales to large corpora."),
    (
        2,
        PAPER_A,
        5,
        "We compare against two baselines. The baselines are LDA and TF-IDF retrieval. "
        "Training took three days.",
    ),
    (3, PAPER_A, 6, "Table 2 reports baselines results: our model beats LDA by 4 points."),
    (4, PAPER_A, 7, "Limitations: the corpus is English only."),
    (5, PAPER_B, 3, "The wheat samples were grown in a greenhouse at 20 degrees."),
    (6, PAPER_B, 4, "Metabolite profiles were measured with GC-MS on day 10."),
]
TITLES = {PAPER_A: "Citation Topic Models", PAPER_B: "Wheat Metabolomics"}
WORD = re.compile(r"[a-z0-9-]+")


def words(text: str) -> set[str]:
    return {w for w in WORD.findall(text.lower()) if len(w) > 2}


class FakeSearch:
    """Keyword-overlap search that records its calls and how many ran at once."""

    def __init__(self, chunks=CHUNKS, delay_s: float = 0.0, top_k: int = 3):
        self.chunks = chunks
        self.delay_s = delay_s
        self.top_k = top_k
        self.calls: list[tuple[str, str | None]] = []
        self.peak = 0
        self._in_flight = 0
        self._lock = threading.Lock()

    def __call__(self, query: str, paper_id: str | None) -> list[SearchHit]:
        with self._lock:
            self.calls.append((query, paper_id))
            self._in_flight += 1
            self.peak = max(self.peak, self._in_flight)
        time.sleep(self.delay_s)
        q = words(query)
        scored = []
        for chunk_id, pid, page, text in self.chunks:
            if paper_id is not None and pid != paper_id:
                continue
            overlap = len(q & words(text))
            if overlap:
                scored.append((overlap, chunk_id, pid, page, text))
        scored.sort(key=lambda s: (-s[0], s[1]))
        with self._lock:
            self._in_flight -= 1
        return [
            SearchHit(
                chunk_id=cid,
                paper_id=pid,
                text=text,
                section="",
                page_start=page,
                page_end=page,
                score=1 / (60 + rank),
                bm25_rank=rank,
            )
            for rank, (_, cid, pid, page, text) in enumerate(scored[: self.top_k], 1)
        ]


def passage_of(prompt: str) -> str:
    match = re.search(r"<passage[^>]*>\n(.*?)\n</passage>", prompt, re.S)
    return match.group(1) if match else ""


def passages_of(prompt: str) -> list[str]:
    return re.findall(r"<passage[^>]*>\n(.*?)\n</passage>", prompt, re.S)


def role_of(prompt: str) -> str:
    if "Passage from a research paper" in prompt:
        return "grade"
    if "Passages from research papers" in prompt:
        return "grade-batch"
    if "passage by passage" in prompt:
        return "refine-batch"
    if "alternative search queries" in prompt:
        return "rewrite"
    if "Evidence from research papers" in prompt:
        return "answer"
    return "other"


class CragLLM(ScriptedLLM):
    """Grades by keywords: a passage containing any of `relevant_words` scores 0.9,
    one containing any `ambiguous_words` gets an unreadable grade, others 0.1."""

    def __init__(
        self,
        relevant_words=(),
        ambiguous_words=(),
        rewrites=("q1", "q2", "q3"),
        answer="They compare against LDA and TF-IDF [1].",
        refine_reply=None,
        **kw,
    ):
        self.relevant_words = [w.lower() for w in relevant_words]
        self.ambiguous_words = [w.lower() for w in ambiguous_words]
        self.rewrites = rewrites
        self.answer = answer
        self.refine_reply = refine_reply
        super().__init__(self._respond, **kw)

    def _grade(self, passage: str) -> str:
        passage = passage.lower()
        if any(w in passage for w in self.relevant_words):
            return "Score: 0.9\nReason: states it directly"
        if any(w in passage for w in self.ambiguous_words):
            return "hmm, hard to say"
        return "Score: 0.1\nReason: unrelated"

    def _relevant_numbers(self, prompt: str, number: str) -> list[str]:
        return [
            n
            for n, s in re.findall(rf"^\[({number})\] (.*)$", prompt, re.M)
            if any(w in s.lower() for w in self.relevant_words)
        ]

    def _respond(self, prompt: str) -> str:
        role = role_of(prompt)
        if role == "grade":
            return self._grade(passage_of(prompt))
        if role == "grade-batch":  # the same grade for each passage, on its numbered line
            return "\n".join(
                f"[{n}] " + self._grade(p).replace("\nReason: ", " - ")
                for n, p in enumerate(passages_of(prompt), 1)
            )
        if role == "refine-batch":
            if self.refine_reply is not None:
                return self.refine_reply
            return ", ".join(self._relevant_numbers(prompt, r"\d+\.\d+")) or "none"
        if role == "rewrite":
            return "\n".join(f"{n}. {q}" for n, q in enumerate(self.rewrites, 1))
        if role == "answer":
            return self.answer
        raise AssertionError(f"unexpected prompt: {prompt[:80]}")

    def stages(self) -> list[str]:
        return [call["stage"] for call in self.history]


def always_grounded(answer, evidence, verifier):
    return True, "all sentences supported"
