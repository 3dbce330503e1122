"""The deep read: a critique and a synthesis of one paper, each audited sentence by sentence.

    paper (DB) ──context within a token budget (context.py)──▶ write one heading at a time
        (writer.py) ──▶ tidy (tidy.py) ──▶ audit_loop ──▶ store

Critique and synthesis run concurrently and are stored together in one
transaction at the end, so an interrupted read leaves no half-written analysis.
"""

from __future__ import annotations

import dataclasses
import time
from collections.abc import Callable
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, field

from reader.audit.citations import ReferenceList, content_stems, reference_list
from reader.audit.decided import TOOL, Stated
from reader.audit.guards import PaperFacts
from reader.audit.loop import (
    AuditRequest,
    AuditResult,
    EvidenceRef,
    LoopResult,
    audit_loop,
    mark_unsupported,
    run_audit,
)
from reader.checklist import Checklist, build_checklist, paper_passages, save_checklist
from reader.deepread.absence import PaperStatements, untested
from reader.deepread.assumed import PaperAssumptions
from reader.deepread.checked import (
    PaperChecks,
    claimed_presence,
    claimed_subjectivity,
    contradicted_absence,
    contradicted_stability,
    paper_checks,
)
from reader.deepread.context import PaperContext, PaperMaterial, build_context, load_material
from reader.deepread.follow_on import follow_ons
from reader.deepread.material import section_sentences
from reader.deepread.number_owners import NumberOwners
from reader.deepread.polarity import PaperPolarity
from reader.deepread.tidy import (
    BARE_LEAD_IN,
    CAPTION,
    ECHOES_HEADING,
    EMPTY_BULLET,
    EMPTY_HEADING,
    OTHER_WORK,
    REPEATS,
    Tidied,
    third_person,
    tidy,
)
from reader.deepread.writer import Request, headings, rewrite_document, write_document
from reader.prompts import writes_chinese
from reader.text.split import sentence_spans, split_sentences

KINDS = ("critique", "synthesis")


def _removals(tidied: Tidied) -> str:
    """What tidying took out of a draft, in words: "3 repeated sentences, 2 empty bullets"."""
    parts = [
        (tidied.count(REPEATS), "repeated sentence", "repeated sentences"),
        (
            tidied.count(ECHOES_HEADING),
            "sentence that only restated its heading",
            "sentences that only restated their heading",
        ),
        (tidied.count(CAPTION), "caption pasted as a sentence", "captions pasted as sentences"),
        (
            tidied.count(OTHER_WORK),
            "cited work's result under Key results",
            "cited works' results under Key results",
        ),
        (tidied.count(BARE_LEAD_IN), "lead-in that named nothing", "lead-ins that named nothing"),
        (tidied.count(EMPTY_BULLET), "empty bullet", "empty bullets"),
        (tidied.count(EMPTY_HEADING), "empty heading", "empty headings"),
    ]
    return ", ".join(f"{n} {one if n == 1 else many}" for n, one, many in parts if n)


def _shown(left_out: list[str], limit: int = 12) -> list[str]:
    """What the prompt names as left out: whole sections first, at most `limit`."""
    whole = [t for t in left_out if not t.endswith("(partly)")]
    partly = [t for t in left_out if t.endswith("(partly)")]
    names = whole + partly
    return names if len(names) <= limit else names[:limit] + [f"{len(names) - limit} more"]


@dataclass
class KindResult:
    kind: str
    loop: LoopResult
    left_out: list[str]

    def to_json(self) -> dict:
        final = self.loop.final
        return {
            "kind": self.kind,
            "final_text": self.loop.final_text,
            "flagged_ratio": final.flagged_ratio,
            "iterations": len(self.loop.iterations),
            "regenerations": self.loop.regenerations,
            "flagged_per_iteration": [it.audit.n_flagged for it in self.loop.iterations],
            "sentences_per_iteration": [len(it.audit.sentences) for it in self.loop.iterations],
            # the flagged ratio's denominator: the sentences a model or a guard checked
            "checked_per_iteration": [it.audit.n_checked for it in self.loop.iterations],
            "ratio_per_iteration": [it.audit.flagged_ratio for it in self.loop.iterations],
            "n_unchecked": final.n_unchecked,
            "n_unanswered": final.n_unanswered,
            "left_out_sections": self.left_out,
            "rewrite_notes": list(self.loop.rewrite_notes),
            "sentences": [s.to_json() for s in final.sentences],
        }


