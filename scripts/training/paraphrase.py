"""Paraphrases in the writer's own words: which sentences to ask for, the request, what to keep.

Used by scripts/make_paraphrases.py (which runs the embedded model). A kept paraphrase carries
the same numbers and names as its source and differs from it in enough words that wording alone
cannot tell it from the source's rule-made twin.
"""

from __future__ import annotations

import random
import re

from reader.llm.base import Message
from reader.text.relations import NAME, NUMBER, OPPOSITE, OPPOSITE_WORD, checkable_numbers
from reader.text.split import split_sentences
from scripts.training import rewrites as rw
from scripts.training.claims import DIRECTION, SKIP_SECTION, usable_sentence

_STYLES = (
    "Rewrite the sentence in the third person and in your own words, as a note about the paper.",
    "Paraphrase the sentence for a reading note: start with 'The authors' or 'The paper', reword it.",
    "Say the same thing in one plain sentence with different wording and a different word order.",
    "Rewrite the sentence more concisely in your own words, as a summary of the paper would.",
)
_RULES = (
    "Keep every number, unit and name exactly as written and every fact unchanged; add nothing. "
    "Answer with three different rewritten sentences, one per line, numbered 1. 2. 3., nothing else."
)
_NUMBERING = re.compile(r"^\s*(?:\d[.)]|[-*•])\s*")


def source_sentences(chunks: list[tuple[str, str]], rng: random.Random, n: int) -> list[tuple[str, str, str]]:
    """Up to `n` (sentence, its passage, the following sentence to fuse with or "") of a paper's
    body: sentences with numbers, names or comparison words first; about one in four fused."""
    found = []
    for section, text in chunks:
        if SKIP_SECTION.match(section or ""):
            continue
        sentences = split_sentences(text)
        for i, s in enumerate(sentences):
            if usable_sentence(s):
                following = sentences[i + 1] if i + 1 < len(sentences) else ""
                found.append((s, text, following if usable_sentence(following) else ""))
    rich = [f for f in found if checkable_numbers(f[0]) or rw.name_matches(f[0]) or DIRECTION.search(f[0])]
    plain = [f for f in found if f not in rich]
    rng.shuffle(rich)
    rng.shuffle(plain)
    picked = (rich[: max(1, int(n * 0.8))] + plain)[:n]
    return [
        (s, text, following if following and rng.random() < 0.25 else "") for s, text, following in picked
    ]


def parse_variants(reply: str) -> list[str]:
    """The rewritten sentences of a reply, one per line, numbering and quotes taken off."""
    out = []
    for line in reply.splitlines():
        text = _NUMBERING.sub("", line).strip().strip('"').strip()
        if text and text not in out:
            out.append(text)
    return out


def paraphrase_messages(sentence: str, fuse_with: str, style: int) -> list[Message]:
    if fuse_with:
        task = "Combine the two sentences into one sentence in your own words, as a note about the paper."
        body = f"Sentence 1: {sentence}\nSentence 2: {fuse_with}"
    else:
        task = _STYLES[style % len(_STYLES)]
        body = f"Sentence: {sentence}"
    return [
        {"role": "system", "content": "You rewrite sentences from research papers. " + _RULES},
        {"role": "user", "content": f"{task}\n\n{body}"},
    ]


_WORD = re.compile(r"[a-z]+")
_NOT_A_PARAPHRASE = re.compile(
    r"\b(?:reviewer|summar\w+|rewritten|rewrite|paraphrase|sentence)\b|[:\"“”]", re.I
)


def _numbers(text: str) -> list[str]:
    return sorted(m.group(1) for m in NUMBER.finditer(text))


def _numbers_kept(source: str, paraphrase: str) -> bool:
    """Every number of the paraphrase is the source's (as often); a paraphrase may drop a figure
    or citation number, never add or change one."""
    left = _numbers(source)
    for n in _numbers(paraphrase):
        if n not in left:
            return False
        left.remove(n)
    return True


def _name_set(text: str) -> set[str]:
    return {m.group(0) for m in NAME.finditer(text)}


_NEGATION = re.compile(
    r"\b(?:not|no|never|neither|nor|none|without|cannot|unlike|fails?|lacks?|lacking|absent)\b|n't\b", re.I
)


def _turned(source: str, paraphrase: str) -> bool:
    """The paraphrase negates what the source does not (or drops the source's negation), or uses
    the opposite of one of the source's comparison words ("higher" for "lower") — the small
    writer's most common way to turn a sentence round while keeping its numbers and names."""
    if bool(_NEGATION.search(source)) != bool(_NEGATION.search(paraphrase)):
        return True
    own = {w.lower() for w in OPPOSITE_WORD.findall(source)}
    theirs = {w.lower() for w in OPPOSITE_WORD.findall(paraphrase)}
    return any(OPPOSITE[w] in theirs and w not in theirs for w in own)


def keep_paraphrase(source: str, paraphrase: str, min_changed: float = 0.25) -> bool:
    """No number or name the source lacks (a reporting frame may add none), one sentence, its
    negations and comparisons the source's (not turned round), and at least `min_changed` of its
    words not in the source."""
    if not paraphrase or len(paraphrase) > 2 * len(source) + 80 or len(split_sentences(paraphrase)) > 1:
        return False
    if _turned(source, paraphrase):
        return False
    if _NOT_A_PARAPHRASE.search(paraphrase) and not _NOT_A_PARAPHRASE.search(source):
        return False
    if not _name_set(paraphrase) <= _name_set(source) or not _numbers_kept(source, paraphrase):
        return False
    words = _WORD.findall(paraphrase.lower())
    own = set(_WORD.findall(source.lower()))
    return bool(words) and sum(w not in own for w in words) / len(words) >= min_changed
