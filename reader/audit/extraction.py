"""Numbers and comparisons checked by extraction, not by opinion.

A sentence that puts a number on a quantity, or compares two things, is turned into a cloze
over its best excerpt: the number (or the first name of the comparison, or its direction word)
is blanked, and the LLM is asked to fill the blank from the passage — a span to copy, or one of
two options, which small models do well. The answer is compared with the sentence by rule
(numbers normalised, names matched). A different answer is a finding, quoted as evidence:
"the passage gives 0.85 for the blank in “… F1 of ___ on SQuAD”, not 0.91". Where the passage
does not say (NONE) or the reply cannot be read, nothing is decided.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

from reader.audit.verify import numbered_lines
from reader.llm.base import Message
from reader.prompts import messages
from reader.text.relations import (
    COMPARE,
    NAME,
    NUMBER,
    OPPOSITE,
    OPPOSITE_WORD,
    checkable_numbers,
    match_case,
)

BLANK = "___"
EXTRACTION = "extraction:"
NONE = "NONE"


@dataclass
class Cloze:
    kind: str  # "number" | "side" | "direction"
    masked: str  # the sentence with BLANK where the checked part was
    expected: str  # what the sentence has there
    options: tuple[str, ...]  # the choices offered ("" none: copy from the passage)
    evidence: str  # the excerpt the blank is to be filled from


def _number_value(text: str) -> float | None:
    """The first number of `text`, with its sign (reader.audit.guards reads numbers without one:
    a sentence's "0.3" for the passage's "-0.3" is a wrong answer here, a rounding there)."""
    m = re.search(r"-?\d+(?:,\d{3})*(?:\.\d+)?", text)
    return float(m.group(0).replace(",", "")) if m else None


def _stated(answer: str, evidence: str) -> bool:
    """Is the answer's number written in the passage?"""
    m = re.search(r"\d+(?:[.,]\d+)*", answer)
    return bool(m) and re.search(rf"(?<![\d.]){re.escape(m.group(0))}(?![\d]|\.\d)", evidence) is not None


def _evidence_numbers(evidence: str) -> set[str]:
    return {m.group(1) for m in NUMBER.finditer(evidence)}


def cloze_for(sentence: str, evidence: str) -> Cloze | None:
    """The sentence's cloze over `evidence`, or None when it has nothing such a question can
    check: a number of the sentence (one the excerpt lacks first, else one among other numbers
    of the excerpt: where a number can be put on the wrong quantity); else the first name of a
    comparison between two names; else the direction word of a comparison."""
    in_evidence = _evidence_numbers(evidence)
    # not a thousands group's tail ("4,113") nor a range's second end ("10%-15%")
    numbers = [m for m in checkable_numbers(sentence) if sentence[max(0, m.start(1) - 1)] not in ",-–"]
    # a number the excerpt lacks first (it may be another quantity's), then one among others
    missing = [m for m in numbers if m.group(1) not in in_evidence]
    among = [m for m in numbers if m.group(1) in in_evidence and len(in_evidence) >= 2]
    for m in (missing + among)[:1] if in_evidence else []:
        masked = sentence[: m.start(1)] + BLANK + sentence[m.end(1) :]
        return Cloze("number", masked, m.group(1), (), evidence)
    compare = COMPARE.search(sentence)
    if compare:
        names = [n for n in NAME.finditer(sentence) if len(n.group(0)) >= 2]
        before = [n for n in names if n.end() <= compare.start()]
        after = [
            n
            for n in names
            if n.start() >= compare.end() and len(sentence[compare.end() : n.start()].split()) <= 2
        ]
        if before and after and before[-1].group(0) != after[0].group(0):
            a, b = before[-1], after[0]
            if a.group(0) in evidence and b.group(0) in evidence:
                masked = sentence[: a.start()] + BLANK + sentence[a.end() :]
                return Cloze("side", masked, a.group(0), (a.group(0), b.group(0)), evidence)
    words = list(OPPOSITE_WORD.finditer(sentence))
    if words:
        m = words[0]
        word = m.group(0)
        opposite = match_case(OPPOSITE[word.lower()], word)
        masked = sentence[: m.start()] + BLANK + sentence[m.end() :]
        return Cloze("direction", masked, word, (word, opposite), evidence)
    return None


