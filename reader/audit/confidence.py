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

_YES = {"YES", "Y", "TRUE", "SUPPORTED"}
_NO = {"NO", "N", "FALSE", "UNSUPPORTED"}


def _kind(token: str) -> str | None:
    word = re.sub(r"[^A-Za-z]", "", token).upper()
    if word in _YES:
        return "YES"
    if word in _NO:
        return "NO"
    return None


def yes_probability(position: dict) -> float | None:
    """P(YES) at one answer token, from its top alternatives (None when none is YES or NO)."""
    options = dict(position.get("top") or {})
    options.setdefault(position["token"], position["logprob"])
    yes = sum(math.exp(lp) for tok, lp in options.items() if _kind(tok) == "YES")
    no = sum(math.exp(lp) for tok, lp in options.items() if _kind(tok) == "NO")
    return yes / (yes + no) if yes + no > 0 else None


def claim_probabilities(logprobs: list[dict] | None, n_claims: int) -> list[float | None]:
    """P(YES) for each of the n claims, read at the answer token that follows "[k]" (None when
    the reply has no numbered answer for a claim, or no log-probabilities at all)."""
    found: list[float | None] = [None] * n_claims
    if not logprobs:
        return found
    text = ""
    claim: int | None = None
    placeholders = 0  # the small model often copies the prompt's "[n]" literally: claims in order
    for position in logprobs:
        token = position["token"]
        if claim is not None and _kind(token) is not None:
            if 0 <= claim < n_claims and found[claim] is None:
                found[claim] = yes_probability(position)
            claim = None
        text += token
        tail = re.search(r"\[\s*(\d{1,3}|n)\s*\]\s*$", text[-12:])
        if tail and tail.group(1) == "n":
            claim, placeholders = placeholders, placeholders + 1
            text += " "  # the same "[n]" must not be read twice
        elif tail:
            claim = int(tail.group(1)) - 1
        elif "\n" in token:
            claim = None
    return found
