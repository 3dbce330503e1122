"""A sentence's unfaithful twin: the same words, one fact changed.

Each rule takes a (paraphrased) sentence and returns it with one checkable fact turned, or None
where the rule does not apply: two of its numbers swapped, the two sides of a comparison
swapped, a value moved onto another metric, a negation or antonym, a scope widened; or another
statement of the paper joined to it as its cause (added_cause). Paired with
its faithful source against the same excerpt, wording carries no label and only the fact does
(the HANS lesson: training pairs that keep the words and flip the label).
"""

from __future__ import annotations

import random
import re

from reader.text.relations import COMPARE, NAME, checkable_numbers, match_case
from scripts.training import rewrites as rw

KINDS = ("swapped_numbers", "moved_value", "swapped_sides", "moved_metric", "negated", "widened_scope")

_METRICS = (
    "precision",
    "recall",
    "accuracy",
    "F1",
    "F1 score",
    "BLEU",
    "ROUGE",
    "AUC",
    "perplexity",
    "error rate",
    "latency",
    "throughput",
    "sensitivity",
    "specificity",
    "mean",
    "median",
    "variance",
    "correlation",
    "coverage",
    "speed",
    "memory",
    "cost",
)
_METRIC = re.compile(
    r"\b(" + "|".join(sorted((re.escape(m) for m in _METRICS), key=len, reverse=True)) + r")\b"
)
_SCOPE = [
    (r"\bsome of the\b", "all of the"),
    (r"\bsome\b", "all"),
    (r"\bmost\b", "all"),
    (r"\bseveral\b", "all"),
    (r"\bmany\b", "all"),
    (r"\boften\b", "always"),
    (r"\busually\b", "always"),
    (r"\bsometimes\b", "always"),
    (r"\bcan\b", "always"),
    (r"\bmay\b", "will always"),
    (r"\bpartially\b", "fully"),
    (r"\bpartly\b", "fully"),
    (r"\bslightly\b", "substantially"),
    (r"\bmodest(?:ly)?\b", "large"),
    (r"\bon (?:the )?([A-Z][\w-]*)(?: (?:dataset|corpus|benchmark|data set))?\b", "on every dataset"),
    (r"\bfor (?:the )?([A-Z][\w-]*)(?: language)?\b", "for all languages"),
    (r"\bin (?:one|a few|two|three) of\b", "in all of"),
]


def _same_kind(a: re.Match, b: re.Match) -> bool:
    def kind(m):
        raw = m.group(1)
        return (bool(m.group(2)), "." in raw)

    return kind(a) == kind(b) and a.group(1) != b.group(1)


def swapped_numbers(sentence: str, rng: random.Random) -> str | None:
    """Two numbers of the same form (both percentages, both decimals, both counts) exchanged."""
    numbers = checkable_numbers(sentence)
    pairs = [(a, b) for i, a in enumerate(numbers) for b in numbers[i + 1 :] if _same_kind(a, b)]
    if not pairs:
        return None
    a, b = rng.choice(pairs)
    return (
        sentence[: a.start(1)]
        + b.group(1)
        + sentence[a.end(1) : b.start(1)]
        + a.group(1)
        + sentence[b.end(1) :]
    )


def moved_value(sentence: str, rng: random.Random, passage: str = "") -> str | None:
    """One of the sentence's numbers replaced by another number of its own passage, of the same
    form: a real value of the paper put on the wrong quantity (no number check can tell)."""
    numbers = checkable_numbers(sentence)
    own = {m.group(1) for m in numbers}
    there = [m for m in checkable_numbers(passage) if m.group(1) not in own]
    options = [(a, b.group(1)) for a in numbers for b in there if _same_kind(a, b)]
    if not options:
        return None
    a, value = rng.choice(options)
    return sentence[: a.start(1)] + value + sentence[a.end(1) :]


def swapped_sides(sentence: str, rng: random.Random) -> str | None:
    """The two names on either side of a comparison exchanged ("A outperforms B" → "B outperforms
    A"): only where the sentence compares and has two different names."""
    compare = COMPARE.search(sentence)
    if not compare:
        return None
    names = [m for m in NAME.finditer(sentence) if len(m.group(0)) >= 2]
    before = [m for m in names if m.end() <= compare.start()]
    after = [m for m in names if m.start() >= compare.end()]
    if not before or not after:
        return None
    a, b = before[-1], after[0]
    if a.group(0) == b.group(0):
        return None
    return (
        sentence[: a.start()] + b.group(0) + sentence[a.end() : b.start()] + a.group(0) + sentence[b.end() :]
    )


def moved_metric(sentence: str, rng: random.Random) -> str | None:
    """A value put on another metric: two metric names exchanged, or the one named replaced."""
    found = list(_METRIC.finditer(sentence))
    if not found or not checkable_numbers(sentence):
        return None
    named = {m.group(0) for m in found}
    distinct = [m for m in found if m.group(0) != found[0].group(0)]
    if distinct:
        a, b = found[0], distinct[0]
        return (
            sentence[: a.start()]
            + b.group(0)
            + sentence[a.end() : b.start()]
            + a.group(0)
            + sentence[b.end() :]
        )
    m = found[0]
    other = rng.choice([x for x in _METRICS if x not in named and x.lower() not in m.group(0).lower()])
    return sentence[: m.start()] + other + sentence[m.end() :]


def negated(sentence: str, rng: random.Random) -> str | None:
    """A comparison or direction turned round (higher ↔ lower), else a negation added or removed."""
    return rw.reversed_relation(sentence, rng) or rw.negation(sentence, rng)


def widened_scope(sentence: str, rng: random.Random) -> str | None:
    """A hedge or a restriction made general: "some" → "all", "on SQuAD" → "on every dataset"."""
    options = [(m, new) for pattern, new in _SCOPE for m in re.finditer(pattern, sentence)]
    if not options:
        return None
    m, new = rng.choice(options)
    return sentence[: m.start()] + match_case(new, m.group(0)) + sentence[m.end() :]


_LINKS = ("because", "since", "which means that", "so", "and as a result", "which is why")


def added_cause(sentence: str, other: str, rng: random.Random) -> str | None:
    """The sentence with another statement of the same paper joined to it as its cause or
    consequence — a link the paper never draws, in the paper's own words (the writer's invented
    claims: "The authors attribute the lack of benefit … mainly to noise …")."""
    head, tail = sentence.strip().rstrip("."), other.strip().rstrip(".")
    if not head or not tail or tail.lower() in head.lower():
        return None
    return f"{head}, {rng.choice(_LINKS)} {tail[0].lower() + tail[1:]}."


_RULES = {
    "swapped_numbers": swapped_numbers,
    "swapped_sides": swapped_sides,
    "moved_metric": moved_metric,
    "negated": negated,
    "widened_scope": widened_scope,
}


def twins(sentence: str, rng: random.Random, n: int = 2, passage: str = "") -> list[tuple[str, str]]:
    """Up to `n` (kind, twin) of different kinds; the number and comparison kinds first, as they
    are the ones wording cannot give away. `passage`: the source's passage (for moved_value)."""
    out = []
    for kind in KINDS:
        if len(out) == n:
            break
        twin = moved_value(sentence, rng, passage) if kind == "moved_value" else _RULES[kind](sentence, rng)
        if twin and twin != sentence and twin not in {t for _, t in out}:
            out.append((kind, twin))
    return out