@dataclass
class DeepReadResult:
    paper_id: str
    analyses: list[KindResult] = field(default_factory=list)
    seconds: float = 0.0
    # the follow-up questioner's answers (reader.crag.followup.FollowUps), when it ran
    followups: object = None
    checklist: Checklist | None = None  # the rigour checklist the critique rests on

    @property
    def llm_calls(self) -> int:
        extraction = self.checklist.llm_calls if self.checklist is not None else 0
        return sum(k.loop.llm_calls for k in self.analyses) + extraction

    @property
    def tokens(self) -> int:
        return sum(k.loop.tokens for k in self.analyses)

    def tool_findings(self) -> set[str]:
        """The final documents' sentences the tool stated itself from the checklist (decided by TOOL)."""
        return {s.text for k in self.analyses for s in k.loop.final.sentences if s.decided_by == TOOL}

    def to_json(self) -> dict:
        return {
            "paper_id": self.paper_id,
            "analyses": [k.to_json() for k in self.analyses],
            "llm_calls": self.llm_calls,
            "tokens": self.tokens,
            "seconds": round(self.seconds, 2),
            **({"followups": self.followups.to_json()} if self.followups is not None else {}),
            **({"checklist": self.checklist.to_json()} if self.checklist is not None else {}),
        }


@dataclass
class _Read:
    """What the critique's and the synthesis's runs share: the paper, its checklist and context,
    the generator, and the audit's request (verifier, search, checker, the paper's facts)."""

    paper_id: str
    material: PaperMaterial
    references: ReferenceList  # for the guard on citations (`_objections`)
    checklist: Checklist
    checks: PaperChecks
    statements: PaperStatements
    owners: NumberOwners  # which named systems each figure of the paper is given for
    polarity: PaperPolarity  # for sentences that turn round the paper sentence closest to them
    assumptions: PaperAssumptions  # for assumptions put on the paper that it does not state
    context: PaperContext
    generator: object
    audit: AuditRequest
    target_words: int
    output_language: str | None
    progress: Callable[[str], None]


def deep_read(
    paper_id: str,
    *,
    db,
    generator,
    verifier,
    search,
    on_progress: Callable[[str], None] | None = None,
    context_tokens: int | None = None,
    target_words: int | None = None,
    max_workers: int = 4,
    kinds: tuple[str, ...] = KINDS,
    output_language: str | None = None,
    yes_threshold: float | None = None,
    checker=None,
) -> DeepReadResult:
    """Generate, audit and store the critique and synthesis of a stored paper.

    db is a sessionmaker; search(query, paper_id) -> list[SearchHit].
    on_progress receives one-line messages such as "critique: iteration 0: 5/18 sentences unsupported".
    Sizes left as None follow the generator's capabilities (reader.llm.base.capabilities_of):
    small for the embedded model (2,400 paper tokens, ~600 words), larger for an endpoint
    or an LLM that does not say (12,000, ~1,200); the words are split evenly over the headings.
    """
    from reader.llm.base import capabilities_of

    started = time.perf_counter()
    capabilities = capabilities_of(generator)
    progress = on_progress or (lambda message: None)
    material, references, checklist = _material_and_checklist(
        db, paper_id, search, verifier, max_workers, progress
    )
    audit = _paper_audit(material, paper_id, verifier, max_workers, yes_threshold, checker, search=search)
    sentences = section_sentences(material.sections)
    stemmed = [frozenset(content_stems(s)) for s in sentences]  # once, for the three checks below
    read = _Read(
        paper_id,
        material,
        references,
        checklist,
        paper_checks(material.sections, checklist.findings),
        PaperStatements.of(sentences, stemmed),
        NumberOwners.of(sentences),
        PaperPolarity.of(sentences, stemmed),
        PaperAssumptions.of(sentences, stemmed),
        _context(material, context_tokens or capabilities.context_tokens, progress),
        generator,
        audit,
        target_words or capabilities.target_words,
        output_language,
        progress,
    )
    with ThreadPoolExecutor(max_workers=len(kinds)) as pool:
        results = list(pool.map(lambda kind: run_kind(kind, read), kinds))
    _store(db, read, results)
    return DeepReadResult(paper_id, results, time.perf_counter() - started, checklist=checklist)


def _absence_the_checklist_contradicts(sentence: str, read: _Read) -> list[str]:
    return contradicted_absence(sentence, read.checks)


def _absence_a_paper_sentence_contradicts(sentence: str, read: _Read) -> list[str]:
    return read.statements.contradicting(sentence)


def _claimed_untested(sentence: str, read: _Read) -> list[str]:
    return untested(sentence)


def _presence_the_checklist_contradicts(sentence: str, read: _Read) -> list[str]:
    return claimed_presence(sentence, read.checks)


def _stability_the_paper_contradicts(sentence: str, read: _Read) -> list[str]:
    return contradicted_stability(sentence, read.checks)


def _subjectivity_the_paper_lacks(sentence: str, read: _Read) -> list[str]:
    return claimed_subjectivity(sentence, read.checks)


