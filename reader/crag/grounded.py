"""The groundedness check of an answer, done by the deep-read audit machinery.

The answer is audited sentence by sentence (reader.audit.loop.audit_text)
against the evidence it was generated from — the refined passages — with the
verifier role, and the deterministic guards check its numbers and names
against the full text of those passages. The verifier's prompt
(prompts/check_answer.j2) begins with the answer prompt's system message and
passages, word for word, so a server's prompt cache reads them once.
`grounded` is true only when every sentence is supported; a sentence the
verifier left unanswered, or could not check at all (its reply unreadable, or
not trusted after it said YES to the check's control claim), counts against it
here, since a grounded flag must not rest on a benefit of the doubt. The
sentences found supported are returned too: a refused answer may keep them.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import NamedTuple

from reader.audit.citations import content_stems
from reader.crag.evidence import Candidate
from reader.llm.base import LLM
from reader.prompts import messages
from reader.text.split import split_sentences


class Groundedness(NamedTuple):
    grounded: bool
    reason: str  # one line: why (or why not)
    supported: tuple[str, ...] = ()  # the sentences (as audited, without markers) found supported


def audit_grounded(
    answer: str, evidence: Sequence[Candidate], verifier: LLM, *, max_workers: int = 4, checker=None
) -> Groundedness:
    """`evidence` is the answer's, in citation order: the check's prompt repeats the answer
    prompt's passages word for word. With a `checker` (reader.audit.checking.CheckerBand), the
    trained claim checker decides the sentences it is sure of, as in the audit."""
    from reader.audit.loop import SUPPORTED

    sentences = _audited_sentences(answer, evidence, verifier, max_workers, checker)
    grounded, reason = _judged(sentences)
    return Groundedness(grounded, reason, tuple(s.text for s in sentences if s.verdict == SUPPORTED))


def _audited_sentences(answer: str, evidence: Sequence[Candidate], verifier: LLM, max_workers: int, checker):
    from reader.audit.guards import PaperFacts
    from reader.audit.loop import audit_text
    from reader.audit.verify import EvidenceRef

    refs = [
        EvidenceRef(c.chunk_id, c.page_start or 1, c.page_end or c.page_start or 1, c.refined or c.text)
        for c in evidence
    ]
    facts = PaperFacts.from_texts([t for c in evidence for t in (c.text, c.source_label)])
    paper_id = next((c.paper_id for c in evidence if c.paper_id), None)
    result = audit_text(
        answer,
        paper_id=paper_id,
        verifier=verifier,
        facts=facts,
        evidence_for=lambda batch: refs,
        max_workers=max_workers,
        stage="crag-check",
        checker=checker,
        # the answer prompt's passages word for word, not each claim's excerpts: one prompt cache
        prompt_for=lambda claims, _own: messages("check_answer", evidence=refs, claims=claims),
    )
    return result.sentences


def _judged(sentences) -> tuple[bool, str]:
    """Whether every audited sentence is supported, and why (or why not) in one line."""
    from reader.audit.loop import SUPPORTED, UNANSWERED, UNCHECKED, UNSUPPORTED

    total = len(sentences)
    if total == 0:
        return False, "the answer has no sentence to check"
    unsupported = [s for s in sentences if s.verdict == UNSUPPORTED]
    unanswered = [s for s in sentences if s.verdict == UNANSWERED]
    unchecked = [s for s in sentences if s.verdict == UNCHECKED]
    supported = sum(1 for s in sentences if s.verdict == SUPPORTED)
    if supported == total:
        return True, (
            "its one sentence supported by the kept evidence"
            if total == 1
            else f"all {total} sentences supported by the kept evidence"
        )
    of_total = f"of {total} sentence{'' if total == 1 else 's'}"
    parts = []
    if unsupported:
        first = unsupported[0]
        why = "; ".join(first.reasons) or "verifier: NO"
        parts.append(f'{len(unsupported)} {of_total} unsupported (e.g. "{first.text[:120]}": {why})')
    if unchecked:  # its reply unreadable, the claim left out twice, or the reply not trusted
        why = unchecked[0].reasons[-1] if unchecked[0].reasons else "not checked"
        parts.append(f"{len(unchecked)} {of_total} not checked ({why})")
    if unanswered:
        parts.append(f"the verifier gave no verdict for {len(unanswered)} {of_total}")
    return False, "; ".join(parts)


MIN_OWN_STEMS = 3


def unfounded_sentences(answer: str, question: str, evidence_texts: Sequence[str]) -> list[str]:
    """The answer's sentences that share no word with their passages beyond the question's: at
    least MIN_OWN_STEMS content words of their own, none of them in any passage. "It achieves high
    accuracy in various medical imaging tasks, including brain imaging …", written from "Figure 1:
    Overview of SPECTER." alone, passed the verifier; a small writer copies its passages, so an
    answer of its own words only has made them up. (Over 142 stored follow-up answers and 74
    question-benchmark answers, this finds 4 and 0: that one, a made-up description of a paper's
    vectors twice, and a filler sentence.)"""
    asked = content_stems(question)
    found: set[str] = set()
    for text in evidence_texts:
        found |= content_stems(text)
    out = []
    for sentence in split_sentences(answer):
        own = content_stems(sentence) - asked  # numbers, citation markers among them, are no stems
        if len(own) >= MIN_OWN_STEMS and not own & found:
            out.append(sentence)
    return out
