"""A sentence that restates one sentence of the paper in the paper's own words is supported,
and needs no verifier call.

The writer of a small model often takes a sentence of its material nearly as it stands ("We
propose X" → "The authors propose X"). Such a sentence is decided by rule: leaving out frame
words (articles, pronouns, "the authors", "the paper", "also" …) and a leading reporting frame
("The authors report that", "According to the paper,"), its words must appear in one sentence
of its evidence in the same order, cover at least `MIN_COVER` of that sentence's words, and
keep every number (citation numbers included), every name (a word with a capital or a digit:
"BERT-Large" kept whole) and every word of negation, doubt or restriction the paper's sentence
has. A changed or swapped number, a reversed comparison, a moved or invented name, a dropped
"not" or "may" or an added word of the writer's own breaks one of these, and the verifier
decides as before. benchmarks/bench_restated.py measures the rule on faithful and fabricated copies.
"""

from __future__ import annotations

import re
import unicodedata

from reader.text.split import split_sentences
from reader.text.words import words

MIN_COVER = 0.8  # of the paper sentence's words (frame words left out) the restatement keeps
MIN_WORDS = 5  # fewer of its own words: too little to call a restatement
FRAME = frozenset(
    """a an the this that these those it its they their them theirs we our ours us he she his her
    authors author paper article study work here also further furthermore moreover additionally
    besides thus therefore hence""".split()
)
# words whose loss changes what the paper says: negation, doubt, condition, restriction
KEEP = frozenset(
    """not no never nor neither none nothing without cannot t only may might could would should
    whether if unless except fail fails failed hypothesize hypothesise hypothesized expect expected
    assume assumed suggest suggests likely possibly less fewer""".split()
)
_TOKEN = re.compile(r"[^\s(),;:\"“”]+")  # a word with its hyphens and dots: "BERT-Large", "0.85"
_NAME = re.compile(r"[A-Z0-9]")
_REPORTING = re.compile(
    r"^\s*(?:(?:the\s+)?(?:authors?|paper|study|article|work)\s+(?:also\s+)?"
    r"(?:reports?|states?|notes?|writes?|says?|explains?|mentions?|finds?|shows?|observes?)\s+that"
    r"|according\s+to\s+the\s+(?:authors?|paper|study|article),?"
    r"|it\s+is\s+(?:reported|stated|noted|shown|found)\s+that)\s+",
    re.I,
)


def _tokens(text: str) -> list[tuple[str, bool]]:
    """(word, is_name) for each word of `text` (reader.text.words' words): a name has a capital
    after the first letter of the sentence, or a digit, or is joined by a hyphen to one."""
    out = []
    for i, token in enumerate(_TOKEN.findall(unicodedata.normalize("NFKC", text))):
        name = bool(_NAME.search(token if i else token[1:]))
        out.extend((w, name) for w in words(token))
    return out


def _own_words(text: str) -> list[str]:
    """The words of `text` but frame words (a capitalised "AN" or "IT" is a name, not a frame word)."""
    return [w for w, name in _tokens(text) if name or w not in FRAME]


def _is_subsequence(short: list[str], long: list[str]) -> bool:
    it = iter(long)
    return all(w in it for w in short)


def restates(claim: str, sentence: str) -> bool:
    """Does `claim` say what the paper's `sentence` says, in its words (see the module)?"""
    mine = _own_words(_REPORTING.sub("", claim))
    theirs = _own_words(sentence)
    if len(mine) < MIN_WORDS or not theirs or not _is_subsequence(mine, theirs):
        return False
    kept = set(mine)
    names = {w for w, name in _tokens(sentence) if name}
    if any(w not in kept for w in theirs if w.isdigit() or w in KEEP or w in names):
        return False
    return len(mine) / len(theirs) >= MIN_COVER


def restated_source(claim: str, texts: list[str]) -> str | None:
    """The sentence of the evidence `texts` that `claim` restates, or None."""
    return next((s for text in texts for s in split_sentences(text) if restates(claim, s)), None)
