"""Choose what to do after grading: correct, ambiguous or incorrect.

- correct: at least `min_relevant` chunks at or above the threshold
- ambiguous: fewer than that, but something looked at least half-relevant
  (a chunk above the threshold, an ambiguous grade, or a middling score)
- incorrect: nothing relevant at all

That is the default ("counts") rule. The confidence-routed rule (`route_by_confidence`,
CragConfig(routing="confidence")) reads one number instead: `retrieval_confidence`, the best
passage's grade (its P(YES) where the grader gave log-probabilities, else the parsed grade)
blended with its retrieval score, and routes high (>= theta_high) / medium / low (< theta_low)
as correct / ambiguous / incorrect.

Each rule is a `Routing` in `ROUTINGS`, looked up once per question by its name
(`routing_named`); the pipeline asks the object, never the name.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass

from reader.crag.evidence import Candidate
from reader.crag.grade import AMBIGUOUS_SCORE

CORRECT = "correct"
AMBIGUOUS = "ambiguous"
INCORRECT = "incorrect"


def choose_route(
    candidates: Sequence[Candidate],
    *,
    threshold: float = 0.6,
    min_relevant: int = 2,
    ambiguous_floor: float = AMBIGUOUS_SCORE,
) -> str:
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
    parts = [f"{len(graded)} passages were found, {above} judged relevant; the best scored {best.score:.2f}"]
    reasons = [c.grade.reasoning for c in graded[:2] if c.grade.reasoning]
    if reasons:
        parts.append("grader notes: " + " / ".join(reasons))
    return "; ".join(parts) + "."


GRADE_WEIGHT = 0.8  # the rest of the confidence is the passage's retrieval score, relative to the best


def grade_value(candidate: Candidate) -> float:
    """The grader's P(YES) where it gave log-probabilities, else its parsed grade (0 ungraded)."""
    if candidate.grade is None:
        return 0.0
    return candidate.grade.p_yes if candidate.grade.p_yes is not None else candidate.grade.score


def retrieval_confidence(candidates: Sequence[Candidate]) -> float:
    """How sure the first retrieval is that it holds the answer: over its graded passages, the
    best of GRADE_WEIGHT * grade + (1 - GRADE_WEIGHT) * (fused score / the best fused score).
    The best passage, not the mean: one passage that answers is enough, and a mean falls with
    every unrelated passage retrieved beside it. 0.0 when nothing was graded."""
    graded = [c for c in candidates if c.grade is not None]
    if not graded:
        return 0.0
    best_fused = max(max(0.0, c.fused_score) for c in graded)
    value = max(
        GRADE_WEIGHT * grade_value(c)
        + (1 - GRADE_WEIGHT) * (max(0.0, c.fused_score) / best_fused if best_fused > 0 else 1.0)
        for c in graded
    )
    return round(value, 3)


def route_by_confidence(value: float, *, theta_high: float = 0.7, theta_low: float = 0.3) -> str:
    """correct (high) at or above theta_high, incorrect (low) below theta_low, else ambiguous."""
    if value >= theta_high:
        return CORRECT
    if value < theta_low:
        return INCORRECT
    return AMBIGUOUS


@dataclass(frozen=True)
class Routing:
    """A routing rule: how the first retrieval's grades choose the route (and its confidence),
    which graded passages count as evidence, and what else the rule does."""

    route: Callable[
        [Sequence[Candidate], object], tuple[str, float]
    ]  # (candidates, config) -> route, confidence
    keeps: Callable[[Candidate, float], bool]  # (candidate, threshold) -> is it evidence?
    confirms: bool  # re-grade the best batch-graded passages one by one (`confirm_top`) and route on those
    fallback_when_low: bool  # an incorrect route consults the fallback sources even when something was kept


def _route_by_counts(candidates: Sequence[Candidate], config) -> tuple[str, float]:
    route = choose_route(candidates, threshold=config.threshold, min_relevant=config.min_relevant)
    return route, confidence(candidates)


def _route_on_confidence(candidates: Sequence[Candidate], config) -> tuple[str, float]:
    value = retrieval_confidence(candidates)
    return route_by_confidence(value, theta_high=config.theta_high, theta_low=config.theta_low), value


def _graded_at_least(candidate: Candidate, threshold: float) -> bool:
    return candidate.grade is not None and grade_value(candidate) >= threshold


ROUTINGS: dict[str, Routing] = {
    "counts": Routing(_route_by_counts, Candidate.passes, confirms=False, fallback_when_low=False),
    "confidence": Routing(_route_on_confidence, _graded_at_least, confirms=True, fallback_when_low=True),
}


def routing_named(name: str) -> Routing:
    """The routing rule of that name (`CragConfig.routing`)."""
    try:
        return ROUTINGS[name]
    except KeyError:
        raise ValueError(f"unknown CRAG routing {name!r}: one of {', '.join(ROUTINGS)}") from None