def build_messages(clozes: list[Cloze]) -> list[Message]:
    """The conversation for a batch of clozes (prompts/extract.j2): each blank under its passage."""
    return messages("extract", items=clozes)  # prompts/extract.j2 writes BLANK and NONE as they are


def parse_answers(text: str, n: int) -> list[str | None]:
    """Each item's answer (`[n] answer` lines, read as the verifier's are: reader.audit.verify),
    None where a line for it is missing."""
    out: list[str | None] = [None] * n
    for number, rest, _line in numbered_lines(text, label="item"):
        if number is not None and number.isdigit() and 1 <= int(number) <= n and out[int(number) - 1] is None:
            answer = rest.strip().strip("\"'“”.").strip()
            out[int(number) - 1] = answer or None
    return out


def compare(cloze: Cloze, answer: str | None) -> str:
    """ "agree", "disagree" or "unknown" (no answer, NONE, or an answer that is neither option)."""
    if not answer or answer.strip().upper().startswith(NONE):
        return "unknown"
    if cloze.kind == "number":
        got, want = _number_value(answer), _number_value(cloze.expected)
        figure = re.match(r"[-−]?\d", answer.strip()) is not None
        if not figure or want is None or len(answer.split()) > 3 or not _stated(answer, cloze.evidence):
            return "unknown"  # not a figure of the passage: the model wrote something else
        others = {_number_value(m.group(0)) for m in NUMBER.finditer(cloze.masked)}
        if got != want and got in others:
            return "unknown"  # copied from the sentence itself, not read from the passage
        # the sentence may round the passage's figure: 39.2 → 39, 0.8493 → 0.849
        decimals = len(cloze.expected.split(".")[1]) if "." in cloze.expected else 0
        return "agree" if abs(round(got, decimals) - want) <= 1e-9 * max(1.0, abs(want)) else "disagree"
    said = answer.strip().lower()
    matches = [o for o in cloze.options if o.lower() == said or said.startswith(o.lower())]
    if not matches:
        return "unknown"
    return "agree" if matches[0].lower() == cloze.expected.lower() else "disagree"


def finding(cloze: Cloze, answer: str) -> str:
    """The reason stored with a sentence whose cloze the passage answers otherwise."""
    shown = cloze.masked if len(cloze.masked) <= 160 else cloze.masked[:157].rstrip() + "…"
    return f"{EXTRACTION} the passage gives “{answer}” for the blank in “{shown}”, not “{cloze.expected}”"


def is_finding(reason: str) -> bool:
    """Is this stored reason an extraction check's contradiction (`finding`), not an agreement?"""
    return reason.startswith(EXTRACTION) and ", not “" in reason


def agreement(cloze: Cloze, answer: str) -> str:
    return f"{EXTRACTION} the passage gives “{answer}” for the blank, as the sentence does"


def check_clozes(clozes: list[Cloze], llm, *, batch_size: int = 4, stage: str = "extract", paper_id=None):
    """Ask `llm` to fill each cloze (batches of `batch_size`); returns each cloze's (outcome,
    answer) and the number of calls. A failed call decides nothing ("unknown")."""
    from reader.errors import ReaderError

    results: list[tuple[str, str | None]] = []
    calls = 0
    for start in range(0, len(clozes), batch_size):
        batch = clozes[start : start + batch_size]
        try:
            reply = llm.complete(
                build_messages(batch),
                temperature=0.0,
                max_tokens=16 * len(batch) + 16,
                stage=stage,
                paper_id=paper_id,
            ).text
            calls += 1
        except ReaderError:
            results += [("unknown", None)] * len(batch)
            continue
        answers = parse_answers(reply, len(batch))
        results += [(compare(c, a), a) for c, a in zip(batch, answers)]
    return results, calls
