"""Rule-made rewrites of a paper's own sentences: the claim checker's training claims.

Each rule takes a source sentence (and what it needs of its paper) and returns a claim whose
label is known by construction, or None where the rule does not apply. Supported rewrites keep
the sentence's meaning (third person, a reporting frame, a clause dropped, numbers written
another way, common words swapped for synonyms, two adjacent sentences fused); unsupported ones
change one checkable fact (a number changed, a number of the same paper put on this quantity, a
name invented, a relation turned round or moved to another name of the paper, a negation added
or removed), or state what the paper does not (another paper's sentence, a filled template).
FactCC and MiniCheck made their training data the same way. All randomness comes from the
`random.Random` passed in, so a seed reproduces the data.
"""

from __future__ import annotations

import random
import re

from reader.audit.guards import parse_numbers
from reader.text.relations import NAME, OPPOSITE, OPPOSITE_WORD, checkable_numbers, match_case
from reader.text.relations import NUMBER as _NUMBER

SUPPORTED_KINDS = (
    "verbatim",
    "third_person",
    "reported",
    "compressed",
    "reformatted",
    "rounded",
    "synonyms",
    "paraphrased",
    "fused",
)
UNSUPPORTED_KINDS = (
    "changed_number",
    "swapped_number",
    "invented_name",
    "moved_relation",
    "reversed_relation",
    "negation",
    "invented_claim",
)


