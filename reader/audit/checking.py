"""The trained claim checker's part in the audit: decide what it is sure of, pass on the rest.

Every sentence is scored against each of its own evidence excerpts (reader.audit.evidence.
excerpts) by the claim checker (reader.checker.model), and the best excerpt's score is kept.
At or above `high` the sentence is supported, at or below `low` it is not, and the LLM verifier
is not asked; in between (and for a sentence the checker cannot read, such as a Chinese one:
it was trained on English) the verifier's terse YES/NO in batches of 4 decides, as before. The
deterministic guards apply to every sentence either way. `low` and `high` (READER_CHECKER_LOW /
_HIGH) are chosen on half A of eval/audit_dev.jsonl (docs/measurements/audit.md has the curve); a stronger
verifier warrants a wider band (more sentences sent to it), a weaker one a narrower band.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Protocol

from reader.audit.evidence import best_first
from reader.audit.verify import EvidenceRef
from reader.text.tokens import CJK_CHARS


class Scorer(Protocol):
    def score(self, claims: list[str], evidence: list[list[str]]) -> list: ...  # list of Scored


@dataclass
class CheckerBand:
    """The claim checker with its operating point: sure at or below `low` and at or above `high`
    (the defaults are settings: READER_CHECKER_LOW / _HIGH, reader.config). With `extraction`
    (READER_EXTRACTION), numbers and comparisons are also checked by extraction, asked of the
    verifier (reader.audit.extraction): a contradiction flags the sentence, a confirmation is a
    second signal. `control`: whether each verify batch gets a control claim
    (reader.audit.control)."""

    scorer: Scorer | None  # None: the checker is off, the band carries the extraction checks only
    low: float
    high: float
    extraction: bool = False
    control: bool = True  # a control claim in each verify batch (READER_VERIFY_CONTROL)

    @property
    def middle(self) -> float:
        return (self.low + self.high) / 2


@dataclass
class CheckerView:
    """What the checker made of one sentence."""

    p_supported: float | None  # None: not scored (no excerpt, or a language it cannot read)
    decided: str | None  # "supported" | "unsupported" | None (unsure: the verifier decides)
    evidence: list[EvidenceRef]  # the sentence's own excerpts, the best first

    def reason(self, band: CheckerBand) -> str:
        if self.p_supported is None:
            return "claim checker: not scored (it reads English only); the verifier decided"
        p = self.p_supported
        if self.decided == "supported":
            return f"claim checker: supported (P {p:.2f} ≥ {band.high:.2f})"
        if self.decided == "unsupported":
            return f"claim checker: not supported (P {p:.2f} ≤ {band.low:.2f})"
        return f"claim checker unsure (P {p:.2f}, between {band.low:.2f} and {band.high:.2f}); the verifier decided"


def readable(sentence: str) -> bool:
    """Can the checker read this sentence? It was trained on English claims."""
    return not CJK_CHARS.search(sentence)


def check_sentences(
    sentences: list[str], own: list[list[EvidenceRef]], band: CheckerBand | None
) -> list[CheckerView]:
    """Score each sentence against each of its own excerpts; decide where the checker is sure.
    Each view's excerpts come best first: the checker's best, else the one sharing the most
    rare words with the sentence (reader.audit.evidence.best_first)."""
    views = [CheckerView(None, None, best_first(s, e)) for s, e in zip(sentences, own)]
    if band is None or band.scorer is None:
        return views
    todo = [i for i, (s, e) in enumerate(zip(sentences, own)) if e and readable(s)]
    scored = band.scorer.score([sentences[i] for i in todo], [[x.text for x in own[i]] for i in todo])
    for i, result in zip(todo, scored):
        p = result.p_supported
        decided = (
            "supported"
            if p >= band.high and band.high < 1.0
            else "unsupported"
            if p <= band.low and band.low > 0.0
            else None
        )  # 0 and 1: never sure
        ranked = views[i].evidence
        if result.best is not None:
            best = own[i][result.best]
            ranked = [best] + [e for e in ranked if e is not best]
        views[i] = CheckerView(p, decided, ranked)
    return views
