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
An assumption put on the paper itself ("The paper assumes that entity types in the test set match
those labeled in the training set") that every sentence of the paper holding it attributes to other
work ("most research on named entity recognition … assume that entity types in the test set
match …", which the paper goes on to call unrealistic) is the other work's, not the paper's.
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
CUT_REACH = 3
UNSTATED = "an assumption the paper does not state (no sentence of it says so): for the reader to check"
STATED = "said to be left unstated, but a sentence of the paper states it"
OTHERS = "an assumption the paper attributes to other work, not one of its own"

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
# a sentence about what other work does: "most research on …", "previous methods", "commonly made"
_OTHER_WORK = re.compile(
    r"\b(?:most|many|much|previous|prior|existing|earlier|other|standard|conventional|traditional|typical)\s+"
    r"(?:[\w-]+\s+){0,2}?(?:research|work|works|studies|methods|approaches|systems|models|formulations|papers|"
    r"literature)\b|\bcommonly\s+(?:made|assumed)\b",
    re.I,
)
_OWN = re.compile(r"\b(?:we|our|us)\b", re.I)


@dataclass(frozen=True)
class PaperAssumptions:
    """The paper's sentences with their content stems, and which of them speak of an assumption."""

    sentences: tuple[tuple[frozenset[str], bool, bool], ...]  # stems, about an assumption, of other work

    @classmethod
    def of(cls, sentences: list[str], stemmed: Sequence[frozenset[str]] | None = None) -> PaperAssumptions:
        """From the paper's sentences; `stemmed`, when given, holds each one's content stems (the
        deep read stems them once for its checks)."""
        if stemmed is None:
            stemmed = [frozenset(content_stems(s)) for s in sentences]
        # a sentence cut by a page's foot ("2016), and assume that …") is read with the sentences
        # before it: its beginning is among them
        whole = [
            " ".join(sentences[max(0, i - CUT_REACH) : i + 1]) if not s[:1].isupper() else s
            for i, s in enumerate(sentences)
        ]
        return cls(
            tuple(
                (stems, bool(_ASSUMING.search(s)), bool(_OTHER_WORK.search(w)) and not _OWN.search(w))
                for s, w, stems in zip(sentences, whole, stemmed, strict=True)
            )
        )

    def unstated(self, sentence: str) -> list[str]:
        """[UNSTATED] when the sentence puts an assumption on the paper that no sentence of it
        states; [STATED] when it says the paper leaves unstated an assumption one of its sentences
        states; [OTHERS] when it says the paper assumes what the paper's sentences holding it
        attribute to other work; [] otherwise (no assumption claimed, too vague to look for, or
        stated)."""
        m = _ASSUMED.search(sentence)
        if not m:
            return []
        wanted = assumed_stems(m.group("what") or m.group("about") or m.group("example"))
        if len(wanted) < MIN_STEMS:
            return []
        holding = [
            others
            for stems, assuming, others in self.sentences
            if (share := len(wanted & stems) / len(wanted)) >= MIN_SHARE_ANY
            or (assuming and share >= MIN_SHARE_ASSUMING)
        ]
        if not holding:
            return [UNSTATED]
        if _SAID_UNSTATED.search(sentence, m.start()):
            return [STATED]
        put_on_paper = m.group("what") and not re.match(r"they\b", m.group(0), re.I)
        return [OTHERS] if put_on_paper and all(holding) else []


def assumed_stems(what: str) -> set[str]:
    return content_stems(_END.split(what)[0]) - CRITIQUE_WORDS