_FIRST_PERSON = [
    (r"\bWe\b", "The authors"),
    (r"\bwe\b", "the authors"),
    (r"\bOur\b", "Their"),
    (r"\bour\b", "their"),
    (r"\bus\b", "them"),
    (r"\bIn this paper\b", "In the paper"),
    (r"\bin this paper\b", "in the paper"),
    (r"\bIn this work\b", "In the work"),
    (r"\bthis paper\b", "the paper"),
    (r"\bThis paper\b", "The paper"),
]
_REPORTING = (
    "The paper reports that {}",
    "The authors state that {}",
    "According to the paper, {}",
    "The authors find that {}",
    "It is reported that {}",
    "The study shows that {}",
)
_SYNONYMS = {
    "shows": "demonstrates",
    "show": "demonstrate",
    "uses": "employs",
    "use": "employ",
    "used": "employed",
    "improves": "enhances",
    "improve": "enhance",
    "method": "approach",
    "approach": "method",
    "results": "findings",
    "significant": "substantial",
    "obtain": "achieve",
    "obtains": "achieves",
    "achieves": "attains",
    "large": "big",
    "small": "little",
    "important": "key",
    "propose": "introduce",
    "proposed": "introduced",
    "proposes": "introduces",
    "however": "yet",
    "therefore": "thus",
    "measured": "assessed",
    "evaluate": "assess",
    "evaluated": "assessed",
    "data": "dataset",
    "performance": "accuracy",
    "task": "problem",
    "increase": "rise",
    "paper": "article",
    "study": "work",
    "samples": "specimens",
    "participants": "subjects",
    "using": "employing",
    "compared": "contrasted",
    "several": "a number of",
    "many": "numerous",
    "found": "observed",
    "shown": "demonstrated",
    "showed": "demonstrated",
    "demonstrate": "show",
    "reveal": "show",
    "revealed": "showed",
    "indicate": "suggest",
    "indicates": "suggests",
    "indicated": "suggested",
    "suggest": "indicate",
    "examine": "investigate",
    "examined": "investigated",
    "investigate": "study",
    "investigated": "studied",
    "analysed": "analyzed",
    "analyzed": "examined",
    "analysis": "examination",
    "require": "need",
    "requires": "needs",
    "required": "needed",
    "provide": "give",
    "provides": "gives",
    "allow": "enable",
    "allows": "enables",
    "obtained": "achieved",
    "achieve": "reach",
    "achieved": "reached",
    "reach": "attain",
    "reached": "attained",
    "perform": "carry out",
    "performed": "carried out",
    "model": "system",
    "models": "systems",
    "technique": "method",
    "techniques": "methods",
    "experiment": "test",
    "experiments": "tests",
    "dataset": "corpus",
    "datasets": "corpora",
    "accuracy": "correctness",
    "error": "mistake",
    "errors": "mistakes",
    "typically": "usually",
    "often": "frequently",
    "generally": "in general",
    "approximately": "about",
    "roughly": "about",
    "about": "roughly",
    "entire": "whole",
    "overall": "in total",
    "total": "overall",
    "main": "principal",
    "major": "principal",
    "novel": "new",
    "new": "novel",
    "previous": "earlier",
    "prior": "earlier",
    "existing": "current",
    "current": "present",
    "effect": "influence",
    "effects": "influences",
    "impact": "effect",
    "associated": "linked",
    "related": "linked",
    "correlated": "associated",
    "patients": "subjects",
    "individuals": "people",
    "people": "persons",
    "children": "young people",
    "consists": "is composed",
    "contains": "includes",
    "include": "contain",
    "includes": "contains",
    "consider": "take into account",
    "considered": "regarded",
    "observed": "seen",
    "recorded": "logged",
    "applied": "used",
    "apply": "use",
    "build": "construct",
    "built": "constructed",
    "construct": "build",
    "identify": "find",
    "identified": "found",
    "determine": "establish",
    "determined": "established",
    "estimate": "assess",
    "estimated": "assessed",
    "calculated": "computed",
    "compute": "calculate",
    "computed": "calculated",
    "collected": "gathered",
    "selected": "chosen",
    "chosen": "selected",
    "various": "different",
    "different": "distinct",
    "similar": "comparable",
    "comparable": "similar",
    "individual": "single",
    "single": "one",
    "each": "every",
    "every": "each",
    "whole": "entire",
    "quickly": "rapidly",
    "rapidly": "quickly",
    "clearly": "plainly",
    "mainly": "mostly",
    "mostly": "largely",
    "largely": "mostly",
    "strongly": "markedly",
    "widely": "broadly",
    "commonly": "frequently",
}
_PHRASES = [
    ("in order to", "to"),
    ("a large number of", "many"),
    ("as well as", "and"),
    ("compared to", "relative to"),
    ("compared with", "relative to"),
    ("due to", "because of"),
    ("is able to", "can"),
    ("are able to", "can"),
    ("based on", "on the basis of"),
    ("in addition to", "besides"),
    ("a number of", "several"),
    ("in terms of", "regarding"),
    ("with respect to", "regarding"),
    ("such as", "for example"),
    ("in contrast", "by contrast"),
    ("at least", "no fewer than"),
    ("the majority of", "most"),
    ("prior to", "before"),
    ("in the case of", "for"),
    ("it is possible to", "one can"),
    ("was used", "was employed"),
    ("were used", "were employed"),
    ("leads to", "results in"),
    ("lead to", "result in"),
    ("results in", "leads to"),
    ("make use of", "use"),
    ("take place", "occur"),
]
_AUXILIARY = re.compile(
    r"\b(is|are|was|were|can|could|does|do|did|has|have|had|will|would|may|should)\b(?! not)"
)
_NEGATED = re.compile(r"\b(is|are|was|were|can|could|does|do|did|has|have|had|will|would|may|should) not\b")
_SYLLABLES = ("ka", "ro", "ven", "tal", "mi", "dex", "sor", "lu", "qua", "bri", "zen", "mo", "ple", "tra")
# Claims of the kinds a critique invents: a limitation, a cause or a comparison the paper never states.
_TEMPLATES = (
    "The authors acknowledge that {a} performs poorly when the training data are small.",
    "The paper attributes most of the improvement to {a} rather than to {b}.",
    "A limitation noted by the authors is that {a} was never tested outside {b}.",
    "The results show that {a} is consistently worse than {b} on every measure reported.",
    "The authors conclude that {a} makes {b} unnecessary in practice.",
    "The study finds that the effect of {a} disappears once {b} is controlled for.",
    "The authors report that {a} requires roughly twice the computation of {b}.",
    "According to the paper, {a} fails on most of the cases where {b} succeeds.",
    "The paper argues that {a} is the main cause of the errors observed with {b}.",
    "The authors admit that their comparison of {a} with {b} is not statistically significant.",
    "The paper shows that {a} generalises to languages other than English without retraining.",
    "The authors note that {a} was evaluated by a single annotator only.",
)


