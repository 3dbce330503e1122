"""The verifier's confidence: the probability it gives to YES for each numbered claim.

A small verifier's first word is a coin tossed with a bias: it says YES to fluent sentences.
Its token log-probabilities say how sure it was. For a reply such as

    [1] YES
    [2] NO

the answer token after "[n]" has alternatives with log-probabilities; P(YES) for claim n is
the mass on YES-like tokens over the mass on YES- and NO-like tokens at that position. A
threshold on P(YES), chosen on a development set, then sets the operating point between
missed fabrications and false flags.
"""

from __future__ import annotations

import math
import re

from reader.audit.verify import ANSWER_WORDS
from reader.llm.base import usable_logprob


def _kind(token: str) -> str | None:
    """YES or NO for a token that is an answer word (as parse_answers reads them), else None."""
    return ANSWER_WORDS.get(re.sub(r"[^A-Za-z]", "", token).lower())


def yes_probability(position: dict) -> float | None:
    """P(YES) at one answer token, from its top alternatives. None, and the answer word decides,
    when none is YES or NO with a usable log-probability, or when the answer token itself has
    none: a YES whose log-probability is unusable beside a usable NO is no P(YES) of 0."""
    options = dict(position.get("top") or {})
    options.setdefault(position["token"], position.get("logprob"))
    usable = {tok: usable_logprob(value) for tok, value in options.items()}
    if _kind(position["token"]) is not None and usable.get(position["token"]) is None:
        return None
    yes = sum(math.exp(lp) for tok, lp in usable.items() if lp is not None and _kind(tok) == "YES")
    no = sum(math.exp(lp) for tok, lp in usable.items() if lp is not None and _kind(tok) == "NO")
    return yes / (yes + no) if yes + no > 0 else None


def claim_probabilities(logprobs: list[dict] | None, n_claims: int) -> list[float | None]:
    """P(YES) for each of the n claims, read at the answer token that follows "[k]"; as
    `parse_answers` does, only when no answer is numbered do answers at the start of a line
    ("YES", "- NO", "[YES]", or the placeholder "[n] YES" copied literally) count, in order. None for a
    claim without an answer token, and for all when there are no log-probabilities."""
    numbered: list[float | None] = [None] * n_claims
    in_order: list[float | None] = []
    if not logprobs:
        return numbered
    any_numbered = False
    line = ""  # the current line up to this token
    claim: int | None = None  # the claim the next answer token answers
    for position in logprobs:
        token = position["token"]
        kind = _kind(token)
        if kind is not None and claim is not None:
            if claim >= 0:
                any_numbered = True
                if claim < n_claims and numbered[claim] is None:
                    numbered[claim] = yes_probability(position)
            else:
                in_order.append(yes_probability(position))
            claim = None
        elif kind is not None and not re.sub(r"[\s*_`>#•\-\[(]", "", line):
            in_order.append(yes_probability(position))  # a bare answer at the start of a line, or "[YES]"
        line = (line + token).rsplit("\n", 1)[-1]
        tail = re.search(r"\[\s*(\d{1,3}|n)\s*\]\s*$", line)
        if tail:
            claim = -1 if tail.group(1) == "n" else int(tail.group(1)) - 1
            line += " "  # the same "[k]" is read once
        elif "\n" in token:
            claim = None
    if any_numbered:
        return numbered
    return (in_order + [None] * n_claims)[:n_claims]
