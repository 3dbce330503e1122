"""A section cut to a token budget by its most telling sentences, not by its beginning.

The writer of a small model sees a few thousand tokens of a paper; a section's first
paragraph is often its motivation, while its numbers, comparisons and limitations come later.
Each sentence is scored by what it carries (a number, a comparison, a limitation, a claim of
the authors'), the best are kept within the budget, and they are given in the paper's order,
with "…" where sentences were left out.
"""

from __future__ import annotations

import re

from reader.text.split import sentence_spans
from reader.text.tokens import estimate_tokens

_NUMBER = re.compile(r"\d")
_COMPARISON = re.compile(
    r"\b(?:outperform\w*|better|worse|higher|lower|than|compared|improv\w*|reduc\w*|increas\w*|"
    r"decreas\w*|versus|vs\.?|gain\w*|drop\w*|exceed\w*|surpass\w*|baseline\w*)\b|优于|高于|低于|提升|下降",
    re.I,
)
_LIMITATION = re.compile(
    r"\b(?:limitation\w*|however|fail\w*|cannot|drawback\w*|future work|only|unable|unclear|"
    r"restrict\w*|caveat\w*|assum\w*)\b|局限|不足|然而|但是",
    re.I,
)
_CLAIM = re.compile(
    r"\b(?:we (?:propose|present|introduce|show|find|found|demonstrate|report|achieve)|our (?:method|model|"
    r"approach|results?)|results? (?:show|indicate|suggest)|this (?:paper|work))\b|本文|我们提出",
    re.I,
)
GAP = " … "


def sentence_score(sentence: str, first: bool = False) -> float:
    score = 2.0 * bool(_NUMBER.search(sentence))
    score += 1.5 * bool(_COMPARISON.search(sentence)) + 1.5 * bool(_LIMITATION.search(sentence))
    score += 1.0 * bool(_CLAIM.search(sentence)) + 1.0 * first
    return score - (1.0 if len(sentence.split()) < 5 and not re.search(r"[^\x00-\x7f]", sentence) else 0.0)


def select_sentences(text: str, max_tokens: int) -> str:
    """The text's highest-scoring sentences that fit `max_tokens`, in their order; the whole
    text when it fits."""
    if estimate_tokens(text) <= max_tokens:
        return text
    spans = sentence_spans(text)
    if not spans:
        return ""
    ranked = sorted(range(len(spans)), key=lambda i: (-sentence_score(text[slice(*spans[i])], i == 0), i))
    chosen, used = set(), 0
    for i in ranked:
        cost = estimate_tokens(text[slice(*spans[i])]) + 1
        if used + cost <= max_tokens:
            chosen.add(i)
            used += cost
    parts, previous = [], None
    for i in sorted(chosen):
        if previous is not None:
            parts.append(" " if i == previous + 1 else GAP)
        elif i:
            parts.append(GAP.lstrip())
        parts.append(text[slice(*spans[i])])
        previous = i
    if previous is not None and previous < len(spans) - 1:
        parts.append(GAP.rstrip())
    return "".join(parts)
