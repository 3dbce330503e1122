"""A small safe evaluator of arithmetic over numbers, and the arithmetic claims of a sentence.

`evaluate("(85.1 − 81.9) ÷ 81.9 × 100")` reads numbers, + − × ÷ (and their ASCII forms - * /),
parentheses and a unary minus with a recursive-descent parser: no `eval`, no names, no calls,
no powers, at most MAX_EXPRESSION characters. Anything else raises ArithmeticClaimError naming
what it could not read.

`claims(sentence, numbers)` finds what a sentence says a number is the result of:

- a difference: "improves on BERT by 3.2 points", "3.2 points higher than", "a gain of 3.2",
  "(+3.2)", "drops by 5.1", "an absolute improvement of 1.1";
- a relative change: "a 15% relative reduction", "relative gain of 4%", "reduces (the) error by
  39%" (error = the scale, 1 or 100, minus the score);
- a ratio: "2× faster", "3.5 times larger", "a 4-fold increase";
- the best of a column: "the best", "the highest", "the lowest", "outperforms all" (no number).

`Operands` then says what each kind computes from two cells, as an expression for the evaluator,
so that the computation can be shown as it was done ("85.1 − 81.9 = 3.2").
"""

from __future__ import annotations

import math
import re
from dataclasses import dataclass

MAX_EXPRESSION = 200
_TOKEN = re.compile(r"\s*(?:(\d+(?:\.\d+)?|\.\d+)|([-+*/×÷−–()]))")


class ArithmeticClaimError(ValueError):
    pass


def evaluate(expression: str) -> float:
    """The value of an arithmetic expression of numbers, + − × ÷ and parentheses (see the module)."""
    if len(expression) > MAX_EXPRESSION:
        raise ArithmeticClaimError(f"expression longer than {MAX_EXPRESSION} characters")
    tokens: list[str | float] = []
    pos = 0
    text = expression.strip()
    while pos < len(text):
        m = _TOKEN.match(text, pos)
        if not m or m.end() == pos:
            raise ArithmeticClaimError(f"cannot read {text[pos : pos + 12]!r} in {expression!r}")
        number, op = m.groups()
        tokens.append(
            float(number) if number is not None else {"×": "*", "÷": "/", "−": "-", "–": "-"}.get(op, op)
        )
        pos = m.end()
        while pos < len(text) and text[pos].isspace():
            pos += 1
    value, rest = _sum(tokens, 0)
    if rest != len(tokens):
        raise ArithmeticClaimError(f"unexpected {tokens[rest]!r} in {expression!r}")
    return value


def _sum(tokens, i: int) -> tuple[float, int]:
    value, i = _product(tokens, i)
    while i < len(tokens) and tokens[i] in ("+", "-"):
        op = tokens[i]
        right, i = _product(tokens, i + 1)
        value = value + right if op == "+" else value - right
    return value, i


def _product(tokens, i: int) -> tuple[float, int]:
    value, i = _unary(tokens, i)
    while i < len(tokens) and tokens[i] in ("*", "/"):
        op = tokens[i]
        right, i = _unary(tokens, i + 1)
        if op == "/" and right == 0:
            raise ArithmeticClaimError("division by zero")
        value = value * right if op == "*" else value / right
    return value, i


def _unary(tokens, i: int) -> tuple[float, int]:
    if i < len(tokens) and tokens[i] == "-":
        value, i = _unary(tokens, i + 1)
        return -value, i
    if i < len(tokens) and tokens[i] == "(":
        value, i = _sum(tokens, i + 1)
        if i >= len(tokens) or tokens[i] != ")":
            raise ArithmeticClaimError("a parenthesis is not closed")
        return value, i + 1
    if i < len(tokens) and isinstance(tokens[i], float):
        return tokens[i], i + 1
    raise ArithmeticClaimError("an operand is missing" if i >= len(tokens) else f"unexpected {tokens[i]!r}")


