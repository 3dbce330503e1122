"""The deep read: a critique and a synthesis of one paper, each audited sentence by sentence.

    paper (DB) ──context within a token budget──▶ write one heading at a time (reader.writer)
        ──▶ tidy (reader.text.tidy) ──▶ audit_loop ──▶ store

The paper context is the whole paper when it fits the budget; otherwise
sections are chosen deliberately — abstract, introduction, conclusion,
results, method, captions, then the rest — each first up to a share of the
budget, then extended in that order; what was left out is named in the prompt
and stored in Analysis.left_out_sections.

Critique and synthesis run concurrently and are stored together in one
transaction at the end, so an interrupted read leaves no half-written analysis.
"""

from __future__ import annotations

import dataclasses
import re
import time
from collections.abc import Callable
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, field

from sqlalchemy.orm import Session

from reader.audit.decided import Stated
from reader.audit.guards import PaperFacts
from reader.audit.loop import (
    AuditResult,
    EvidenceRef,
    LoopResult,
    audit_loop,
    audit_sentences,
    audit_text,
    mark_unsupported,
)
from reader.checklist import Checklist, build_checklist, paper_passages, save_checklist
from reader.errors import PaperNotFound, ReaderError
from reader.ingest.text import TEXT_SECTION
from reader.prompts import writes_chinese
from reader.store.paper_tables import paper_tables
from reader.text.checked import contradicted_absence, paper_checks
from reader.text.extract import select_sentences
from reader.text.material import (
    ABSTRACT,
    APPENDIX,
    CAPTIONS,
    CONCLUSION,
    INTRODUCTION,
    METHOD,
    OTHER,
    RESULTS,
)
from reader.text.tidy import (
    CAPTION,
    ECHOES_HEADING,
    EMPTY_BULLET,
    EMPTY_HEADING,
    REPEATS,
    Tidied,
    third_person,
    tidy,
)
from reader.text.tokens import estimate_tokens
from reader.writer import Request, headings, rewrite_document, write_document

KINDS = ("critique", "synthesis")
CAPTIONS_TITLE = "Figure and table captions"

# Section priority when the paper does not fit: lower comes first.
_PRIORITY = [
    (INTRODUCTION, re.compile(r"^" + TEXT_SECTION + r"$")),  # a paper without headings: its whole text
    (ABSTRACT, re.compile(r"abstract|摘要", re.I)),
    (INTRODUCTION, re.compile(r"introduction|引言|绪论|前言", re.I)),
    (OTHER, re.compile(r"related work|prior work|previous work|background|相关工作", re.I)),
    (
        CONCLUSION,
        re.compile(r"conclusion|concluding|discussion|summary|limitation|结论|总结|讨论|局限", re.I),
    ),
    (RESULTS, re.compile(r"result|experiment|evaluation|analys|finding|ablation|实验|结果|评估", re.I)),
    (
        METHOD,
        re.compile(r"method|approach|model|framework|architecture|algorithm|proposed|design|方法|模型", re.I),
    ),
]
_SKIP = re.compile(
    r"^\W*(?:\d+\W*)?(?:references|bibliography|acknowledg|author contributions|front matter|supporting information|funding|competing interests|conflicts? of interest|data availability|参考文献|致谢)",
    re.I,
)
_CAPTION_CHUNK = re.compile(
    r"^(?:figure|fig\.?|table)\s*\S+\s+caption$", re.I
)  # captions come from their table
_FRONT_MATTER = re.compile(r"^\W*front matter\W*$", re.I)
_REFERENCES = re.compile(r"^\W*(?:\d+\W*)?(?:references|bibliography|参考文献)", re.I)
_NUMBERING = re.compile(r"^(\d+|[A-Z])(?:\.\d+)*\.?\s+\S")
_CAPTION_PRIORITY = CAPTIONS
_OTHER_PRIORITY = OTHER
_APPENDIX_PRIORITY = APPENDIX
FLOOR_TOKENS = 60  # at most, for each section before the priorities share the rest


class NotReadable(ReaderError):
    pass


@dataclass
class Section:
    title: str
    text: str
    priority: int


@dataclass
class PaperMaterial:
    """What the generators and the guards need from the database, as plain data."""

    paper_id: str
    title: str
    language: str
    sections: list[Section]  # in paper order, captions last
    facts_texts: list[str]  # text, captions, references, title, abstract
    tables: list = field(default_factory=list)  # the paper's tables as cells (reader.text.grid.Table)

    @property
    def full_text(self) -> str:
        return "\n\n".join(s.text for s in self.sections)


