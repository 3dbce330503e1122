"""An assumption the note puts on the paper that the paper never states: "The model assumes that
all relations are equally important", "the model assumes that the input text is clean" — the
writer, asked for threats to validity, invents the paper's assumptions.

What is said to be assumed (after "X assumes (that)", "the assumption(s) that / about", or in
"(e.g., …)" after "assumptions") is reduced to its content stems, words of critique taken off.
The paper states it when one of its sentences about an assumption ("assume", "hypothesis",
"premise", "suppose") holds at least MIN_SHARE_ASSUMING of them, or any of its sentences holds
MIN_SHARE_ANY; otherwise the sentence is a guard's, left to the reader. An assumption the paper
states but the note misdescribes (a one-to-one mapping of a paper about one-to-many ones) can
still pass when its words are there. A sentence that says the paper leaves it unstated ("…, but this
assumption is not explicitly stated") is contradicted by the paper's sentence that states it.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from dataclasses import dataclass

from reader.audit.citations import content_stems
from reader.deepread.absence import CRITIQUE_WORDS

MIN_STEMS = 2
MIN_SHARE_ASSUMING = 0.5
MIN_SHARE_ANY = 0.8
UNSTATED = "an assumption the paper does not state (no sentence of it says so): for the reader to check"
STATED = "said to be left unstated, but a sentence of the paper states it"

_SUBJECT = r"(?:paper|study|model|method|approach|authors?|system|framework|work|survey|tutorial|corpus|review|it|they)"
_ASSUMED = re.compile(
    rf"\b{_SUBJECT}\s+(?:also\s+|implicitly\s+)?assum(?:es|ed|e)\s+(?:that\s+)?(?P<what>[^.;:]+)"
    r"|\b(?:the|its|their)\s+assumptions?\s+(?:that|about)\s+(?P<about>[^.;:]+)"
    r"|\bassumptions?\b[^.;:(]*\((?:e\.g\.,?|such as|for example,?)\s*(?:that\s+)?(?P<example>[^)]+)\)",
    re.I,
)
# where what is assumed ends: a clause of its own ("…, which may not hold")
_END = re.compile(r",|\b(?:which|but|while|whereas|making|leading|may|might|could|is a|are a)\b", re.I)
_SAID_UNSTATED = re.compile(
    r"\b(?:is|are|was|were)\s+not\s+(?:explicitly\s+|clearly\s+)?(?:stated|mentioned|made explicit|spelled out)",
    re.I,
)
_ASSUMING = re.compile(r"\b(?:assum\w*|hypothes[ie]s|premises?|suppos\w*)\b", re.I)


@dataclass(frozen=True)
class PaperAssumptions:
    """The paper's sentences with their content stems, and which of them speak of an assumption."""

    sentences: tuple[tuple[frozenset[str], bool], ...]

    @classmethod
    def of(cls, sentences: list[str], stemmed: Sequence[frozenset[str]] | None = None) -> PaperAssumptions:
        """From the paper's sentences; `stemmed`, when given, holds each one's content stems (the
        deep read stems them once for its checks)."""
        if stemmed is None:
            stemmed = [frozenset(content_stems(s)) for s in sentences]
        return cls(
            tuple((stems, bool(_ASSUMING.search(s))) for s, stems in zip(sentences, stemmed, strict=True))
        )

    def unstated(self, sentence: str) -> list[str]:
        """[UNSTATED] when the sentence puts an assumption on the paper that no sentence of it
        states; [STATED] when it says the paper leaves unstated an assumption one of its sentences
        states; [] otherwise (no assumption claimed, too vague to look for, or stated)."""
        m = _ASSUMED.search(sentence)
        if not m:
            return []
        wanted = assumed_stems(m.group("what") or m.group("about") or m.group("example"))
        if len(wanted) < MIN_STEMS:
            return []
        for stems, assuming in self.sentences:
            share = len(wanted & stems) / len(wanted)
            if share >= MIN_SHARE_ANY or (assuming and share >= MIN_SHARE_ASSUMING):
                return [STATED] if _SAID_UNSTATED.search(sentence, m.start()) else []
        return [UNSTATED]


def assumed_stems(what: str) -> set[str]:
    return content_stems(_END.split(what)[0]) - CRITIQUE_WORDS