def third_person(sentence: str, rng: random.Random) -> str | None:
    out = sentence
    for pattern, repl in _FIRST_PERSON:
        out = re.sub(pattern, repl, out)
    return out if out != sentence else None


def reported(sentence: str, rng: random.Random) -> str | None:
    body = third_person(sentence, rng) or sentence
    if NAME.match(body):  # keep a leading name's capital
        return rng.choice(_REPORTING).format(body)
    return rng.choice(_REPORTING).format(body[:1].lower() + body[1:])


def compressed(sentence: str, rng: random.Random) -> str | None:
    """A clause dropped: a parenthesis, a leading connective, or a trailing relative clause."""
    options = []
    no_paren = re.sub(r"\s*\([^()]{3,80}\)", "", sentence)
    if no_paren != sentence:
        options.append(no_paren)
    lead = re.match(
        r"^(?:However|Moreover|In addition|Furthermore|Additionally|Thus|Therefore|Finally|"
        r"In particular|Overall|Similarly|Here|Specifically|Notably|First|Second|Third)\s*,\s*",
        sentence,
    )
    if lead:
        rest = sentence[lead.end() :]
        options.append(rest[:1].upper() + rest[1:])
    tail = re.search(r",\s*(?:which|while|whereas|where|as well as|thereby)\b[^,]*[.]$", sentence)
    if tail and tail.start() > 40:
        options.append(sentence[: tail.start()] + ".")
    return rng.choice(options) if options else None


def _reformat(raw: str, percent: str | None) -> str | None:
    if "." in raw and not percent:
        whole, frac = raw.split(".")
        return f"{raw}0" if len(frac) < 3 else None
    if percent:
        return f"{raw} %" if percent == "%" else f"{raw}%"
    value = int(raw)
    if value >= 1000 and value % 100 == 0:
        return f"{value / 1000:g}k"
    if value >= 1000:
        return f"{value:,}"
    return None


def reformatted(sentence: str, rng: random.Random) -> str | None:
    """Numbers written another way: 0.3% ↔ 0.3 %, 84.3 → 84.30, 1200 → 1.2k, 12000 → 12,000."""
    matches = [m for m in _NUMBER.finditer(sentence) if _reformat(m.group(1), m.group(2))]
    if not matches:
        return None
    m = rng.choice(matches)
    return sentence[: m.start()] + _reformat(m.group(1), m.group(2)) + sentence[m.end() :]


def synonyms(sentence: str, rng: random.Random) -> str | None:
    """Common words and phrases swapped for others of the same meaning (up to four words, all
    applicable phrases), in the third person."""
    out = sentence
    for phrase, other in _PHRASES:
        if rng.random() < 0.7:
            out = re.sub(rf"\b{re.escape(phrase)}\b", other, out)
    words = [m for m in re.finditer(r"\b[A-Za-z]+\b", out) if m.group(0).lower() in _SYNONYMS]
    if not words and out == sentence:
        return None
    chosen = rng.sample(words, k=min(len(words), rng.randint(1, 4)))
    for m in sorted(chosen, key=lambda m: m.start(), reverse=True):
        out = out[: m.start()] + match_case(_SYNONYMS[m.group(0).lower()], m.group(0)) + out[m.end() :]
    return third_person(out, rng) or out