@dataclass
class PaperContext:
    text: str
    included: list[str]
    left_out: list[str]  # "Title" for a section left out, "Title (partly)" for a truncated one
    tokens: int


def _own_priority(title: str) -> int | None:
    for priority, pattern in _PRIORITY:
        if pattern.search(title):
            return priority
    return None


def _priorities(titles: list[str]) -> list[int]:
    """Each section's priority: its own title's, else its parent's ("2.1 System
    Overview" under "2 Method"); numbered by a letter, it is an appendix."""
    out: list[int] = []
    top_level: dict[str, int] = {}
    for title in titles:
        numbering = _NUMBERING.match(title)
        top = numbering.group(1) if numbering else None
        own = _own_priority(title)
        if top and top.isalpha():
            priority = _APPENDIX_PRIORITY
        elif own is not None:
            priority = own
        else:
            priority = top_level.get(top, _OTHER_PRIORITY) if top else _OTHER_PRIORITY
        if top and top not in top_level:
            top_level[top] = priority
        out.append(priority)
    return out


def _join_chunks(texts: list[str]) -> str:
    """Join consecutive chunks, dropping text a chunk repeats from the previous one."""
    out = ""
    for text in texts:
        overlap = 0
        for k in range(min(len(out), len(text), 2000), 20, -1):
            if out.endswith(text[:k]):
                overlap = k
                break
        out = (out + ("\n" if out and not overlap else "") + text[overlap:]) if out else text
    return out


def load_material(session: Session, paper_id: str) -> PaperMaterial:
    from reader.store.tables import Paper

    paper = session.get(Paper, paper_id)
    if paper is None:
        raise PaperNotFound(f"no paper with id {paper_id}: see `reader papers` for what is stored")
    groups: list[tuple[str, list[str]]] = []
    for chunk in paper.chunks:
        title = (chunk.section or "").strip() or "Body"
        if groups and groups[-1][0] == title:
            groups[-1][1].append(chunk.text)
        else:
            groups.append((title, [chunk.text]))
    sections: list[Section] = []
    abstract = (paper.abstract or "").strip()
    if abstract:
        sections.append(Section("Abstract", abstract, 0))
    all_groups = groups
    front = _front_matter_as_text(groups, abstract)
    groups = [(t, texts) for t, texts in groups if not _SKIP.match(t) and not _CAPTION_CHUNK.match(t)]
    for (title, texts), priority in zip(groups, _priorities([t for t, _ in groups])):
        if abstract and priority == 0:
            continue
        sections.append(Section(title, _join_chunks(texts), priority))
    if front is not None:
        sections.insert(1 if abstract else 0, front)
    captions = [
        f"{c.label}: {c.text}" if c.label and not c.text.startswith(c.label) else c.text
        for c in paper.captions
    ]
    if captions:
        sections.append(Section(CAPTIONS_TITLE, "\n".join(captions), _CAPTION_PRIORITY))
    facts_texts = (
        [paper.title or "", abstract]
        + [c.text for c in paper.chunks]
        + captions
        + [(r.marker + " " + r.text).strip() for r in paper.references]
    )
    if not any(s.text.strip() for s in sections if s.priority not in (0, _CAPTION_PRIORITY)):
        # Nothing but an abstract and captions, because the headings put the text into
        # sections a read skips (a lone "Funding" heading on page 1, say): read the rest of
        # the text rather than nothing, the references only as a last resort.
        shown = {s.title for s in sections}
        texts = [
            t
            for title, chunk_texts in all_groups
            if title not in shown and not _CAPTION_CHUNK.match(title) and not _REFERENCES.match(title)
            for t in chunk_texts
        ]
        if not texts and not any(s.text.strip() for s in sections):
            texts = [c.text for c in paper.chunks]
        text = _join_chunks([t for t in texts if t.strip()])
        if abstract and abstract in text:
            text = text.replace(abstract, "", 1).strip()
        if text:
            sections.insert(1 if abstract else 0, Section(TEXT_SECTION, text, 1))
    if not any(s.text.strip() for s in sections):
        raise NotReadable(
            f"paper {paper_id[:12]} ({paper.source_path}) has no text to read: "
            "re-ingest it from a PDF with a text layer"
        )
    tables = paper_tables(session, paper.id)
    return PaperMaterial(paper.id, paper.title or "", paper.language or "en", sections, facts_texts, tables)