# ------------------------------------------------------------------ claims in a sentence

DIFFERENCE, RELATIVE, ERROR_REDUCTION, RATIO, BEST = "difference", "relative", "error", "ratio", "best"

_CHANGE = (
    r"improv\w*|outperform\w*|increas\w*|decreas\w*|drop\w*|reduc\w*|gain\w*|lower\w*|rais\w*|"
    r"higher|exceed\w*|beat\w*|surpass\w*|trail\w*|fall\w*|fell|ris\w*|boost\w*|lead\w*|"
    r"better|worse|los\w*|declin\w*|cut\w*|lift\w*|add\w*|widen\w*|narrow\w*"
)
_MARGIN = r"(?:gain|improvement|increase|decrease|drop|reduction|margin|difference|lead|advantage|boost|loss|decline)"
_POINTS = r"(?:points?|pp|percentage[- ]points?|pts?\.?|absolute(?: points?)?|%)"
_REL = r"(?:relative|relatively)"
_N = r"(?P<n>\d+(?:\.\d+)?)"


@dataclass(frozen=True)
class Claim:
    kind: str  # difference | relative | error | ratio | best
    start: int  # where its number (or word) stands in the sentence
    end: int
    raw: str  # the number as written ("3.2"), or the superlative word
    value: float | None  # the number claimed; None for "best"
    quantum: float  # the claim's precision: 0.1 for "3.2"


_ABOUT = r"(?:about\s+|around\s+|roughly\s+|nearly\s+|almost\s+|over\s+)?"
_NOT_RELATIVE = rf"(?!\s?%\s+{_REL})"
_COMPARED = r"(?:higher|lower|better|worse|more|less|above|below|ahead|behind|over|under)"
_ERROR = r"(?:\w+\s+)?errors?\s+(?:rate\s+)?"
# (kind, pattern): the first pattern that reads a number decides its kind
_RULES = [
    (
        ERROR_REDUCTION,
        rf"\b(?:reduc\w*|cut\w*|lower\w*|decreas\w*)\s+(?:the\s+|its\s+)?{_ERROR}by\s+{_N}\s?%",
    ),
    (ERROR_REDUCTION, rf"{_N}\s?%\s+(?:relative\s+)?{_ERROR}reduction"),
    (RELATIVE, rf"{_N}\s?%\s+{_REL}\b"),
    (RELATIVE, rf"\b{_REL}\s+(?:{_MARGIN}|improvement|reduction|gain)s?\s+(?:of\s+|by\s+)?{_N}\s?%"),
    (RELATIVE, rf"\b(?:{_CHANGE})\s+(?:\w+\s+){{0,3}}by\s+{_N}\s?%\s+{_REL}"),
    (RATIO, rf"{_N}\s?(?:×|x\b|times\b|-fold\b|fold\b)"),
    (
        DIFFERENCE,
        rf"\b(?:{_CHANGE})\b[^.;:]{{0,80}}?\bby\s+(?:an?\s+)?(?:absolute\s+)?(?:margin\s+of\s+|{_MARGIN}\s+of\s+)?"
        rf"{_ABOUT}{_N}{_NOT_RELATIVE}",
    ),
    (DIFFERENCE, rf"\b{_MARGIN}s?\s+of\s+{_ABOUT}{_N}{_NOT_RELATIVE}"),
    (DIFFERENCE, rf"{_N}[- ](?:{_POINTS}|-?point)\s+(?:absolute\s+)?(?:{_MARGIN}|{_COMPARED})"),
    (DIFFERENCE, rf"\b(?:{_CHANGE})\s+(?:of\s+|by\s+)?{_ABOUT}{_N}\s?(?:points?|pp|percentage[- ]points?)\b"),
    (DIFFERENCE, rf"\(\s*[+−–-]\s*{_N}\s*(?:{_POINTS})?\s*\)"),
    (
        DIFFERENCE,
        rf"{_N}\s+(?:\w+\s+){{0,2}}(?:fewer|more|less|lower|higher|smaller|larger|greater)\s+than\b",
    ),
]
_PATTERNS = [(kind, re.compile(pattern, re.I)) for kind, pattern in _RULES]
# not "1-best" or "n-best" (a list of hypotheses), nor "top-5"
_BEST = re.compile(
    r"(?<![\w-])(?:best|highest|lowest|strongest|top|worst|largest|smallest|outperforms\s+all|beats\s+all)\b(?!-\d)",
    re.I,
)
# "the best baseline", "second best": the best of a part of the rows, or not the best
_BEST_OF_A_PART = re.compile(
    r"\b(?:second|third|next)[- ]best\b|\bbest(?:[- ]performing)?\s+(?:\w+\s+)?(?:baseline|competitor|prior|previous|other)",
    re.I,
)
_WORDS_FOR_NUMBERS = {"twice": 2.0, "double": 2.0, "thrice": 3.0, "triple": 3.0, "half": 0.5}


