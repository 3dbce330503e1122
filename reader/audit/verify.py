"""One verification call: a terse prompt over a batch of claims, and a lenient parser.

The prompt (prompts/verify.j2) numbers the claims, shows the evidence and asks
for one line per claim, `[n] YES` or `[n] NO`. Small models do not always
obey, so `parse_answers` reads line by line and tolerates markdown bullets,
bold, extra words, lower case, missing and extra lines. A claim with no
answer gets None (the caller counts it as supported and records it as
unanswered).
"""

from __future__ import annotations

import re
from dataclasses import dataclass

from reader.llm.base import Message, user
from reader.prompts import render

NO_EVIDENCE_CHARS = 3000  # the fallback: this much of the paper's beginning


@dataclass
class EvidenceRef:
    """A passage shown to the verifier; chunk_id is None for the fallback text."""

    chunk_id: int | None
    page_start: int
    page_end: int
    text: str

    @property
    def pages(self) -> str:
        if self.page_start == self.page_end:
            return str(self.page_start)
        return f"{self.page_start}-{self.page_end}"

    def to_json(self) -> dict:
        return {"chunk_id": self.chunk_id, "pages": self.pages, "text": self.text}


def build_prompt(claims: list[str], evidence: list[EvidenceRef]) -> str:
    return render("verify", claims=claims, evidence=evidence)


def build_messages(claims: list[str], evidence: list[EvidenceRef]) -> list[Message]:
    """The conversation sent to the verifier for one batch."""
    return user(build_prompt(claims, evidence))


_NUMBERED = re.compile(r"^\W*(?:claim\s*)?[\[(]?\s*(\d{1,3})\s*[\]).:]", re.IGNORECASE)
_ANSWER_STRICT = re.compile(r"\b(YES|NO)\b")
_ANSWER_LOOSE = re.compile(r"\b(yes|no|unsupported|not supported|supported|true|false)\b", re.IGNORECASE)
_LOOSE_MAP = {"yes": "YES", "supported": "YES", "true": "YES",
              "no": "NO", "unsupported": "NO", "not supported": "NO", "false": "NO"}


def _answer_in(line: str) -> str | None:
    m = _ANSWER_STRICT.search(line)
    if m:
        return m.group(1)
    m = _ANSWER_LOOSE.search(line)
    return _LOOSE_MAP[m.group(1).lower()] if m else None


def parse_answers(text: str, n_claims: int) -> list[str | None]:
    """'YES' / 'NO' / None (unanswered) for each of the n claims.

    A numbered line answers that claim; an unnumbered line with an answer
    answers the claim after the last one answered. Numbers out of range and
    second answers to the same claim are ignored.
    """
    answers: list[str | None] = [None] * n_claims
    next_index = 0
    for raw in text.splitlines():
        line = raw.strip().replace("*", "").replace("`", "")
        if not line:
            continue
        numbered = _NUMBERED.match(line)
        body = line[numbered.end():] if numbered else line
        answer = _answer_in(body)
        if answer is None:
            continue
        index = int(numbered.group(1)) - 1 if numbered else next_index
        if 0 <= index < n_claims and answers[index] is None:
            answers[index] = answer
            next_index = index + 1
    return answers
