"""How a sentence's verdict was reached, said plainly, and which sentences the flagged ratio counts.

    verifier, checker, extraction  a model checked it (the verifier's P(YES), the claim checker's score,
                                   or a number or comparison filled in from the passage)
    guard                          a rule over the paper's facts decided it (a number, name or citation the
                                   paper does not have, "says nothing specific", a claimed absence the
                                   paper contradicts)
    restated                       it restates one sentence of the paper in the paper's words (no model)
    tool                           the tool's own finding from the rigour checklist (no model)
    unchecked                      nothing decided it (the verifier's reply could not be read)

The flagged ratio that triggers a rewrite is the flagged sentences among those a model or a guard
checked (`CHECKED`): restated sentences and the tool's findings are passed by rule, and counting
them made drafts at 0.33-0.38 flagged among the model-checked sentences read 0.17-0.25 and go
unrewritten; they are reported apart.
"""

from __future__ import annotations

from dataclasses import dataclass, field

VERIFIER, CHECKER, EXTRACTION, GUARD, RESTATED, TOOL, UNCHECKED = (
    "verifier",
    "checker",
    "extraction",
    "guard",
    "restated",
    "tool",
    "unchecked",
)
MODELS = (VERIFIER, CHECKER, EXTRACTION)
CHECKED = (*MODELS, GUARD)  # the sentences the flagged ratio counts
KINDS = ("model", GUARD, RESTATED, TOOL, UNCHECKED)  # as the notes count them

# the reason of a sentence the tool states itself (reader.deepread.checked), before its finding
STATED = "stated by the tool from a check of the paper's text (no verifier call)"

# the words the reasons begin with (reader.audit.loop, reader.deepread.checked), for verdicts stored
# before decided_by was
_STATED, _RESTATES, _CHECKER_INSTEAD, _EXTRACTION = (
    "stated by the tool",
    "restates a sentence of the paper",
    "claim checker decided instead",
    "extraction:",
)


@dataclass(frozen=True)
class Stated:
    """A sentence the tool states itself: the finding (the audit's reason), the checklist item it
    states and that item's evidence (reader.audit.verify.EvidenceRef; none for "not found")."""

    finding: str
    item: str = ""
    evidence: tuple = field(default=())


def kind_of(decided_by: str) -> str:
    """model, guard, restated, tool or unchecked."""
    return "model" if decided_by in MODELS else decided_by


def settle(how: str, verdict: str, guard_reasons: list[str], reasons: list[str]) -> str:
    """Who decided a fresh verdict: `how` (the path it took), unless it is unchecked, or a guard
    made it unsupported, or the claim checker decided a YES the verifier's reply could not be
    trusted with."""
    if verdict == "unchecked":
        return UNCHECKED
    if verdict == "unsupported" and guard_reasons:
        return GUARD
    if how == VERIFIER and any(r.startswith(_CHECKER_INSTEAD) for r in reasons):
        return CHECKER
    return how


def from_reasons(verdict: str, reasons: list[str], p_yes: float | None = None, answer: str = "") -> str:
    """Who decided a verdict stored before decided_by was kept, read from its reasons (and the
    verifier's answer word and P(YES) where it gave them)."""
    reasons = [str(r) for r in reasons or []]
    if verdict == "unchecked":
        return UNCHECKED
    first = next((i for i, r in enumerate(reasons) if r.startswith((_STATED, _RESTATES))), None)
    if first is not None:
        if verdict == "unsupported" and first > 0:
            return GUARD
        return TOOL if reasons[first].startswith(_STATED) else RESTATED
    if any(r.startswith(_CHECKER_INSTEAD) for r in reasons):
        return CHECKER
    if verdict == "unsupported" and any(r.startswith(_EXTRACTION) for r in reasons):
        return EXTRACTION
    if verdict == "unsupported" and reasons and not reasons[0].startswith(("verifier", "claim checker")):
        return GUARD
    asked = answer in ("YES", "NO") or p_yes is not None or any(r.startswith("verifier") for r in reasons)
    if not asked and any(r.startswith("claim checker") for r in reasons):
        return CHECKER
    return VERIFIER


def described(
    decided_by: str,
    *,
    p_yes: float | None = None,
    p_checker: float | None = None,
    page: str = "",
    item: str = "",
) -> dict:
    """The decision as JSON and the notes carry it: {"kind", "by", "score", "page", "item", "label"}."""
    score = p_yes if decided_by == VERIFIER else p_checker if decided_by == CHECKER else None
    label = {
        VERIFIER: "verifier" + (f" P(YES) {p_yes:.2f}" if p_yes is not None else ""),
        CHECKER: "claim checker" + (f" {p_checker:.2f}" if p_checker is not None else ""),
        EXTRACTION: "extraction",
        GUARD: "guard",
        RESTATED: "restated" + (f", {page}" if page else ""),
        TOOL: "tool's finding" + (f": {item}" if item else "") + (f", {page}" if page else ""),
        UNCHECKED: "unchecked",
    }.get(decided_by, decided_by)
    return {
        "kind": kind_of(decided_by),
        "by": decided_by,
        "score": round(score, 4) if score is not None else None,
        "page": page,
        "item": item,
        "label": label,
    }


def decision_of(sentence) -> dict:
    """`described` for a verdict, fresh (reader.audit.loop.SentenceResult) or stored
    (sentence_verdicts): its decided_by, else read from its reasons; the page of its first evidence
    for a restated sentence or a tool's finding."""
    p_yes, p_checker = getattr(sentence, "p_yes", None), getattr(sentence, "p_checker", None)
    reasons = list(getattr(sentence, "reasons", None) or [])
    by = getattr(sentence, "decided_by", None) or from_reasons(
        sentence.verdict, reasons, p_yes, getattr(sentence, "llm_answer", "") or ""
    )
    evidence = getattr(sentence, "evidence", None) or []
    first = evidence[0] if evidence else None
    page = ""
    if first is not None and by in (RESTATED, TOOL) and getattr(first, "page_start", None):
        end = first.page_end or first.page_start
        page = f"p. {first.page_start}" if end == first.page_start else f"pp. {first.page_start}–{end}"
    item = getattr(sentence, "checklist_item", None) or ""
    return described(by, p_yes=p_yes, p_checker=p_checker, page=page, item=item)
