"""Generate the answer from the refined evidence only.

When nothing was kept the answer is the shared "not found" sentinel and the
generator is not called at all. The same sentinel is written into the prompt,
so a model that finds the evidence insufficient answers with it too, and
`is_not_found` recognises it in either language.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field

from reader.crag.evidence import Candidate
from reader.llm.base import LLM, Completion
from reader.text.tokens import estimate_tokens
from reader.prompts import language_instruction, messages

NOT_FOUND = "Not found in the papers."
NOT_FOUND_ZH = "未在论文中找到。"
_CJK = re.compile(r"[\u4e00-\u9fff]")
_NOT_FOUND_LOOSE = re.compile(r"not found in the papers|未在论文中找到", re.IGNORECASE)


def question_language(question: str) -> str:
    return "zh" if _CJK.search(question) else "en"


def not_found_sentinel(question: str) -> str:
    return NOT_FOUND_ZH if question_language(question) == "zh" else NOT_FOUND


def is_not_found(answer: str) -> bool:
    """The model refused with the sentinel (a short reply that is essentially only it)."""
    stripped = answer.strip().strip("\"'*` ")
    match = _NOT_FOUND_LOOSE.search(stripped)
    return bool(match) and len(stripped) <= len(match.group(0)) + 40


def select_within_budget(evidence: Sequence[Candidate], budget_tokens: int) -> list[Candidate]:
    """Highest-graded first until the token budget is spent; the best one always goes in."""
    chosen: list[Candidate] = []
    spent = 0
    for candidate in sorted(evidence, key=lambda c: (-c.score, -c.fused_score)):
        cost = estimate_tokens(candidate.refined or candidate.text)
        if chosen and spent + cost > budget_tokens:
            continue
        chosen.append(candidate)
        spent += cost
    return chosen


@dataclass
class Answer:
    text: str
    evidence: list[Candidate] = field(default_factory=list)  # in citation order [1], [2], ...
    not_found: bool = False
    completion: Completion | None = None


def generate_answer(
    question: str,
    evidence: Sequence[Candidate],
    llm: LLM,
    *,
    label: Callable[[Candidate], str],
    budget_tokens: int = 1500,
    max_sentences: int = 6,
    paper_id: str | None = None,
) -> Answer:
    sentinel = not_found_sentinel(question)
    chosen = select_within_budget(evidence, budget_tokens)
    if not chosen:
        return Answer(sentinel, not_found=True)
    items = [
        {"label": label(c), "external": c.external, "score": c.score,
         "reasoning": c.grade.reasoning if c.grade else "", "text": c.refined or c.text}
        for c in chosen
    ]
    language = language_instruction(question_language(question))
    from_elsewhere = any(c.external or (paper_id is not None and c.paper_id != paper_id) for c in chosen)
    conversation = messages("answer", question=question, evidence=items, not_found=sentinel,
                            language=language, max_sentences=max_sentences, from_elsewhere=from_elsewhere)
    completion = llm.complete(conversation, temperature=0.1, max_tokens=400,
                              stage="crag-answer", paper_id=paper_id)
    text = completion.text.strip()
    if not text or is_not_found(text):
        return Answer(sentinel, evidence=chosen, not_found=True, completion=completion)
    return Answer(text, evidence=chosen, completion=completion)