def fused(sentence: str, following: str, rng: random.Random) -> str | None:
    if len(sentence) + len(following) > 400 or not following:
        return None
    first = sentence.rstrip(" .")
    second = following[:1].lower() + following[1:] if not NAME.match(following) else following
    return third_person(f"{first}; {second}", rng) or f"{first}; {second}"


def changed_number(sentence: str, rng: random.Random) -> str | None:
    """One number changed to a value near it (its digits or its size moved)."""
    matches = checkable_numbers(sentence)
    if not matches:
        return None
    m = rng.choice(matches)
    raw = m.group(1)
    if "." in raw:
        whole, frac = raw.split(".")
        value = float(raw) + rng.choice((-1, 1)) * rng.randint(2, 9) * 10 ** -len(frac) * rng.choice((1, 10))
        new = f"{abs(value):.{len(frac)}f}"
    else:
        value = int(raw)
        if 1900 <= value <= 2030:  # a year
            new = str(value + rng.choice((-3, -2, -1, 1, 2, 3)))
        else:
            new = str(max(1, round(value * rng.choice((0.5, 0.7, 1.3, 1.5, 2.0)) + rng.randint(-2, 2))))
    return None if new == raw else sentence[: m.start(1)] + new + sentence[m.end(1) :]


def swapped_number(sentence: str, paper_numbers: list[str], rng: random.Random) -> str | None:
    """A number the paper does have, put on this sentence's quantity: same format (decimals, percent)
    and a similar size where the paper has one, so no number check can tell."""
    matches = checkable_numbers(sentence)
    rng.shuffle(matches)
    own = {x.group(1) for x in _NUMBER.finditer(sentence)}
    for m in matches:
        raw = m.group(1)
        decimals = len(raw.split(".")[1]) if "." in raw else 0

        def like(other: str) -> bool:
            other_decimals = len(other.split(".")[1]) if "." in other else 0
            return (
                other_decimals == decimals
                and other not in own
                and 0.2 <= float(other) / max(float(raw), 1e-9) <= 5
            )

        candidates = sorted({n for n in paper_numbers if like(n)})
        if candidates:
            return sentence[: m.start(1)] + rng.choice(candidates) + sentence[m.end(1) :]
    return None


def invented_word(rng: random.Random, like: str) -> str:
    if like.isupper():
        return "".join(rng.choice("ABCDEFGHKLMNPRSTVWXZ") for _ in range(max(3, min(len(like), 5))))
    word = "".join(rng.choice(_SYLLABLES) for _ in range(rng.randint(2, 3)))
    return word[:1].upper() + word[1:] + rng.choice(("", "Net", "-2", "BERT", "Former", "X"))


def name_matches(sentence: str) -> list[re.Match]:
    return [m for m in NAME.finditer(sentence) if m.start() > 0 and len(m.group(0)) >= 2]


def invented_name(sentence: str, other_names: list[str], rng: random.Random) -> str | None:
    """A name of the sentence (a method, dataset, baseline) replaced by one the paper never uses:
    invented, or taken from another paper."""
    names = name_matches(sentence)
    if not names:
        return None
    m = rng.choice(names)
    new = rng.choice(other_names) if other_names and rng.random() < 0.5 else invented_word(rng, m.group(0))
    return None if new == m.group(0) else sentence[: m.start()] + new + sentence[m.end() :]


def moved_relation(sentence: str, paper_names: list[str], rng: random.Random) -> str | None:
    """The result moved to another name of the same paper (another dataset, baseline or method):
    every word is the paper's own, only the relation is false."""
    names = name_matches(sentence)
    own = {m.group(0) for m in names}
    candidates = [n for n in paper_names if n not in own]
    if not names or not candidates:
        return None
    m = rng.choice(names)
    return sentence[: m.start()] + rng.choice(candidates) + sentence[m.end() :]


def reversed_relation(sentence: str, rng: random.Random) -> str | None:
    """A comparison or direction turned round: higher ↔ lower, outperforms ↔ underperforms, …;
    or the two names around "than"/"over" exchanged."""
    matches = list(OPPOSITE_WORD.finditer(sentence))
    if matches:
        m = rng.choice(matches)
        return (
            sentence[: m.start()] + match_case(OPPOSITE[m.group(0).lower()], m.group(0)) + sentence[m.end() :]
        )
    return None