# What a sentence says the paper lacks, leaves untested or has, in this order: the first check that
# objects gives the reasons, the rest are not tried.
_ABSENCE_CHECKS = (
    _absence_the_checklist_contradicts,
    _absence_a_paper_sentence_contradicts,
    _claimed_untested,
    _presence_the_checklist_contradicts,
    _stability_the_paper_contradicts,
    _subjectivity_the_paper_lacks,
)


def _objections(sentence: str, read: _Read) -> list[str]:
    """The deep read's own guard reasons: those of the first of `_ABSENCE_CHECKS` that objects,
    then a figure the paper gives only for other named systems, a sentence that turns round the
    paper sentence closest to it, an assumption the paper does not state, and a citation for something neither the reference's entry nor
    the paper's sentences citing it say."""
    absences = next((reasons for check in _ABSENCE_CHECKS if (reasons := check(sentence, read))), [])
    return (
        absences
        + read.owners.contradicting(sentence)
        + read.polarity.contradicting(sentence)
        + read.assumptions.unstated(sentence)
        + read.references.unattributed(sentence)
    )


def _material_and_checklist(
    db, paper_id: str, search, verifier, max_workers: int, progress: Callable[[str], None]
) -> tuple[PaperMaterial, ReferenceList, Checklist]:
    """The paper from the database, its reference list, and its rigour checklist (the rules,
    then the verifier's extraction for what they miss)."""
    from reader.store.db import transaction

    with transaction(db) as session:
        material = load_material(session, paper_id)
        references = reference_list(session, paper_id)
        passages = paper_passages(session, paper_id)
    checklist = build_checklist(
        paper_id, material.title, passages, search=search, llm=verifier, max_workers=max_workers
    )
    progress(
        f"checklist: {checklist.n_found} of {len(checklist.items)} items found"
        + (f" ({checklist.llm_calls} extraction calls)" if checklist.llm_calls else "")
    )
    return material, references, checklist


def _context(material: PaperMaterial, tokens: int, progress: Callable[[str], None]) -> PaperContext:
    context = build_context(material, tokens)
    if context.left_out:
        progress(f"context: {context.tokens} tokens; left out: {', '.join(context.left_out)}")
    else:
        progress(f"context: the whole paper, {context.tokens} tokens")
    return context


