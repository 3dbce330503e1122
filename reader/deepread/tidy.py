"""A written draft tidied before it is audited: no sentence said twice, no lead-in that names
nothing, no empty bullet, no heading left without text under it.

A small writer repeats itself (the same four sentences under three headings) and leaves
bullets with nothing after them; repeating a true sentence is not unsupported, so the audit
would pass it. A sentence repeats an earlier one when it has the same content words, or when
both have at least `NEAR_WORDS` of them and share `NEAR_SHARE` of their union.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from functools import lru_cache

from reader.text.split import sentence_spans
from reader.text.words import runs, stems

NEAR_WORDS = 4
NEAR_SHARE = 0.8
REPEATS = "repeats an earlier sentence"
ECHOES_HEADING = "only restates its heading"
EMPTY_BULLET = "empty bullet"
EMPTY_HEADING = "empty heading"
CAPTION = "a caption's label pasted as a sentence"
BARE_LEAD_IN = "a lead-in that names nothing"
OTHER_WORK = "a result of a cited work under Key results"
FORMULA_PIECE = "a piece of a formula, not a sentence"

_STOPWORDS = frozenset(
    "a an the and or but of to in on for with by from at as is are was were be been being it its "
    "this that these those their they them there here which who whom whose what when where while "
    "also such than then so not no nor can could may might will would shall should do does did "
    "has have had into over under about between within without more most less very paper "
    "authors study work we our us s".split()
)
# what a sentence that only echoes its heading adds to the heading's words: "The paper does not
# make any overclaims." under "Overclaims"
_ECHO_WORDS = frozenset(
    stems(
        "make makes made provide provides provided report reports reported mention mentions discuss "
        "discusses include includes included present presents presented contain contains any none "
        "identify identifies address addresses clear clearly specific significant major obvious "
        "however though method methods approach proposed technique results findings evaluation "
        "information details text".split()
    )
)
BULLET_MARK = r"(?:[-*+•]|\\-|\d{1,2}[.)])"  # a list item's marker: - * + • \- 1. 2)
_EMPTY_BULLET = re.compile(rf"^[ \t]*{BULLET_MARK}[ \t]*$")
_HEADING = re.compile(r"^[ \t]*(?:#{1,6}[ \t]+\S.*|\*\*[^*\n]+\*\*:?)[ \t]*$")
# "Table 4: The Bag of Concepts F1 score of the baseline…": a caption copied from the material; and
# a caption's credit or panel ("Adapted and modified from Otero-Millan et al.35 (B) Same analysis as
# the red line in (A) …", "(A) and (B) are adapted and modified from Bosman et al.25")
_CAPTION_LABEL = re.compile(
    r"^(?:(?:Figure|Fig\.|Table|Tab\.)\s*\d+[a-z]?\s*[:.|]|\([A-H]\)\s|adapted (?:and modi\S+ )?from\b)", re.I
)
_KEY_RESULTS = re.compile(r"^[ \t]*(?:#{1,6}[ \t]+|\*\*)key results\b", re.I)
# "For example, Klementiev et al. (2012) reconstruct …", "Smith and Jones [4] show …"
# ("SQuAD [12] accuracy rises …" names a dataset, not a work: a bracket needs the authors' names)
_CITED_SUBJECT = re.compile(
    r"(?i:(?:for example|for instance|e\.g\.|similarly|likewise|in contrast|by contrast|previously),?\s+)?"
    r"[A-Z][\w'\-]+(?:(?:\s+(?:et al\.?|and [A-Z][\w'\-]+|& [A-Z][\w'\-]+))?\s*\(\d{4}[a-z]?\)"
    r"|\s+(?:et al\.?|and [A-Z][\w'\-]+)\s*\[\d+(?:[,–-]\s?\d+)*\])"
)
# what makes a lead-in name something: a digit, or a capital inside a word or after its first
# word ("SPECTER improves on three tasks:", "Compared with BM25:")
_NAMES_SOMETHING = re.compile(r"\d|(?<=\w)[A-Z]|(?<=\s)[A-Z]")
LEAD_IN_WORDS = 16
# a word of a sentence: two letters or more ("k=1", "Z(x)", "λkφk(x, y)" and "d X" have none;
# a sentence with CJK characters is one)
_WORD = re.compile(r"[^\W\d_]{2,}")
MIN_SENTENCE_WORDS = 2


@dataclass
class Tidied:
    text: str
    removed: list[tuple[str, str]] = field(default_factory=list)  # (what, why)

    def count(self, why: str) -> int:
        return sum(1 for _, reason in self.removed if reason == why)


def content_key(sentence: str) -> frozenset[str]:
    """The sentence's content words (stemmed, without function words) and, for text written
    without spaces, its character pairs."""
    found: set[str] = set()
    plain = []
    for run, cjk in runs(sentence):
        if cjk:
            found |= {run[i : i + 2] for i in range(max(1, len(run) - 1))}
        elif run not in _STOPWORDS:
            plain.append(run)
    return frozenset(found | set(stems(plain)))


def repeats_earlier(key: frozenset[str], earlier: list[frozenset[str]]) -> bool:
    for seen in earlier:
        if key == seen:
            return True
        if min(len(key), len(seen)) >= NEAR_WORDS and len(key & seen) >= NEAR_SHARE * len(key | seen):
            return True
    return False


def drop_repeats(text: str) -> Tidied:
    """`text` without each sentence that repeats an earlier one (exactly or nearly)."""
    removed, keys, out, last = [], [], [], 0
    for start, end in sentence_spans(text):
        sentence = text[start:end]
        key = content_key(sentence)
        if key and repeats_earlier(key, keys):
            removed.append((sentence, REPEATS))
            out.append(text[last:start].rstrip(" \t"))
            last = end
        elif key:
            keys.append(key)
    out.append(text[last:])
    return Tidied("".join(out), removed)


def _dropping(text: str, why: str, drop) -> Tidied:
    """`text` without each sentence for which `drop(sentence, heading, lead)` holds; `heading`: the
    heading line above the sentence ("" where there is none); `lead`: its line before it (a
    bullet's marker)."""
    headings = [(m.start(), m.group(0)) for m in re.finditer(r"(?m)^.*$", text) if _HEADING.match(m.group(0))]
    removed, out, last = [], [], 0
    for start, end in sentence_spans(text):
        above = [line for at, line in headings if at < start]
        sentence = text[start:end]
        lead = text[text.rfind("\n", 0, start) + 1 : start]
        if drop(sentence, above[-1] if above else "", lead):
            removed.append((sentence, why))
            out.append(text[last:start].rstrip(" \t"))
            last = end
    out.append(text[last:])
    return Tidied("".join(out), removed)


def drop_heading_echoes(text: str) -> Tidied:
    """`text` without each sentence whose content words are all its heading's (and words
    such as "provide" or "any"): it says the heading holds nothing, or restates it."""

    def echoes(sentence: str, heading: str, _) -> bool:
        key, above = content_key(sentence), _heading_key(heading)
        return bool(above and key and key - _ECHO_WORDS <= above)

    return _dropping(text, ECHOES_HEADING, echoes)


@lru_cache(maxsize=64)
def _heading_key(heading: str) -> frozenset[str]:
    return content_key(heading)


def drop_cited_results(text: str) -> Tidied:
    """`text` without the sentences under "Key results" whose subject is a cited work ("For
    example, Klementiev et al. (2012) reconstruct phrase tables …", restated from the acl2014
    paper's related work): another work's finding is not the paper's result."""
    return _dropping(
        text,
        OTHER_WORK,
        lambda sentence, heading, _: bool(
            _KEY_RESULTS.match(heading) and _CITED_SUBJECT.match(sentence.lstrip("-*+• \t"))
        ),
    )


def drop_caption_labels(text: str) -> Tidied:
    """`text` without the sentences that start with a figure's or table's label ("Table 3:"):
    a caption the writer copied from its material names a result without giving it."""
    return _dropping(
        text, CAPTION, lambda sentence, *_: bool(_CAPTION_LABEL.match(sentence.lstrip("-*+• \t")))
    )


def drop_formula_pieces(text: str) -> Tidied:
    """`text` without the "sentences" of a formula the writer copied from its material, one line
    each ("exp", "k=1", "P(y | x) =", "Z(x)"): fewer than MIN_SENTENCE_WORDS words of two letters
    or more. A list item keeps its one term ("- ROUGE-L")."""

    def piece(sentence: str, _, lead: str) -> bool:
        if re.match(rf"\s*{BULLET_MARK}", lead) or any(cjk for _, cjk in runs(sentence)):
            return False
        return len(_WORD.findall(sentence)) < MIN_SENTENCE_WORDS

    done = _dropping(text, FORMULA_PIECE, piece)
    if not done.removed:
        return done
    # its lone symbols ("!", "=") are no sentence at all; then the lines the pieces left empty
    kept = re.sub(r"(?m)^[ \t]*[^\w\s#*+•|>\-]{1,3}[ \t]*$", "", done.text)
    return Tidied(re.sub(r"\n{3,}", "\n\n", kept), done.removed)


# the paper's outline announced, copied from its introduction
_OUTLINE = re.compile(
    r"(?:the )?(?:remainder|rest) of (?:the|this) (?:paper|article) is (?:organi[sz]ed|structured)\b", re.I
)


def drop_bare_lead_ins(text: str) -> Tidied:
    """`text` without the lead-ins that name nothing of the paper ("The results may not hold
    elsewhere due to several factors:", "The paper adds:"): a short sentence ending in a colon,
    with no digit and no capitalised word after its first, or announcing the paper's outline
    ("The remainder of the paper is organized as follows."). The items after it stay."""

    def bare_lead_in(sentence: str, *_) -> bool:
        bare = sentence.strip().lstrip("-*+• \t")
        return bool(_OUTLINE.match(bare)) or (
            bare.endswith(":")
            and not bare.startswith("**")
            and len(bare.split()) <= LEAD_IN_WORDS
            and not _NAMES_SOMETHING.search(bare)
        )

    return _dropping(text, BARE_LEAD_IN, bare_lead_in)


def drop_empty_items(text: str) -> Tidied:
    """`text` without bullets that hold nothing and headings with no text before the next
    heading (or the end)."""
    removed = []
    lines = [line for line in text.splitlines()]
    kept = []
    for line in lines:
        if _EMPTY_BULLET.match(line):
            removed.append((line.strip(), EMPTY_BULLET))
        else:
            kept.append(line)
    out: list[str] = []
    for i, line in enumerate(kept):
        if _HEADING.match(line):
            rest = kept[i + 1 :]
            body = next((j for j, later in enumerate(rest) if later.strip()), None)
            if body is None or _HEADING.match(rest[body]):
                removed.append((line.strip(), EMPTY_HEADING))
                continue
        out.append(line)
    return Tidied(re.sub(r"\n{3,}", "\n\n", "\n".join(out)).strip(), removed)


def tidy(text: str) -> Tidied:
    """Repeated sentences, sentences that only echo their heading, captions' labels pasted as
    sentences, other works' results under Key results, pieces of formulas, lead-ins that name
    nothing, empty bullets and then the headings they left empty, removed."""
    removed: list[tuple[str, str]] = []
    for step in (
        drop_repeats,
        drop_heading_echoes,
        drop_caption_labels,
        drop_cited_results,
        drop_formula_pieces,
        drop_bare_lead_ins,
        drop_empty_items,
    ):
        done = step(text)
        text, removed = done.text, removed + done.removed
    # a line whose first sentence went starts with the space that followed it
    return Tidied(re.sub(r"(?m)^[ \t]+(?=[^\s\-*+•\d])", "", text), removed)


_FIRST_PERSON = [
    (re.compile(r"\bWe\b"), "The authors"),
    (re.compile(r"\bwe\b"), "the authors"),
    (re.compile(r"\bOur\b"), "Their"),
    (re.compile(r"\bour\b"), "their"),
    (re.compile(r"\bours\b"), "theirs"),
    (re.compile(r"\bourselves\b"), "themselves"),
    (re.compile(r"(?<=\w )us\b"), "them"),
]


def third_person(text: str) -> str:
    """An English draft's first person ("We propose", "our model": the paper's own words,
    copied) as the authors' ("The authors propose", "their model")."""
    for pattern, replacement in _FIRST_PERSON:
        text = pattern.sub(replacement, text)
    return text
