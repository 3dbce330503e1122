"""Grade each retrieved chunk for relevance to the question, concurrently.

The grader is asked for YES/NO and a one-line reason, but models answer in
many shapes, so parsing is lenient (see `parse_grade`). An explicit score
always wins (`Score: 0.75`, `7/10`, `8` on a 1-10 scale); otherwise a leading
YES/NO (0.8/0.2) or the words "relevant"/"irrelevant" decide; anything else is
0.4 and marked ambiguous — deliberately below the 0.6 threshold, so an
unreadable grade never lets a chunk into the answer on its own.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass

from reader.llm.base import LLM, user
from reader.prompts import render

RELEVANT_SCORE = 0.8
IRRELEVANT_SCORE = 0.2
AMBIGUOUS_SCORE = 0.4
MAX_REASON_CHARS = 240

_NUMBER = r"(\d+(?:\.\d+)?|\.\d+)"
_SCORE_LABEL = re.compile(
    r"\b(?:score|rating|relevance(?:\s+score)?|分数|评分)\s*[:：=]?\s*\**\s*" + _NUMBER
    + r"(?:\s*/\s*" + _NUMBER + r")?",
    re.IGNORECASE,
)
_FRACTION = re.compile(r"(?<![\d.])" + _NUMBER + r"\s*/\s*" + _NUMBER + r"(?![\d.])")
# A line that opens with a bare number: "8", "0.75", "8.", "7 - mostly relevant".
# "1. The passage..." is a list number, not a score, so a trailing dot only counts at line end.
_LEADING_NUMBER = re.compile(r"^\s*\**\s*" + _NUMBER + r"\s*\**\s*(?:[.)]?\s*$|[,:–—-]|\s+[-–—:(])")
_LEADING_SCORE_TEXT = re.compile(r"^\s*\**\s*" + _NUMBER + r"(?:\s*/\s*" + _NUMBER + r")?(?=\s*(?:$|[,:–—-]))")
_IRRELEVANT = re.compile(
    r"\birrelevant\b|\bnot\s+(?:at\s+all\s+|very\s+|directly\s+)?relevant\b|\bunrelated\b|不相关|无关",
    re.IGNORECASE,
)
_RELEVANT = re.compile(r"\brelevant\b|相关", re.IGNORECASE)
# The prompt asks for YES/NO first: the embedded 1.5B model answered "Score: 0.5" to every
# passage when asked for a score, but tells relevant from unrelated passages with YES/NO.
_VERDICT_WORD = re.compile(r"^\W*(yes|no)\b\W*", re.IGNORECASE)
_REASON_LABEL = re.compile(r"^\s*[-*]?\s*\**\s*(?:reason(?:ing)?|because|理由|原因)\s*\**\s*[:：]\s*",
                           re.IGNORECASE)


@dataclass
class Grade:
    chunk_key: str  # "chunk:<id>" or "external:<n>"; see pipeline.Candidate.key
    score: float
    ambiguous: bool
    reasoning: str
    error: str = ""


def _normalise(value: float, scale: float | None = None) -> float | None:
    """A score as a fraction of 1: 0.75, 7/10, 8 (on a 1-10 scale), 85 (percent)."""
    if scale is not None:
        if scale <= 0:
            return None
        value = value / scale
    elif value > 10:
        if value > 100:
            return None
        value = value / 100
    elif value > 1:
        value = value / 10
    return min(1.0, max(0.0, value))


def _explicit_score(text: str) -> float | None:
    match = _SCORE_LABEL.search(text)
    if match:
        scale = float(match.group(2)) if match.group(2) else None
        score = _normalise(float(match.group(1)), scale)
        if score is not None:
            return score
    match = _FRACTION.search(text)
    if match:
        score = _normalise(float(match.group(1)), float(match.group(2)))
        if score is not None:
            return score
    first_line = next((line for line in text.splitlines() if line.strip()), "")
    match = _LEADING_NUMBER.match(first_line)
    if match:
        return _normalise(float(match.group(1)))
    return None


def _reasoning(text: str) -> str:
    lines = [line.strip() for line in text.splitlines() if line.strip()]
    for line in lines:
        if _REASON_LABEL.match(line):
            return _REASON_LABEL.sub("", line)[:MAX_REASON_CHARS]
    for line in lines:
        line = _VERDICT_WORD.sub("", line)
        rest = _LEADING_SCORE_TEXT.sub("", _SCORE_LABEL.sub("", line)).strip(" *:-–—.,")
        if rest:
            return rest[:MAX_REASON_CHARS]
    return ""


def parse_grade(text: str) -> tuple[float, bool, str]:
    """(score in [0, 1], ambiguous, one-line reasoning) from whatever the grader wrote."""
    reasoning = _reasoning(text)
    score = _explicit_score(text)
    if score is not None:
        return score, False, reasoning
    first_line = next((line for line in text.splitlines() if line.strip()), "")
    verdict = _VERDICT_WORD.match(first_line)
    if verdict:
        score = RELEVANT_SCORE if verdict.group(1).lower() == "yes" else IRRELEVANT_SCORE
        return score, False, reasoning or verdict.group(1).upper()
    if _IRRELEVANT.search(text):
        return IRRELEVANT_SCORE, False, reasoning
    if _RELEVANT.search(text):
        return RELEVANT_SCORE, False, reasoning
    return AMBIGUOUS_SCORE, True, reasoning or "unreadable grade"


def grade_prompt(question: str, passage: str) -> str:
    return render("grade", question=question, passage=passage)


def grade_one(question: str, key: str, passage: str, llm: LLM, *,
              paper_id: str | None = None) -> Grade:
    try:
        completion = llm.complete(user(grade_prompt(question, passage)), temperature=0.0,
                                  max_tokens=80, stage="crag-grade", paper_id=paper_id)
    except Exception as exc:  # one failed grade must not sink the question
        return Grade(key, AMBIGUOUS_SCORE, True, "grader call failed", error=f"{type(exc).__name__}: {exc}")
    score, ambiguous, reasoning = parse_grade(completion.text)
    return Grade(key, score, ambiguous, reasoning)


def grade_passages(
    question: str,
    passages: Sequence[tuple[str, str, str | None]],
    llm: LLM,
    *,
    max_workers: int = 4,
) -> list[Grade]:
    """Grade (key, text, paper_id) passages concurrently; results keep the input order."""
    if not passages:
        return []
    with ThreadPoolExecutor(max_workers=max(1, min(max_workers, len(passages)))) as pool:
        futures = [pool.submit(grade_one, question, key, text, llm, paper_id=paper_id)
                   for key, text, paper_id in passages]
        return [f.result() for f in futures]