def run_kind(kind: str, read: _Read) -> KindResult:
    """One document written, audited and rewritten while too much of it is unsupported."""
    material, progress = read.material, read.progress
    request = Request(
        kind=kind,
        title=material.title,
        language=material.language,
        context=read.context.text,
        left_out=_shown(read.context.left_out),
        sections=material.sections,
        paper_id=read.paper_id,
        words_per_heading=max(20, read.target_words // len(headings(kind))),
        output_language=read.output_language,
        checks=read.checks,
        tables=material.tables,
    )
    own = {f.sentence for f in request.checked}  # the tool's own sentences: no objection to them
    audit = dataclasses.replace(
        read.audit,
        require_specific=kind == "synthesis",
        accept_restatements=True,
        stated={
            f.sentence: Stated(f.finding, f.item, _evidence(read.checklist, f.item)) for f in request.checked
        },
        objections=lambda sentence: [] if sentence in own else _objections(sentence, read),
    )

    def verify(text: str, known: dict) -> AuditResult:
        progress(f"{kind}: verifying")
        # a follow-on's verdict depends on the sentence before it, which a rewrite may change
        known = {k: v for k, v in known.items() if not v.follow_on}
        spans = sentence_spans(text)
        audited = run_audit([text[s:e] for s, e in spans], dataclasses.replace(audit, known=known))
        return follow_ons(text, spans, audited)

    def report(number: int, result: AuditResult) -> None:
        unread = f", {result.n_unchecked} unchecked" if result.n_unchecked else ""
        progress(
            f"{kind}: iteration {number}: {result.n_flagged}/{len(result.sentences)} "
            f"sentences unsupported (ratio {result.flagged_ratio:.2f}){unread}"
        )

    loop = audit_loop(
        lambda flagged, previous: _draft(request, read, flagged, previous), verify, on_iteration=report
    )
    for note in loop.rewrite_notes:
        progress(f"{kind}: {note}")
    return KindResult(kind, loop, read.context.left_out)


def _draft(request: Request, read: _Read, flagged: list[str], previous: str | None):
    """The document written, or its flagged headings rewritten; in the third person but for the
    tool's own sentences, and tidied."""
    kind = request.kind
    if flagged:
        read.progress(f"{kind}: rewriting the headings of {len(flagged)} unsupported sentences")
        draft = rewrite_document(read.generator, request, previous, flagged)
    else:
        read.progress(f"{kind}: writing, one heading at a time")
        draft = write_document(read.generator, request)
    text = (
        draft.text
        if writes_chinese(read.material.language, read.output_language)
        else _third_person_but(draft.text, [f.sentence for f in request.checked])
    )
    tidied = tidy(text)
    if tidied.removed:
        read.progress(f"{kind}: removed {_removals(tidied)}")
    return dataclasses.replace(draft, text=tidied.text)


def _store(db, read: _Read, results: list[KindResult]) -> None:
    """The checklist and both documents in one transaction."""
    from reader.audit.record import save_analysis
    from reader.store.db import transaction

    read.progress("storing")
    with transaction(db) as session:
        save_checklist(session, read.checklist)
        for r in results:
            save_analysis(
                session,
                paper_id=read.paper_id,
                kind=r.kind,
                loop=r.loop,
                generator_model=getattr(read.generator, "model", ""),
                verifier_model=getattr(read.audit.verifier, "model", ""),
                left_out_sections=r.left_out,
                facts=read.audit.facts,
            )


def _third_person_but(text: str, kept: list[str]) -> str:
    """`text` in the third person (reader.deepread.tidy.third_person), but for the tool's own sentences:
    they quote the paper as it stands ("We compare with …")."""
    held = {f"\x00{n}\x00": sentence for n, sentence in enumerate(kept) if sentence in text}
    for mark, sentence in held.items():
        text = text.replace(sentence, mark)
    text = third_person(text)
    for mark, sentence in held.items():
        text = text.replace(mark, sentence)
    return text


def _evidence(checklist: Checklist, key: str) -> tuple[EvidenceRef, ...]:
    """A tool's finding's evidence: the sentence and passage its checklist item rests on; none for
    an item not found (its reason says what was searched), never a passage a search brought up."""
    item = checklist.by_key.get(key)
    if item is None or not item.found:
        return ()
    return (
        EvidenceRef(item.chunk_id, item.page_start or 1, item.page_end or item.page_start or 1, item.quote),
    )


@dataclass
class AuditReport:
    """Any text audited against a paper (`reader audit`): verdicts and the text with marks."""

    paper_id: str
    result: AuditResult
    marked_text: str

    def to_json(self) -> dict:
        r = self.result
        return {
            "paper_id": self.paper_id,
            "flagged_ratio": r.flagged_ratio,
            "n_flagged": r.n_flagged,
            "n_unchecked": r.n_unchecked,
            "n_unanswered": r.n_unanswered,
            "marked_text": self.marked_text,
            "sentences": [s.to_json() for s in r.sentences],
            "llm_calls": r.llm_calls,
            "tokens": r.prompt_tokens + r.completion_tokens,
        }


def audit_against_paper(
    text: str,
    paper_id: str,
    *,
    db,
    verifier,
    search,
    max_workers: int = 4,
    yes_threshold: float | None = None,
    checker=None,
) -> AuditReport:
    """Audit any text sentence by sentence against a stored paper, as the deep read audits its own."""
    request = _against_paper(db, paper_id, verifier, max_workers, yes_threshold, checker)
    result = run_audit(split_sentences(text), dataclasses.replace(request, search=search))
    return AuditReport(paper_id, result, mark_unsupported(text, result.to_mark))


def audit_claims(
    claims: list[str],
    paper_id: str,
    *,
    db,
    verifier,
    evidence_for,
    max_workers: int = 4,
    yes_threshold: float | None = None,
    checker=None,
) -> AuditResult:
    """Audit claims that each come with their own passages (`evidence_for(claims)`, as
    reader.audit.loop takes it) against a stored paper: the guards over the paper's facts, the
    claim checker and the verifier, as `audit_against_paper` checks a sentence (the extraction
    table's cells, reader.table)."""
    request = _against_paper(db, paper_id, verifier, max_workers, yes_threshold, checker)
    return run_audit(claims, dataclasses.replace(request, evidence_for=evidence_for))


def _against_paper(db, paper_id: str, verifier, max_workers, yes_threshold, checker) -> AuditRequest:
    """An audit of outside text against a stored paper, under the stage 'audit'."""
    with db() as session:
        material = load_material(session, paper_id)
    return _paper_audit(material, paper_id, verifier, max_workers, yes_threshold, checker, stage="audit")


def _paper_audit(
    material: PaperMaterial, paper_id: str, verifier, max_workers, yes_threshold, checker, **more
) -> AuditRequest:
    """An audit against the paper: its facts for the guards, its full text as the fallback
    evidence, the verifier and the parts beside it."""
    return AuditRequest(
        verifier=verifier,
        paper_id=paper_id,
        facts=PaperFacts.from_texts(material.facts_texts, material.tables, material.figures),
        fallback_text=material.full_text,
        max_workers=max_workers,
        yes_threshold=yes_threshold,
        checker=checker,
        **more,
    )
