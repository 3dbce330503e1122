"""The claim checker's training pairs: source sentences, their rule-made claims, labelled pairs.

Plain functions over plain data, used by scripts/make_checker_data.py (which does the ingest
and the search); see that script for how the pairs are labelled.
"""

from __future__ import annotations

import random
import re
from collections import Counter

from reader.text.relations import checkable_numbers
from reader.text.tokens import CJK_CHARS
from scripts.training import rewrites as rw

SKIP_SECTION = re.compile(
    r"^\W*(?:\d+\W*)?(?:references|bibliography|acknowledg|author contributions|front matter|"
    r"supporting information|funding|competing interests|conflicts? of interest|"
    r"data availability|参考文献|致谢)",
    re.I,
)
DIRECTION = re.compile(
    r"\b(?:higher|lower|more|less|better|worse|outperform\w*|improv\w*|increas\w*|"
    r"decreas\w*|larger|smaller|than|significant\w*|reduc\w*)\b",
    re.I,
)
_STOP = set(
    "the a an of in on for to and or with by from at as is are was were be been this that these those "
    "it its we our their they which who than into over under between each both all any such can may "
    "not no also more most other using used use based two one three first second new".split()
)


def usable_sentence(s: str) -> bool:
    words = s.split()
    if not 8 <= len(words) <= 60 or not 50 <= len(s) <= 400 or CJK_CHARS.search(s):
        return False
    alpha = sum(1 for w in words if re.fullmatch(r"[A-Za-z][A-Za-z'\-]*[,;:.]?", w))
    return alpha / len(words) >= 0.6 and "http" not in s and s[0].isupper() and s.rstrip()[-1] in ".!?"


def paper_terms(sentences: list[str], n: int = 30) -> list[str]:
    """Frequent content-word bigrams ("the training set", "gene expression"): the paper's topics."""
    counts: Counter = Counter()
    for s in sentences:
        words = re.findall(r"[a-z][a-z\-]{2,}", s.lower())
        counts.update(f"{a} {b}" for a, b in zip(words, words[1:]) if a not in _STOP and b not in _STOP)
    return [f"the {t}" for t, c in counts.most_common(n) if c >= 3]


def claims_for(paper: dict, foreign: list[str], rng: random.Random, per_paper: int) -> list[dict]:
    """Claims made by rule from a paper's sentences: each chosen sentence restated (supported) and
    changed (unsupported), and claims invented from its names and terms."""
    sources = paper["sentences"]
    out: list[dict] = []
    for i in _chosen(sources, rng, per_paper):
        s, chunk = sources[i]
        src = [(s, chunk)]
        _add(out, rw.third_person(s, rng) or s, 1, "verbatim", src)
        for kind in rng.sample(
            ["reported", "compressed", "reformatted", "rounded", "synonyms", "paraphrased"], 3
        ):
            _add(out, getattr(rw, kind)(s, rng), 1, kind, src)
        if rng.random() < 0.3 and i + 1 < len(sources) and sources[i + 1][1] == chunk:
            _add(out, rw.fused(s, sources[i + 1][0], rng), 1, "fused", src + [sources[i + 1]])
        _add_changed(out, s, src, paper, rng)
    names, terms = paper["names"], paper["terms"]
    for _ in range(max(4, per_paper // 4)):
        claim = rw.invented_claim(names, terms, rng.choice(foreign) if foreign else None, rng)
        _add(out, claim, 0, "invented_claim", [])
    return out


def _chosen(sources: list, rng: random.Random, per_paper: int) -> list[int]:
    """The sentences to make claims from: three in four with a number, a name or a direction."""
    rich = [
        i
        for i, (s, _) in enumerate(sources)
        if checkable_numbers(s) or rw.name_matches(s) or DIRECTION.search(s)
    ]
    plain = [i for i in range(len(sources)) if i not in set(rich)]
    rng.shuffle(rich)
    rng.shuffle(plain)
    return sorted((rich[: int(per_paper * 0.75)] + plain)[:per_paper])


def _add(out: list[dict], claim: str | None, label: int, kind: str, sources: list) -> None:
    if claim and claim not in {c["claim"] for c in out}:
        out.append({"claim": claim, "label": label, "kind": kind, "sources": sources})


def _add_changed(out: list[dict], s: str, src: list, paper: dict, rng: random.Random) -> None:
    """Up to three unsupported claims from sentence `s`, each by another change, half of them
    reworded on the surface too."""
    numbers, names = paper["numbers"], paper["names"]
    makers = {
        "changed_number": lambda: rw.changed_number(s, rng),
        "swapped_number": lambda: rw.swapped_number(s, numbers, rng),
        "invented_name": lambda: rw.invented_name(s, paper["foreign_names"], rng),
        "moved_relation": lambda: rw.moved_relation(s, names, rng),
        "reversed_relation": lambda: rw.reversed_relation(s, rng),
        "negation": lambda: rw.negation(s, rng),
    }
    kinds = list(makers)
    rng.shuffle(kinds)
    made = 0
    for kind in kinds:
        if made == 3:
            break
        claim = makers[kind]()
        if claim and claim != s:
            _add(out, rw.surface(claim, rng) if rng.random() < 0.5 else claim, 0, kind, src)
            made += 1


def _words(text: str) -> set[str]:
    return set(re.findall(r"[a-z0-9]+", text.lower()))


def near_copy(source: str, excerpt: str, at: float = 0.5) -> bool:
    """Does the excerpt hold at least `at` of the source's content words? Then it may state the
    same fact, and a supported claim paired with it has no label by construction."""
    want = _words(source) - _STOP
    return len(want & _words(excerpt)) >= at * max(1, len(want))


def pairs_for(claim: dict, excerpts: list, own: list) -> list[dict]:
    """The labelled (claim, excerpt) pairs of one claim (see the module docstring)."""
    texts = [s for s, _ in claim["sources"]]
    out = []
    has_gold = False
    for e in excerpts:
        gold = bool(texts) and all(t in e.text for t in texts)
        has_gold = has_gold or gold
        if claim["label"] == 1 and not gold and any(near_copy(t, e.text) for t in texts):
            continue  # the fact may be stated here too: no label by construction
        out.append({"evidence": e.text, "label": int(claim["label"] == 1 and gold), "gold": gold})
    if claim["label"] == 1 and not has_gold:
        for e in own:
            if all(t in e.text for t in texts):
                out.append({"evidence": e.text, "label": 1, "gold": True})
    return out
