"""A gain stated as a level: "tuning the 12 default features … yields BLEU-4 scores of around 2 BLEU
points" of a paper where 2 BLEU points is what tuning large feature sets gains over those 12
("significant improvements of around 2 BLEU points over tuning the 12 default features").

    gain_as_level_reasons(sentence, facts) -> ["gives 2 as a score, but the paper gives 2 … only as
        a gain: “… improvements of around 2 BLEU points over …”"]

A sentence states a level when it gives a figure as a score, an accuracy or what something
reaches or yields ("scores of around 2 BLEU points", "an accuracy of 85.1", "achieves 27.2 BLEU")
and says no word of change about it. The paper gives that figure only as a gain when every place
its text prints it is inside a phrase of change: "improvements of 2", "gains 0.8 BLEU points", "by
39%", "+2.3", "2 points over". A figure the paper also prints as a level, or not at all (the
guards' "not found" says that), is left alone.
"""

from __future__ import annotations

import re

_FIGURE = r"\d+(?:\.\d+)?"
# "scores of around 2", "an accuracy of 85.1", "achieves 27.2", "yields BLEU-4 scores of 2"
_LEVEL = re.compile(
    rf"\b(?:scores?|accuracy|precision|recall|F1|BLEU(?:-\d)?|ROUGE(?:-\w+)?|perplexity|error rate)"
    rf"\s+(?:of\s+)?(?:(?:around|about|roughly|approximately|nearly|almost|over)\s+)?({_FIGURE})"
    rf"|\b(?:achiev\w*|reach\w*|obtain\w*|yield\w*|scor\w*)\s+(?:an?\s+)?(?:\w+\s+){{0,2}}?"
    rf"(?:of\s+)?(?:(?:around|about)\s+)?({_FIGURE})",
    re.I,
)
_CHANGE = re.compile(
    r"\b(?:improv\w*|gain\w*|increas\w*|decreas\w*|reduc\w*|drops?|boost\w*|better|worse|higher|lower|"
    r"outperform\w*|advantage|difference|delta)\b|\+\s*$|\bby\s+(?:(?:around|about|up to)\s+)?$",
    re.I,
)
WINDOW = 60  # characters either side of a figure in which a word of change makes it a gain


_UNIT = re.compile(r"\s*((?:[A-Za-z%][\w%-]*\s*){1,2})")


def _levels(sentence: str) -> list[tuple[str, str]]:
    """(figure, its unit as written after it: "BLEU points", "%") of each figure the sentence gives
    as a level, when it says no word of change; a figure without a unit is left out (a bare "2"
    cannot be told from the paper's other 2s)."""
    if _CHANGE.search(sentence):
        return []
    out = []
    for m in _LEVEL.finditer(sentence):
        figure, end = (m.group(1), m.end(1)) if m.group(1) else (m.group(2), m.end(2))
        unit = _UNIT.match(sentence[end:])
        if unit:
            out.append((figure, " ".join(unit.group(1).split()).rstrip(".,;")))
    return out


def printed_only_beside(pattern: str, text: str, beside) -> str | None:
    """Where every place the text prints `pattern` has `beside(before, after)` true of the WINDOW
    characters either side, the first such place (whole words at its two ends); None when one
    place has not, or the text never prints it. Shared with reader.audit.correlations."""
    first = None
    for m in re.finditer(pattern, text):
        before, after = text[max(0, m.start() - WINDOW) : m.start()], text[m.end() : m.end() + WINDOW]
        if not beside(before, after):
            return None
        first = first or (before.partition(" ")[2] + m.group(0) + after.rpartition(" ")[0])
    return first


def _only_as_gain(figure: str, unit: str, text: str) -> str | None:
    """Where the text prints `figure` followed by `unit` only inside phrases of change, the first
    such phrase; None when it prints it once as anything else, or not at all."""
    return printed_only_beside(
        rf"(?<![\w.]){re.escape(figure)}\s*{re.escape(unit.lower())}",
        text,
        lambda before, after: bool(
            _CHANGE.search(before) or re.match(r"\s*(?:over|better|higher|more)\b", after)
        ),
    )


def gain_as_level_reasons(sentence: str, facts) -> list[str]:
    """Why a figure the sentence gives as a level is the paper's gain ([] when none is);
    `facts`: reader.audit.guards.PaperFacts (its text as printed, lower case)."""
    reasons = []
    for figure, unit in _levels(sentence):
        where = _only_as_gain(figure, unit, facts.flat)
        if where is not None:
            reasons.append(
                f"gives {figure} {unit} as a level, but the paper gives it only as a gain: “… {where.strip()} …”"
            )
    return reasons
