"""Words that carry a sentence's checkable facts: its numbers, its names, its comparisons.

Shared by the audit (the control claim, the extraction checks) and the claim checker's training
data (scripts/training/rewrites.py, twins.py), so that what one turns round the other can find.
"""

from __future__ import annotations

import re

# A number of a sentence: a decimal, a whole number or a percentage, not inside a name ("GPT-4").
NUMBER = re.compile(r"(?<![\w.\-])(\d+(?:\.\d+)?)(\s?%)?(?![\w.]*[A-Za-z])(?!\.\d)")
# A result's number: the same, but neither a citation ("[12]") nor part of a thousands group
# ("1,200"), and a letter beside it is an ASCII letter (the audit's control claim changes these).
RESULT_NUMBER = re.compile(
    r"(?<![A-Za-z0-9_.,\-\[])(\d+(?:\.\d+)?)(\s?%)?(?![A-Za-z0-9_.]*[A-Za-z])(?!\.\d|[\d,\]])"
)
NAME = re.compile(r"(?<![\w-])(?:[A-Z][a-z]*[A-Z0-9][\w-]*|[A-Z]{2,}[\w-]*)(?![\w-])")

# Pairs of words whose exchange turns a relation round (each direction is listed once).
OPPOSITES = [
    ("higher", "lower"),
    ("increase", "decrease"),
    ("increases", "decreases"),
    ("increased", "decreased"),
    ("increasing", "decreasing"),
    ("more", "less"),
    ("larger", "smaller"),
    ("better", "worse"),
    ("best", "worst"),
    ("outperforms", "underperforms"),
    ("outperform", "underperform"),
    ("improves", "degrades"),
    ("improved", "degraded"),
    ("improve", "degrade"),
    ("positive", "negative"),
    ("positively", "negatively"),
    ("faster", "slower"),
    ("above", "below"),
    ("maximum", "minimum"),
    ("before", "after"),
    ("greater", "smaller"),
    ("highest", "lowest"),
    ("gain", "loss"),
    ("gains", "losses"),
    ("reduces", "raises"),
    ("reduced", "raised"),
    ("strong", "weak"),
    ("stronger", "weaker"),
    ("longer", "shorter"),
    ("zero-shot", "fine-tuned"),
    ("supervised", "unsupervised"),
    ("significantly", "not significantly"),
    ("enhanced", "suppressed"),
    ("upregulated", "downregulated"),
    ("inhibits", "promotes"),
    ("inhibited", "promoted"),
    ("rise", "fall"),
    ("earlier", "later"),
    ("majority", "minority"),
    ("most", "fewest"),
    ("superior", "inferior"),
    ("easier", "harder"),
    ("accurate", "inaccurate"),
    ("efficient", "inefficient"),
    ("consistent", "inconsistent"),
]


def opposite_words(pairs: list[tuple[str, str]]) -> tuple[dict[str, str], re.Pattern[str]]:
    """Each word of the pairs with its opposite, and the pattern that finds any of them."""
    opposite = {a: b for a, b in pairs} | {b: a for a, b in pairs}
    words = "|".join(sorted(map(re.escape, opposite), key=len, reverse=True))
    return opposite, re.compile(r"\b(" + words + r")\b", re.IGNORECASE)


OPPOSITE, OPPOSITE_WORD = opposite_words(OPPOSITES)
# The comparisons whose turning round a reader sees at once next to the passage: the ones the
# audit's control claim turns round (reader.audit.control).
AT_A_GLANCE = [
    pair
    for pair in OPPOSITES
    if pair[0]
    in {
        "higher", "highest", "increase", "increases", "increased", "more", "larger", "better", "best",
        "outperforms", "outperform", "improves", "improved", "faster", "above", "maximum", "stronger",
        "longer", "superior",
    }
] + [("outperformed", "underperformed")]  # fmt: skip
COMPARE = re.compile(
    r"\b(?:than|over|outperform\w*|exceed\w*|beat\w*|compared (?:with|to)|versus|vs\.?|better|worse|"
    r"higher|lower|more|less|superior|inferior)\b",
    re.I,
)


def match_case(word: str, like: str) -> str:
    if like.isupper() and len(like) > 1:
        return word.upper()
    return word[:1].upper() + word[1:] if like[:1].isupper() else word


def checkable_numbers(sentence: str) -> list[re.Match]:
    return [m for m in NUMBER.finditer(sentence) if "." in m.group(1) or m.group(2) or int(m.group(1)) >= 10]
