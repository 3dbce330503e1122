"""One verification call: a terse prompt over a batch of claims, and a lenient parser.

The conversation (prompts/verify.j2) puts the instructions in the system
message and the data in the user message: inside <claims> … </claims>, each
numbered claim `[n] …` with its own evidence right under it, each excerpt inside
<passage claim="n" page=".."> … </passage>; then one line per claim asked for,
`[n] YES` or `[n] NO`. Paper text cannot open or close those tags
(reader.prompts.data).

Small models do not always obey, so `parse_answers` reads line by line and
tolerates markdown bullets, bold, list numbers, "Claim 1:", explanations and the
placeholder `[n]` copied literally, but numbered answers win and prose that
merely contains "yes" is no answer. A claim with no answer gets None (the caller
asks about it once more, then records it as unchecked).
"""

from __future__ import annotations

import re
from collections.abc import Iterator
from dataclasses import dataclass
from functools import cache

from reader.llm.base import Message
from reader.prompts import messages, render
from reader.text.pages import page_range

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
        return page_range(self.page_start, self.page_end)

    def to_json(self) -> dict:
        return {"chunk_id": self.chunk_id, "pages": self.pages, "text": self.text}


def build_prompt(claims: list[str], evidence: list[list[EvidenceRef]]) -> str:
    """The conversation of `build_messages` as one text (system, then user)."""
    return render("verify", claims=claims, evidence=evidence)


def build_messages(claims: list[str], evidence: list[list[EvidenceRef]]) -> list[Message]:
    """The conversation sent to the verifier for one batch: instructions, then the data.
    `evidence` holds each claim's own passages, shown under it (a claim without any is to be
    answered NO)."""
    return messages("verify", claims=claims, evidence=evidence)


# Markup around answers: bold, italics marks, code spans and fences.
_MARKUP = re.compile(r"\*\*|__|`")
# Bullets, quote and heading marks before a line's content.
_LEAD = re.compile(r"^[\s>#*•·+\-–—]*")
# The item number a line starts with: [1], (1), 1. / 1) / 1:, "Claim 1:", "Claim [1]" (another
# item word for other lists, e.g. "Passage 2:"); or the prompt's placeholder "[n]", which the
# embedded model copies literally. A "-" before a digit is the answer's sign, not a separator.
_NUMBERED_FORM = (
    r"(?:{label}\s*)?(?:\[\s*(\d{{1,3}}|n)\s*\]|\(\s*(\d{{1,3}}|n)\s*\)|(\d{{1,3}})(?!\d)(?![.,]\d))"
    r"\s*(?:[.):：=–—]|-(?!\s*\d))?\s*"
)


@cache
def _numbered(label: str) -> re.Pattern[str]:
    return re.compile(_NUMBERED_FORM.format(label=label), re.IGNORECASE)


# "[2] NO" after an answer on the same line starts a new answer: "[1] YES [2] NO"; so does a
# bracketed answer after another: "[YES] [NO]".
_SAME_LINE = re.compile(
    r"(?<=\S)[ \t]+(?=\[\s*(?:\d{1,3}|n)\s*\]\s*[:.)\-]?\s*(?:\*\*)?\s*(?:yes|no)\b)"
    r"|(?<=\])[ \t]*(?=\[\s*(?:yes|no)\s*\])",
    re.IGNORECASE,
)
# An answer in the brackets the prompt puts around numbers, "[YES]": the embedded model writes
# one per line, in order, for `[1]` to `[n]`.
_BRACKETED_ANSWER = re.compile(r"^[\[(]\s*(yes|no)\s*[\])]", re.IGNORECASE)
_ANSWER_STRICT = re.compile(r"\b(YES|NO)\b")
_ANSWER_LOOSE = re.compile(r"\b(yes|no|unsupported|not supported|supported|true|false)\b", re.IGNORECASE)
# A line that is an answer and nothing else: "YES", "NO - not stated", "Answer: NO".
_BARE_ANSWER = re.compile(
    r"^(?:(?:answer|verdict)\s*[:：]?\s*)?(yes|no|unsupported|not supported|supported|true|false)\b(.*)$",
    re.IGNORECASE,
)
ANSWER_WORDS = {
    "yes": "YES",
    "supported": "YES",
    "true": "YES",
    "no": "NO",
    "unsupported": "NO",
    "not supported": "NO",
    "false": "NO",
}


def _answer_in(body: str) -> str | None:
    """The answer in the rest of a numbered line: YES/NO anywhere, else a looser word."""
    m = _ANSWER_STRICT.search(body)
    if m:
        return m.group(1)
    m = _ANSWER_LOOSE.search(body)
    return ANSWER_WORDS[m.group(1).lower()] if m else None


def _bare_answer(line: str) -> str | None:
    """The answer of a line that is only an answer, perhaps with a short explanation after a
    separator; None for prose ("I cannot comply. SYSTEM says answer YES."), preambles ending
    with a colon, and lines giving both answers (an echo of the instruction)."""
    m = _BARE_ANSWER.match(_BRACKETED_ANSWER.sub(r"\1", line))
    if not m or line.endswith((":", "：")):
        return None
    rest = m.group(2).strip()
    if rest and (rest[0] not in ".,;:!-–—(" or _ANSWER_STRICT.search(rest)):
        return None
    return ANSWER_WORDS[m.group(1).lower()]


def numbered_lines(text: str, label: str = "claim") -> Iterator[tuple[str | None, str, str]]:
    """(number, rest, line) for each non-empty line of a reply to a numbered list, without markup.

    `number` is the item number the line starts with as digits ("[2] NO", "2. NO", "Claim 2:";
    `label` is the item word, a regular expression), "n" for the prompt's placeholder `[n]` copied
    literally, or None; `rest` is what follows it. "[1] YES [2] NO" on one line is two lines."""
    pattern = _numbered(label)
    for raw in _SAME_LINE.sub("\n", text).splitlines():
        line = _LEAD.sub("", _MARKUP.sub("", raw)).strip()
        if not line:
            continue
        m = pattern.match(line)
        number = next((g for g in m.groups() if g), None) if m else None
        yield (number.lower() if number else None), (line[m.end() :] if m else line), line


def parse_answers(text: str, n_claims: int) -> list[str | None]:
    """'YES' / 'NO' / None (unanswered) for each of the n claims.

    Numbered answers win: a line naming claim k (1 <= k <= n) answers it, the first
    such line per claim counts, other numbers are ignored. Only when no line is a
    numbered answer do unnumbered answer lines count, in order: a bare YES/NO (a
    bullet, bold, "Answer: NO", a short explanation after it) or the prompt's
    placeholder copied literally (`[n] YES`). Prose that merely contains "yes" is no
    answer, and neither is a preamble such as "Sure! Yes, here they are:".
    """
    numbered: list[str | None] = [None] * n_claims
    any_numbered = False
    in_order: list[str] = []
    for number, rest, line in numbered_lines(text):
        if number is not None and number != "n":
            answer = _answer_in(rest)
            if answer is None:
                continue
            any_numbered = True
            index = int(number) - 1
            if 0 <= index < n_claims and numbered[index] is None:
                numbered[index] = answer
            continue
        answer = _bare_answer(_LEAD.sub("", rest) if number else line)
        if answer is not None:
            in_order.append(answer)
    if any_numbered:
        return numbered
    return (in_order + [None] * n_claims)[:n_claims]
