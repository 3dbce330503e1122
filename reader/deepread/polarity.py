"""A written sentence that turns round what the paper's closest sentence says: "the techniques are
limited to a certain type of dialogues" of a paper that says they are "not limited to" it;
"negatively correlated with the yield" where the paper says "positive correlation"; "the least
damage" where it says "the greatest damages".

The closest sentence is the paper sentence holding the most of the written sentence's content
stems (the words of direction left out of both); it must hold at least MIN_SHARE of them, and
MIN_STEMS or more. Against it, the written sentence is turned round when
- the paper negates one of the shared words ("not limited", "not significant": a negation at most
  NEGATION_GAP words before it; "not only … but also" is no negation) and the written sentence has
  no negation anywhere, or
- the written sentence has a word of direction ("higher", "positive", "least") whose opposite the
  paper sentence has, without the word itself.
Either is quoted as the guard's finding. A paraphrase that swaps the sides of a comparison ("B is
lower than A" for "A is higher than B") would be flagged too; the measurement counts how often
faithful sentences are (docs/measurements/audit.md, benchmarks/bench_polarity.py).
"""

from __future__ import annotations

import math
import re
from collections.abc import Sequence
from dataclasses import dataclass

from reader.audit.citations import content_stems
from reader.deepread.checked import quoted
from reader.deepread.negation import LACK, NEGATION
from reader.text.words import stems, words

MIN_SHARE = 0.7  # chosen on half A of eval/audit_dev.jsonl (benchmarks/bench_polarity.py)
MIN_STEMS = 4
NEGATION_GAP = 2  # words between a negation and the word it negates ("not always significant")

# pairs of words of direction, matched by stem ("positively" / "positive correlation")
_OPPOSITE_WORDS = (
    ("higher", "lower"),
    ("highest", "lowest"),
    ("more", "less"),
    ("more", "fewer"),
    ("most", "least"),
    ("greatest", "least"),
    ("better", "worse"),
    ("best", "worst"),
    ("larger", "smaller"),
    ("largest", "smallest"),
    ("increase", "decrease"),
    ("positive", "negative"),
    ("easier", "harder"),
    ("outperform", "underperform"),
    ("above", "below"),
    ("faster", "slower"),
    ("stronger", "weaker"),
)


def _stem(word: str) -> str:
    return stems([word.lower()])[0]


OPPOSITES: dict[str, set[str]] = {}
for _a, _b in _OPPOSITE_WORDS:
    OPPOSITES.setdefault(_stem(_a), set()).add(_stem(_b))
    OPPOSITES.setdefault(_stem(_b), set()).add(_stem(_a))
# reader.text.words splits "doesn't" into "doesn" and "t"
_NEGATION = frozenset(NEGATION.split("|")) | frozenset(
    "neither cannot none nothing don doesn didn isn aren wasn weren couldn wouldn shouldn hasn haven won".split()
)
_NEGATED_WRITTEN = re.compile(rf"\b(?:{NEGATION}|{LACK}|neither|cannot|none|fails?)\b|n't\b", re.I)

TURNED_ROUND = "the paper says the opposite"


@dataclass(frozen=True)
class _Sentence:
    text: str
    words: tuple[str, ...]
    directions: frozenset[str]  # the stems of its words of direction
    stems: frozenset[str]  # its content stems, words of direction left out


def _sentence(text: str, content: frozenset[str] | None = None) -> _Sentence:
    """`content`, when known, are the text's content stems (reader.audit.citations.content_stems)."""
    lowered = tuple(w.lower() for w in words(text))
    directions = frozenset(stem for stem in stems(list(lowered)) if stem in OPPOSITES)
    content = content if content is not None else frozenset(content_stems(text))
    return _Sentence(text, lowered, directions, frozenset(content - OPPOSITES.keys()))


@dataclass(frozen=True)
class PaperPolarity:
    """The paper's sentences with their words and content stems, built once per read."""

    sentences: tuple[_Sentence, ...]

    @classmethod
    def of(cls, sentences: list[str], stemmed: Sequence[frozenset[str]] | None = None) -> PaperPolarity:
        """From the paper's sentences; `stemmed`, when given, holds each one's content stems (the
        deep read stems them once for its checks)."""
        if stemmed is None:
            return cls(tuple(_sentence(s) for s in sentences))
        return cls(tuple(_sentence(s, content) for s, content in zip(sentences, stemmed, strict=True)))

    def contradicting(self, sentence: str) -> list[str]:
        """The reason the sentence turns round the paper sentence closest to it, quoting it ([] when
        no paper sentence is close enough or the two agree in direction)."""
        written = _sentence(sentence)
        if len(written.stems) < MIN_STEMS:
            return []
        closest = max(self.sentences, key=lambda s: len(written.stems & s.stems), default=None)
        shared = written.stems & closest.stems if closest else frozenset()
        if len(shared) < max(MIN_STEMS, math.ceil(MIN_SHARE * len(written.stems))):
            return []
        if not _NEGATED_WRITTEN.search(sentence) and _negates(closest.words, shared):
            return [f"{TURNED_ROUND}: {quoted(closest.text)}"]
        for direction in written.directions - closest.directions:
            if OPPOSITES[direction] & closest.directions and not OPPOSITES[direction] & written.directions:
                return [f"{TURNED_ROUND}: {quoted(closest.text)}"]
        return []


def _negates(paper_words: tuple[str, ...], shared: frozenset[str]) -> bool:
    """A negation at most NEGATION_GAP words before one of the shared stems' words."""
    for i, word in enumerate(paper_words):
        following = paper_words[i + 1 : i + 2 + NEGATION_GAP]
        if word in _NEGATION and following[:1] != ("only",) and following[:1] != ("just",):
            if any(content_stems(w) & shared for w in following):
                return True
    return False
