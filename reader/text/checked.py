"""Critique sentences the tool states itself, from a rule over the paper's text.

What a paper lacks (a variance for its results, a section on its limitations) is a reviewer's
point, but a sentence saying so has no passage to support it: the verifier cannot confirm an
absence, and the small writer's paraphrase of the finding was flagged or turned into something
else. So the tool writes the sentence and the audit takes the rule's finding as its reason
(reader.audit.loop, `stated`).
"""

from __future__ import annotations

import re
from dataclasses import dataclass

from reader.text.material import (
    LIMITATIONS,
    abstract_sentences,
    ordered_figures,
    section_sentences,
    variance_sentence,
)

STATED = "stated by the tool from a check of the paper's text (no verifier call)"
RESULT_FIGURES = 3  # of the abstract's, named in the sentence on variance


@dataclass(frozen=True)
class CheckedFact:
    heading: str  # the critique heading it goes under
    sentence: str  # as the note gives it
    finding: str  # what the check found: the audit's reason


@dataclass(frozen=True)
class PaperChecks:
    """What the rules find in a paper's text, read once: an absence is claimed of the whole
    paper, so every section read counts (references are not among them)."""

    variance: str | None  # the first sentence giving a variance, an interval or a significance test
    limitations: str | None  # the first sentence naming limitations ("" when only a title does)
    result_figures: list[str]  # the abstract's decimals and percentages, in order
    n_sections: int


def paper_checks(sections) -> PaperChecks:
    sentences = section_sentences(sections)
    named = next((s for s in sentences if LIMITATIONS.search(s)), None)
    if named is None and any(LIMITATIONS.search(s.title) for s in sections):
        named = ""
    figures = ordered_figures(" ".join(abstract_sentences(sections)))
    return PaperChecks(
        variance=variance_sentence(sentences),
        limitations=named,
        result_figures=[n for n in figures if "%" in n or "." in n][:RESULT_FIGURES],
        n_sections=len(sections),
    )


def _listed(items: list[str]) -> str:
    return items[0] if len(items) == 1 else ", ".join(items[:-1]) + " and " + items[-1]


def checked_facts(checks: PaperChecks) -> list[CheckedFact]:
    """The critique's sentences found by rule: no variance or significance reported anywhere
    (naming the abstract's result figures); limitations discussed nowhere."""
    facts = []
    if checks.variance is None:
        shown = checks.result_figures
        sentence = (
            f"The abstract's figures ({_listed(shown)}) are given without a standard deviation, "
            "confidence interval or significance test, and none is reported elsewhere in the paper."
            if shown
            else "No result of the paper is given with a standard deviation, confidence interval "
            "or significance test."
        )
        finding = (
            "no sentence of the paper (references aside) gives a standard deviation, confidence "
            "interval, significance test, error bar or ± range"
        )
        facts.append(CheckedFact("Weaknesses", sentence, finding))
    if checks.limitations is None:
        facts.append(
            CheckedFact(
                "Threats to validity",
                "No section or sentence of the paper discusses its limitations or threats to validity.",
                f"no section title or sentence of the paper's {checks.n_sections} sections names "
                "limitations or threats to validity",
            )
        )
    return facts


_NEGATED = r"\b(?:not|no|never|nor|without|lacks?|lacking|fails? to|absence of|omits?)\b[^.;:]{0,60}?"
_CLAIMS_NO_LIMITATIONS = re.compile(
    _NEGATED + r"\b(?:limitations?|threats? to validity|shortcomings)\b", re.I
)
_CLAIMS_NO_VARIANCE = re.compile(
    _NEGATED
    + r"\b(?:standard deviations?|confidence intervals?|significance tests?|statistical significance|"
    r"variances?|error bars?|standard errors?)\b",
    re.I,
)


def _quoted(sentence: str) -> str:
    return "“" + (sentence if len(sentence) <= 160 else sentence[:157].rstrip() + "…") + "”"


def contradicted_absence(sentence: str, checks: PaperChecks) -> list[str]:
    """Reasons a sentence's claim that the paper lacks something is false, by the same rules:
    "does not mention any limitations" of a paper that discusses them, "no standard deviation"
    of one that reports a variance ([] when neither)."""
    reasons = []
    if checks.limitations is not None and _CLAIMS_NO_LIMITATIONS.search(sentence):
        where = f": {_quoted(checks.limitations)}" if checks.limitations else ""
        reasons.append(f"the paper does discuss limitations{where}")
    if checks.variance is not None and _CLAIMS_NO_VARIANCE.search(sentence):
        reasons.append(f"the paper does report a variance or significance test: {_quoted(checks.variance)}")
    return reasons