def negation(sentence: str, rng: random.Random) -> str | None:
    negated = list(_NEGATED.finditer(sentence))
    if negated:
        m = rng.choice(negated)
        return sentence[: m.start()] + m.group(1) + sentence[m.end() :]
    plain = list(_AUXILIARY.finditer(sentence))
    if not plain:
        return None
    m = rng.choice(plain)
    return sentence[: m.end()] + " not" + sentence[m.end() :]


def invented_claim(
    paper_names: list[str], paper_terms: list[str], foreign_sentence: str | None, rng: random.Random
) -> str | None:
    """What the paper does not state: a template filled with the paper's own names or terms, or a
    sentence of another paper said of this one."""
    pool = paper_names + paper_terms
    if foreign_sentence and (rng.random() < 0.4 or len(pool) < 2):
        return reported(foreign_sentence, rng)
    if len(pool) < 2:
        return None
    a, b = rng.sample(pool, 2)
    return rng.choice(_TEMPLATES).format(a=a, b=b)


def paper_numbers(texts: list[str]) -> list[str]:
    """The numbers a paper's texts contain, as written (for swapped numbers)."""
    return sorted({m.group(1) for t in texts for m in _NUMBER.finditer(t)})


def paper_names(texts: list[str], min_count: int = 2) -> list[str]:
    """Name-like tokens (acronyms, CamelCase, letters with digits) a paper uses at least twice."""
    counts: dict[str, int] = {}
    for t in texts:
        for m in NAME.finditer(t):
            counts[m.group(0)] = counts.get(m.group(0), 0) + 1
    return sorted(n for n, c in counts.items() if c >= min_count and len(n) <= 20 and not parse_numbers(n))


def rounded(sentence: str, rng: random.Random) -> str | None:
    """A decimal rounded to one digit fewer (84.27 → 84.3), as a summary writes it."""
    matches = [
        m for m in _NUMBER.finditer(sentence) if "." in m.group(1) and len(m.group(1).split(".")[1]) >= 2
    ]
    if not matches:
        return None
    m = rng.choice(matches)
    digits = len(m.group(1).split(".")[1]) - 1
    return sentence[: m.start(1)] + f"{float(m.group(1)):.{digits}f}" + sentence[m.end(1) :]


SURFACE = (reported, compressed, synonyms, reformatted)


def paraphrased(sentence: str, rng: random.Random) -> str | None:
    """Two or three meaning-keeping edits in a row: how far a written summary strays from its source."""
    out = sentence
    for edit in rng.sample(SURFACE, rng.randint(2, 3)):
        out = edit(out, rng) or out
    return out if out != sentence else None


def surface(claim: str, rng: random.Random) -> str:
    """A meaning-keeping edit on top of any claim (an unsupported one too, so that an edited
    surface alone never says supported)."""
    edit = rng.choice(SURFACE)
    return edit(claim, rng) or claim


_FILLER = re.compile(
    r"\b(?:the|a|an|very|also|then|thus|however|indeed|further|furthermore|respectively|"
    r"significantly|substantially|clearly|overall|in addition|in particular)\b\s*",
    re.I,
)


def loosened(claim: str, rng: random.Random) -> str:
    """A claim written further from its source, as a summary writes it: a reporting frame,
    synonyms, a clause or some small words dropped. Applied to supported and unsupported claims
    alike, so that how far a claim strays in wording never tells its label; only its facts do."""
    out = synonyms(claim, rng) or claim
    out = compressed(out, rng) or out
    words = out.split(" ")
    out = " ".join(w for w in words if not (_FILLER.fullmatch(w + " ") and rng.random() < 0.5))
    return reported(out, rng) if rng.random() < 0.6 else out
