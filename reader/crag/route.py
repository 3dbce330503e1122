"""Choose what to do after grading: correct, ambiguous or incorrect.

- correct: at least `min_relevant` chunks at or above the threshold
- ambiguous: fewer than that, but something looked at least half-relevant
  (a chunk above the threshold, an ambiguous grade, or a middling score)
- incorrect: nothing relevant at all
"""

from __future__ import annotations

from collections.abc import Sequence

from reader.crag.evidence import Candidate
from reader.crag.grade import AMBIGUOUS_SCORE

CORRECT = "correct"
AMBIGUOUS = "ambiguous"
INCORRECT = "incorrect"


def choose_route(candidates: Sequence[Candidate], *, threshold: float = 0.6,
                 min_relevant: int = 2, ambiguous_floor: float = AMBIGUOUS_SCORE) -> str:
    graded = [c.grade for c in candidates if c.grade is not None]
    relevant = sum(1 for g in graded if g.score >= threshold)
    if relevant >= min_relevant:
        return CORRECT
    if relevant or any(g.ambiguous or g.score >= ambiguous_floor for g in graded):
        return AMBIGUOUS
    return INCORRECT


def confidence(candidates: Sequence[Candidate]) -> float:
    """How sure the first retrieval is: the mean grade weighted by each chunk's fused
    retrieval score, so a relevant top-ranked chunk counts more than a relevant tail.

    0.0 when nothing was retrieved; equal weights when the fused scores are all zero.
    """
    graded = [c for c in candidates if c.grade is not None]
    if not graded:
        return 0.0
    weights = [max(0.0, c.fused_score) for c in graded]
    if sum(weights) <= 0:
        weights = [1.0] * len(graded)
    value = sum(w * c.grade.score for w, c in zip(weights, graded)) / sum(weights)
    return round(value, 3)


def why_missed(candidates: Sequence[Candidate], threshold: float) -> str:
    """One or two lines telling the rewriter what the first retrieval got wrong."""
    graded = sorted((c for c in candidates if c.grade is not None), key=lambda c: -c.score)
    if not graded:
        return "the search returned no passages at all."
    above = sum(1 for c in graded if c.score >= threshold)
    best = graded[0]
    parts = [f"{len(graded)} passages were found, {above} judged relevant; "
             f"the best scored {best.score:.2f}"]
    reasons = [c.grade.reasoning for c in graded[:2] if c.grade.reasoning]
    if reasons:
        parts.append("grader notes: " + " / ".join(reasons))
    return "; ".join(parts) + "."