def _front_matter_as_text(groups: list[tuple[str, list[str]]], abstract: str) -> Section | None:
    """The text before the first heading, as a section to read, when it is the paper's
    main text: a paper without detected headings (a plain .txt, a PDF whose headings
    were not found) is all "Front matter". Real front matter (title, authors,
    affiliations) is short beside the sections after it and stays out."""
    front = [t for title, texts in groups if _FRONT_MATTER.match(title) for t in texts]
    if not front:
        return None
    text = _join_chunks(front)
    if abstract and abstract in text:  # already the Abstract section
        text = text.replace(abstract, "", 1).strip()
    body = sum(
        estimate_tokens(t)
        for title, texts in groups
        if not _SKIP.match(title) and not _CAPTION_CHUNK.match(title)
        for t in texts
    )
    tokens = estimate_tokens(text)
    if not text or (tokens < body and tokens < 800):
        return None
    return Section(TEXT_SECTION, text, 1)


def _truncate(text: str, max_tokens: int) -> str:
    if estimate_tokens(text) <= max_tokens:
        return text
    lo, hi = 0, len(text)
    while lo < hi:  # longest prefix within the budget
        mid = (lo + hi + 1) // 2
        if estimate_tokens(text[:mid]) <= max_tokens:
            lo = mid
        else:
            hi = mid - 1
    cut = text[:lo]
    end = max(cut.rfind(". "), cut.rfind("。"), cut.rfind("\n"))
    return cut[: end + 1] if end > len(cut) // 2 else cut


