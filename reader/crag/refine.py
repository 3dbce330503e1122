"""Refine: from each kept chunk keep only the sentences that help answer the question.

The model never rewrites anything: it sees numbered sentences and answers with
numbers, and the kept sentences are copied verbatim from the chunk (with its
whitespace runs collapsed, as PDF text breaks lines mid-sentence). A chunk
where no sentence survives is dropped. When the reply has no usable numbers
(or the call fails) the chunk is kept whole: it already passed the grader,
and dropping evidence because of a formatting slip would be worse.

When the model answers "none" for a chunk the grader judged relevant, the two
disagree; then the sentences that share a content word with the question are
kept (still verbatim), and the chunk is dropped only if there are none. The
embedded 1.5B model answered "none" for the one passage that listed the
baselines asked about, which made the whole answer "not found".
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from concurrent.futures import ThreadPoolExecutor

from reader.text.split import join_selected, split_sentences
from reader.crag.evidence import Candidate
from reader.llm.base import LLM
from reader.prompts import messages

_NONE = re.compile(r"\b(?:none|no sentences?|nothing)\b|无|没有", re.IGNORECASE)
_NUMBER_OR_RANGE = re.compile(r"(\d+)(?:\s*[-–]\s*(\d+))?")


def normalise_space(text: str) -> str:
    return " ".join(text.split())


def parse_selection(text: str, n_sentences: int) -> list[int] | None:
    """1-based sentence numbers in order, [] for "none", None when the reply is unusable."""
    picked: set[int] = set()
    for first, last in _NUMBER_OR_RANGE.findall(text):
        picked.update(range(int(first), int(last or first) + 1))
    numbers = sorted(n for n in picked if 1 <= n <= n_sentences)
    if numbers:
        return numbers
    if _NONE.search(text):
        return []
    return None


_QUESTION_WORDS = frozenset(
    "which what how when where who whom whose why doe does do did against paper papers "
    "author authors use used using we they their this that".split()
)


def question_terms(question: str) -> set[str]:
    from reader.index.tokenize import tokenize

    return {t for t in tokenize(question) if len(t) >= 3 and t not in _QUESTION_WORDS}


def lexical_selection(question: str, sentences: Sequence[str]) -> list[int]:
    """1-based numbers of the sentences sharing a content word (stemmed) with the question."""
    from reader.index.tokenize import tokenize

    terms = question_terms(question)
    return [n for n, sentence in enumerate(sentences, 1) if terms & set(tokenize(sentence))]


def refine_one(question: str, candidate: Candidate, llm: LLM) -> Candidate | None:
    """The candidate with `refined` set, or None when nothing in it is relevant."""
    text = normalise_space(candidate.text)
    sentences = split_sentences(text)
    if len(sentences) <= 1:
        candidate.refined, candidate.refine_note = text, "single sentence, kept whole"
        return candidate if text else None
    conversation = messages("refine", question=question, sentences=sentences)
    try:
        reply = llm.complete(conversation, temperature=0.0, max_tokens=40,
                             stage="crag-refine", paper_id=candidate.paper_id).text
    except Exception as exc:
        candidate.refined = text
        candidate.refine_note = f"refine call failed ({type(exc).__name__}), kept whole"
        return candidate
    numbers = parse_selection(reply, len(sentences))
    if numbers is None:
        candidate.refined, candidate.refine_note = text, "unreadable selection, kept whole"
        return candidate
    note = f"kept sentences {numbers} of {len(sentences)}"
    if not numbers:
        numbers = lexical_selection(question, sentences)
        if not numbers:
            return None
        note = f"refiner said none; kept sentences {numbers} of {len(sentences)} sharing question terms"
    candidate.refined = join_selected(sentences, numbers)
    candidate.refine_note = note
    return candidate


def refine_all(question: str, candidates: Sequence[Candidate], llm: LLM, *,
               max_workers: int = 4) -> list[Candidate]:
    """Refine concurrently; returns the surviving candidates in input order."""
    if not candidates:
        return []
    with ThreadPoolExecutor(max_workers=max(1, min(max_workers, len(candidates)))) as pool:
        refined = list(pool.map(lambda c: refine_one(question, c, llm), candidates))
    return [c for c in refined if c is not None]
