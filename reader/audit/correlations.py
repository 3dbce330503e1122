"""A correlation stated as a score: "the average human score for SQuALITY is 0.89 on a 100-point
rating scale" of a paper that prints 0.89 only as a correlation ("… highly correlates with scores
from a full annotation workload (0.89 Kendall's τ …)").

    correlation_as_score_reasons(sentence, facts) -> ["gives 0.89 as a score, but the paper gives
        it only as a correlation or agreement: “… (0.89 kendall's τ using 50% judgments) …”"]

A sentence gives a figure between 0 and 1 as a score when a word of level (score, rating,
accuracy, average, F1 …) comes shortly before it and the sentence names no correlation or
agreement at all. The paper gives that figure only as a correlation when every place its text
prints it has a word of correlation or agreement (correlation, Kendall, Spearman, Pearson, τ, ρ,
kappa, κ, Krippendorff, agreement) within reader.audit.gains.WINDOW characters. A figure the paper also prints as
anything else, or not at all (the guards' "not found" says that), is left alone.
"""

from __future__ import annotations

import re

from reader.audit.gains import printed_only_beside

_FIGURE = re.compile(r"(?<![\w.])(0?\.\d{2,3})(?![\d.]\d)")
_LEVEL_BEFORE = re.compile(
    r"\b(?:scores?|scored|rating|rated|accuracy|average|mean|F1|precision|recall|performance|"
    r"BLEU|ROUGE(?:-\w+)?|achiev\w*|reach\w*|obtain\w*)\b[^.;:]{0,40}$",
    re.I,
)
_CORRELATION = re.compile(
    r"correlat\w*|\bkendall|\bspearman|\bpearson|τ|ρ|\btau\b|\brho\b|\bkappa\b|κ|krippendorff|"
    r"\bagree(?:ment|s|d)?\b|\biaa\b",
    re.I,
)


def _scores(sentence: str) -> list[str]:
    """The figures the sentence gives as scores, when it names no correlation."""
    if _CORRELATION.search(sentence):
        return []
    return [m.group(1) for m in _FIGURE.finditer(sentence) if _LEVEL_BEFORE.search(sentence[: m.start()])]


def _only_as_correlation(figure: str, text: str) -> str | None:
    """Where the text prints `figure` only beside a word of correlation, the first such place;
    None when it prints it once without one, or not at all."""
    digits = figure.lstrip("0")  # ".89" and "0.89" are one figure
    return printed_only_beside(
        rf"(?<![\w.])0?{re.escape(digits)}(?![\d])",
        text,
        lambda before, after: bool(_CORRELATION.search(before) or _CORRELATION.search(after)),
    )


def correlation_as_score_reasons(sentence: str, facts) -> list[str]:
    """Why a figure the sentence gives as a score is the paper's correlation ([] when none is);
    `facts`: reader.audit.guards.PaperFacts (its text as printed, lower case)."""
    reasons = []
    for figure in dict.fromkeys(_scores(sentence)):
        where = _only_as_correlation(figure, facts.flat)
        if where is not None:
            reasons.append(
                f"gives {figure} as a score, but the paper gives it only as a correlation or agreement: "
                f"“… {where.strip()} …”"
            )
    return reasons
