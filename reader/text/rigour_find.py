"""The rigour checklist by rule: for each item, the sentence of the paper that states it, or None
(the rules of reader.text.rigour_experiments and reader.text.rigour_reporting), and the looser
cue words that choose the passages an extraction prompt is asked about."""

from __future__ import annotations

import re
from collections.abc import Callable

from reader.text.rigour import DATASET_WORDS, ITEM_KEYS, Found, Sentence
from reader.text.rigour_experiments import (
    ablations_rule,
    baseline_weight,
    baselines_rule,
    datasets_rule,
    metrics_rule,
    runs_rule,
    variance_rule,
)
from reader.text.rigour_reporting import (
    ETHICS,
    ETHICS_TITLE,
    LIMITATIONS,
    LIMITATIONS_TITLE,
    by_title,
    code_rule,
    compute_rule,
    contributions_rule,
    data_rule,
    hyperparameters_rule,
)

# ------------------------------------------------------------------ the table of rules

SentenceRule = Callable[[Sentence], Found | None]
_PER_SENTENCE: dict[str, SentenceRule] = {
    "datasets": datasets_rule,
    "baselines": baselines_rule,
    "metrics": metrics_rule,
    "ablations": ablations_rule,
    "variance": variance_rule,
    "runs": runs_rule,
    "hyperparameters": hyperparameters_rule,
    "compute": compute_rule,
    "data": data_rule,
}


def _first(sentences: list[Sentence], rule: SentenceRule) -> Found | None:
    for s in sentences:
        found = rule(s)
        if found is not None:
            return found
    return None


def _best(sentences: list[Sentence], rule: SentenceRule) -> Found | None:
    """The sentence that states the most of an item (the most distinct settings or metrics in its
    value), one told in the evaluation's sections before one told elsewhere (acl2012's introduction
    says minimum error rate training "is hard to beat in terms of accuracy"; its results report
    BLEU-4), the first of those."""

    def weight(found: Found) -> int:
        section = found.sentence.passage.section or ""
        appendix = _APPENDIX.match(section)
        told_in_evaluation = 1 if _RESULTS_SECTION.search(section) else 0
        return found.value.count(";") + found.value.count(",") + told_in_evaluation - (10 if appendix else 0)

    best: Found | None = None
    for s in sentences:
        found = rule(s)
        if found is not None and (best is None or weight(found) > weight(best)):
            best = found
    return best


# narrower than rigour_experiments' sections for baselines: a "Baselines and Ablations" section names
# what the baselines compute (2kenize's segmenter "perplexity"), not what the paper reports
_RESULTS_SECTION = re.compile(r"result|experiment|evaluat|table \d+ caption", re.I)
_APPENDIX = re.compile(r"^\W*(?:[A-Z](?:\.\d+)*\.?\s|appendix)", re.I)


# the name a paper gives its own system in its title: "SemEAGAT: A Novel Approach …", "SPECTER: …"
_TITLE_NAME = re.compile(r"\s*([\w-]+)\s*:")


def _baselines_found(sentences: list[Sentence], title: str) -> Found | None:
    """The sentence that states the baselines most strongly (named as baselines, then compared
    with by name, told in the results first), the first of those; none below MIN_BASELINE."""
    best, weight = None, MIN_BASELINE - 1
    own = _TITLE_NAME.match(title)
    for s in sentences:
        found = baselines_rule(s, own.group(1) if own else "")
        if found is not None and baseline_weight(found) > weight:
            best, weight = found, baseline_weight(found)
    return best


# A sentence naming baselines counts wherever it stands; "compared with Y" only where the results,
# experiments or a table's caption tell it ("the persistence of IgG … is unusual in comparison to
# other species" is no baseline); "X outperforms Y" alone never. On the 73 training papers, read:
# 40 → 27 found, and 11 of the 13 dropped compared no methods (2 did, in an abstract and an
# introduction).
MIN_BASELINE = 3


def _variance_found(sentences: list[Sentence]) -> Found | None:
    """A spread or a test where the paper gives one; else a sentence that says "significantly"."""
    claim = None
    for s in sentences:
        found = variance_rule(s)
        if found is not None and found.kind != "claim":
            return found
        claim = claim or found
    return claim


def find_item(key: str, sentences: list[Sentence], title: str = "") -> Found | None:
    """What the rules find for one item in the paper's sentences, or None."""
    if key == "variance":
        return _variance_found(sentences)
    if key == "code":
        return _first(sentences, lambda s: code_rule(s, title))
    if key == "limitations":
        return by_title(sentences, LIMITATIONS_TITLE, "section") or _first(
            sentences, lambda s: Found(s, "named in the text") if LIMITATIONS.search(s.plain) else None
        )
    if key == "ethics":
        return by_title(sentences, ETHICS_TITLE, "section") or _first(
            sentences,
            lambda s: Found(s, ETHICS.search(s.plain).group(0)) if ETHICS.search(s.plain) else None,
        )
    if key == "contributions":
        return contributions_rule(sentences)
    if key in ("hyperparameters", "metrics"):
        return _best(sentences, _PER_SENTENCE[key])
    if key == "baselines":
        return _baselines_found(sentences, title)
    return _first(sentences, _PER_SENTENCE[key])


def find_all(sentences: list[Sentence], title: str = "") -> dict[str, Found | None]:
    return {key: find_item(key, sentences, title) for key in ITEM_KEYS}


# Looser words than the rules: a passage with one of these is one an extraction prompt is asked about.
CUES: dict[str, re.Pattern] = {
    key: re.compile(pattern, re.I)
    for key, pattern in {
        "datasets": rf"{DATASET_WORDS}|benchmark|collection|samples?|participants|subjects|examples",
        "baselines": r"baselines?|compar\w+|outperform\w*|state[- ]of[- ]the[- ]art|previous (?:work|methods?)",
        "metrics": r"metrics?|measure\w*|score\w*|accura\w+|evaluat\w+",
        "ablations": r"ablat\w+|remov\w+|without|variants?|components?",
        "variance": r"signific\w+|deviation|interval|variance|\bp\s?[<=]|test\b|error\w*|spread|±",
        "runs": r"runs?\b|seeds?|trials?|repeat\w*|folds?|replicat\w+|averag\w+",
        "hyperparameters": r"hyper-?parameters?|learning rate|batch|epochs?|tuned|settings?|set to",
        "compute": r"GPUs?|CPUs?|TPUs?|hardware|memory|hours|machines?|cluster",
        "code": r"code|software|implementation|github|available|release\w*|open[- ]source",
        "data": r"data|available|release\w*|download|request",
        "limitations": r"limitations?|limited|shortcomings?|weakness\w*|caveats?|fails?|threats?",
        "ethics": r"ethic\w*|consent|review board|IRB|approv\w+|privacy|harm\w*",
        "contributions": r"contribut\w+|propos\w+|present\w*|introduc\w+|this (?:paper|work|study)",
    }.items()
}