def claims(sentence: str) -> list[Claim]:
    """The arithmetic claims of a sentence, each once (the first pattern that reads a number wins)."""
    out: list[Claim] = []
    taken: set[int] = set()
    for kind, pattern in _PATTERNS:
        for m in pattern.finditer(sentence):
            start, end = m.span("n")
            if start in taken or _in_range(sentence, start, end):
                continue
            taken.add(start)
            raw = m.group("n")
            decimals = len(raw.split(".")[1]) if "." in raw else 0
            out.append(Claim(kind, start, end, raw, float(raw), 10.0**-decimals))
    for m in re.finditer(
        r"\b(twice|double|thrice|triple)\s+(?:as\s+)?(?:fast|large|many|much|high|big|long)", sentence, re.I
    ):
        out.append(Claim(RATIO, m.start(), m.end(), m.group(1), _WORDS_FOR_NUMBERS[m.group(1).lower()], 0.2))
    if not _BEST_OF_A_PART.search(sentence):
        for m in _BEST.finditer(sentence):
            out.append(Claim(BEST, m.start(), m.end(), m.group(0), None, 0.0))
    return sorted(out, key=lambda c: c.start)


def _in_range(sentence: str, start: int, end: int) -> bool:
    """A number that is one end of a range ("30-40%", "0.78–0.89") states no single result."""
    before, after = sentence[max(0, start - 2) : start], sentence[end : end + 2]
    return bool(re.match(r"[-–]\d", after)) or bool(re.search(r"\d[-–]$", before))


def expressions(kind: str, a: float, b: float, scale: float) -> list[str]:
    """What a claim of `kind` may compute from two cells a and b, as expressions (a the larger)."""
    hi, lo = (a, b) if a >= b else (b, a)
    h, low = _fmt(hi), _fmt(lo)
    if kind == DIFFERENCE:
        return [f"{h} − {low}"]
    if kind == RELATIVE:
        return [f"({h} − {low}) ÷ {low} × 100", f"({h} − {low}) ÷ {h} × 100"]
    if kind == ERROR_REDUCTION:
        s = _fmt(scale)
        return [
            f"({h} − {low}) ÷ ({s} − {low}) × 100",
            f"({h} − {low}) ÷ {low} × 100",
            f"({h} − {low}) ÷ {h} × 100",
        ]
    if kind == RATIO:
        return [f"{h} ÷ {low}"] if lo > 0 else []
    return []


def _fmt(value: float) -> str:
    return f"{value:.6f}".rstrip("0").rstrip(".") if value != int(value) else str(int(value))


def shown(value: float, quantum: float) -> str:
    """A computed value at the claim's precision ("3.2")."""
    decimals = max(0, round(-math.log10(quantum))) if 0 < quantum < 1 else 0
    return f"{value:.{decimals}f}"