def build_context(
    material: PaperMaterial, token_budget: int, cut=select_sentences, floor_tokens: int = FLOOR_TOKENS
) -> PaperContext:
    """The paper's text within `token_budget` tokens, sections chosen by priority; a section
    granted less than its size is `cut(text, tokens)`: its most telling sentences
    (reader.text.extract). Each section but the appendices first gets up to `floor_tokens`."""
    sections = material.sections
    sizes = [estimate_tokens(s.text) for s in sections]
    if sum(sizes) <= token_budget:
        granted = sizes[:]
    else:
        granted = [0] * len(sections)
        order = sorted(range(len(sections)), key=lambda i: (sections[i].priority, i))
        per_class: dict[int, int] = {}
        for section in sections:
            per_class[section.priority] = per_class.get(section.priority, 0) + 1
        share = max(token_budget // 5, 150)  # first pass: a share per class, split among its sections
        left = token_budget
        # before that, every section but the appendices gets room for its best sentence or two,
        # so that the writer hears from the whole paper (the method of a long paper included)
        floor = min(floor_tokens, max(25, token_budget // (3 * len(sections))))
        for i, section in enumerate(sections):
            if floor_tokens and section.priority < _APPENDIX_PRIORITY and left > 0:
                granted[i] = min(sizes[i], floor, left)
                left -= granted[i]
        for first_pass in (True, False):  # then extend in the same order
            for i in order:
                if left <= 0:
                    break
                cap = max(share // per_class[sections[i].priority], 80) if first_pass else sizes[i]
                extra = min(min(sizes[i], cap) - granted[i], left)
                if extra > 0 and (granted[i] or extra >= min(60, sizes[i])):  # no tiny scraps
                    granted[i] += extra
                    left -= extra
    parts, included, left_out = [], [], []
    for section, size, grant in zip(sections, sizes, granted):
        if grant <= 0:
            left_out.append(section.title)
            continue
        text = section.text if grant >= size else cut(section.text, grant)
        if not text.strip():
            left_out.append(section.title)
            continue
        parts.append(f"## {section.title}\n{text}")
        included.append(section.title)
        if grant < size:
            left_out.append(f"{section.title} (partly)")
    if not parts and material.full_text.strip():  # the budget chose nothing: the text's beginning
        parts = [_truncate(material.full_text, max(token_budget, 1))]
        included, left_out = [s.title for s in sections], [f"{s.title} (partly)" for s in sections]
    text = "\n\n".join(parts)
    return PaperContext(text, included, left_out, estimate_tokens(text))


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
    from reader.audit.record import save_analysis
    from reader.llm.base import capabilities_of
    from reader.store.db import transaction

    started = time.perf_counter()
    capabilities = capabilities_of(generator)
    context_tokens = context_tokens or capabilities.context_tokens
    target_words = target_words or capabilities.target_words
    progress = on_progress or (lambda message: None)
    with transaction(db) as session:
        material = load_material(session, paper_id)
        passages = paper_passages(session, paper_id)
    checklist = build_checklist(
        paper_id, material.title, passages, search=search, llm=verifier, max_workers=max_workers
    )
    progress(
        f"checklist: {checklist.n_found} of {len(checklist.items)} items found"
        + (f" ({checklist.llm_calls} extraction calls)" if checklist.llm_calls else "")
    )
    facts = PaperFacts.from_texts(material.facts_texts, material.tables)
    checks = paper_checks(material.sections, checklist.findings)
    context = build_context(material, context_tokens)
    if context.left_out:
        progress(f"context: {context.tokens} tokens; left out: {', '.join(context.left_out)}")
    else:
        progress(f"context: the whole paper, {context.tokens} tokens")

    def run_kind(kind: str) -> KindResult:
        request = Request(
            kind=kind,
            title=material.title,
            language=material.language,
            context=context.text,
            left_out=_shown(context.left_out),
            sections=material.sections,
            paper_id=paper_id,
            words_per_heading=max(20, target_words // len(headings(kind))),
            output_language=output_language,
            checks=checks,
        )

        def gen(flagged, previous):
            if flagged:
                progress(f"{kind}: rewriting the headings of {len(flagged)} unsupported sentences")
                draft = rewrite_document(generator, request, previous, flagged)
            else:
                progress(f"{kind}: writing, one heading at a time")
                draft = write_document(generator, request)
            text = (
                draft.text
                if writes_chinese(material.language, output_language)
                else _third_person_but(draft.text, [f.sentence for f in request.checked])
            )
            tidied = tidy(text)
            if tidied.removed:
                progress(f"{kind}: removed {_removals(tidied)}")
            return dataclasses.replace(draft, text=tidied.text)

        own = {f.sentence for f in request.checked}  # the tool's own sentences: no objection to them

        def audit(text, known):
            progress(f"{kind}: verifying")
            return audit_text(
                text,
                paper_id=paper_id,
                verifier=verifier,
                search=search,
                yes_threshold=yes_threshold,
                checker=checker,
                facts=facts,
                fallback_text=material.full_text,
                max_workers=max_workers,
                known=known,
                require_specific=kind == "synthesis",
                accept_restatements=True,
                stated={
                    f.sentence: Stated(f.finding, f.item, _evidence(checklist, f.item))
                    for f in request.checked
                },
                objections=lambda sentence: [] if sentence in own else contradicted_absence(sentence, checks),
            )

        def report(number, result):
            unread = f", {result.n_unchecked} unchecked" if result.n_unchecked else ""
            progress(
                f"{kind}: iteration {number}: {result.n_flagged}/{len(result.sentences)} "
                f"sentences unsupported (ratio {result.flagged_ratio:.2f}){unread}"
            )

        loop = audit_loop(gen, audit, on_iteration=report)
        for note in loop.rewrite_notes:
            progress(f"{kind}: {note}")
        return KindResult(kind, loop, context.left_out)

    with ThreadPoolExecutor(max_workers=len(kinds)) as pool:
        results = list(pool.map(run_kind, kinds))

    progress("storing")
    with transaction(db) as session:
        save_checklist(session, checklist)
        for r in results:
            save_analysis(
                session,
                paper_id=paper_id,
                kind=r.kind,
                loop=r.loop,
                generator_model=getattr(generator, "model", ""),
                verifier_model=getattr(verifier, "model", ""),
                left_out_sections=r.left_out,
            )
    return DeepReadResult(paper_id, results, time.perf_counter() - started, checklist=checklist)


def _third_person_but(text: str, kept: list[str]) -> str:
    """`text` in the third person (reader.text.tidy.third_person), but for the tool's own sentences:
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
    result = audit_text(
        text,
        search=search,
        **_against_paper(db, paper_id, verifier, max_workers, yes_threshold, checker),
    )
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
    return audit_sentences(
        claims,
        evidence_for=evidence_for,
        **_against_paper(db, paper_id, verifier, max_workers, yes_threshold, checker),
    )


def _against_paper(db, paper_id: str, verifier, max_workers, yes_threshold, checker) -> dict:
    """What an audit of outside text against a stored paper passes on: the paper's facts for
    the guards, its full text as the fallback evidence, the parts and the stage 'audit'."""
    with db() as session:
        material = load_material(session, paper_id)
    return dict(
        paper_id=paper_id,
        verifier=verifier,
        facts=PaperFacts.from_texts(material.facts_texts, material.tables),
        fallback_text=material.full_text,
        max_workers=max_workers,
        stage="audit",
        yes_threshold=yes_threshold,
        checker=checker,
    )
