"""Annotated Markdown notes (Obsidian-ready) from stored reviews.

    stored analyses + verdicts + evidence ──collect──▶ Note (plain data) ──jinja2──▶ Markdown

Text from the paper and from the LLM is untrusted markup: anything that would
become HTML, a wikilink, math, an Obsidian comment, a tag or a thematic break
is escaped here, before it reaches the templates; the front matter is written
by a YAML dumper, never by string concatenation. Notes carry no export time,
so exporting again writes the same bytes.
"""

from __future__ import annotations

import re
import unicodedata
from dataclasses import dataclass, field
from datetime import datetime
from functools import lru_cache
from pathlib import Path

from jinja2 import Environment, FileSystemLoader, StrictUndefined
from sqlalchemy import select
from sqlalchemy.orm import Session

from reader.annotations.highlights import HighlightItem, highlights_of
from reader.annotations.judgements import Judgement, judgements_of, marked_change, sentence_key
from reader.audit.citations import cited_references, markers_in, reference_list, with_library
from reader.audit.decided import decision_of
from reader.audit.loop import MARK, UNANSWERED, UNCHECKED, UNSUPPORTED
from reader.audit.record import KIND_ORDER, count_verdicts, decided_counts, newest_analyses
from reader.checklist import checklist_of
from reader.deepread.tidy import BULLET_MARK
from reader.export.bibtex import citekeys
from reader.export.lookup import MISSING_WORK, says_missing
from reader.store.queries import followups_of
from reader.store.tables import AnalysisIteration, Paper, ReviewJob
from reader.text.controls import clean_text
from reader.text.pages import page_range
from reader.text.split import first_sentence

TEMPLATES_DIR = Path(__file__).resolve().parent / "templates"
KIND_TITLES = {"synthesis": "Synthesis", "critique": "Critique"}
INDEX_NAME = "index.md"
QUOTE_CHARS = 320


# ---------------------------------------------------------------- plain data


@dataclass
class Flag:
    """A sentence marked 待验证 — unsupported, or unchecked (the verifier's reply could not be
    read) — with its nearest evidence."""

    sentence: str
    evidence: str = ""
    page_start: int | None = None
    page_end: int | None = None
    reasons: list[str] = field(default_factory=list)
    verdict: str = UNSUPPORTED
    decided: str = ""  # how the verdict was reached (reader.audit.decided), in words

    @property
    def unchecked(self) -> bool:
        return self.verdict == UNCHECKED

    @property
    def pages(self) -> str:
        return page_range(self.page_start, self.page_end, prose=True)


@dataclass
class Block:
    """A paragraph of text, or one flagged sentence shown as a callout; `judgement`, the
    reader's own verdict of the flagged sentence, or of `text` (one sentence) when unflagged."""

    text: str = ""
    flag: Flag | None = None
    judgement: Judgement | None = None


@dataclass
class IterationFigures:
    iteration: int
    sentences: int
    flagged: int
    ratio: float


@dataclass
class AnalysisNote:
    kind: str
    title: str
    blocks: list[Block]
    sentences: int
    flagged: int
    ratio: float
    regenerations: int
    unanswered: int
    iterations: list[IterationFigures]
    left_out_sections: list[str]
    unchecked: int = 0
    citations: list = field(default_factory=list)  # reader.audit.citations.CitedReference
    # how the final text's sentences were decided (reader.audit.record.decided_counts): model,
    # guard, restated, tool, unchecked, and checked (a model or a guard: the ratio's denominator)
    decided: dict = field(default_factory=dict)

    def count(self, kind: str) -> int:
        return int(self.decided.get(kind, 0))


@dataclass
class Note:
    paper_id: str
    file_name: str
    title: str
    authors: list[str]
    year: int | None
    source_path: str
    reviewed_at: str
    generator_model: str
    verifier_model: str
    abstract: str
    analyses: list[AnalysisNote]
    llm_calls: int | None = None
    doi: str | None = None
    zotero_key: str | None = None
    citekey: str | None = None
    collections: list[str] = field(default_factory=list)
    judgements: list[Judgement] = field(default_factory=list)  # the reader's, as the note shows them
    highlights: list[HighlightItem] = field(default_factory=list)  # the reader's own, on the PDF
    # the reader's judgements of sentences a review since no longer has: listed on their own
    gone_judgements: list[Judgement] = field(default_factory=list)
    # the follow-up questioner's questions and answers (reader.store.queries.FollowUpItem)
    followups: list = field(default_factory=list)
    checklist: object = None  # the rigour checklist (reader.checklist.Checklist)

    def decided(self, kind: str) -> int:
        """How many sentences of both analyses a kind of decision reached (model, guard, …)."""
        return sum(a.count(kind) for a in self.analyses)

    @property
    def overruled(self) -> int:
        """How many of the reader's judgements overrule the audit."""
        return sum(1 for j in self.judgements if j.overrules)

    @property
    def zotero_link(self) -> str | None:
        return f"zotero://select/library/items/{self.zotero_key}" if self.zotero_key else None

    @property
    def sentences(self) -> int:
        return sum(a.sentences for a in self.analyses)

    @property
    def flagged(self) -> int:
        return sum(a.flagged for a in self.analyses)

    @property
    def ratio(self) -> float:
        """Flagged among the sentences a model or a guard checked (all of them for a review stored
        before the decisions were kept)."""
        checked = _checked(self)
        return self.flagged / checked if checked else 0.0

    @property
    def regenerations(self) -> int:
        return sum(a.regenerations for a in self.analyses)

    @property
    def unchecked(self) -> int:
        return sum(a.unchecked for a in self.analyses)

    @property
    def unanswered(self) -> int:
        return sum(a.unanswered for a in self.analyses)

    @property
    def tags(self) -> list[str]:
        tags = ["paper", "reader/reviewed"]
        # the reader's decisions count: a flag judged supported is no longer unverified
        change = marked_change(self.judgements)
        if self.flagged + change["flagged"] > 0 or self.unchecked + change["unchecked"] > 0:
            tags.append("reader/has-unverified")
        if self.unchecked:
            tags.append("reader/has-unchecked")
        if self.judgements or self.gone_judgements:
            tags.append("reader/judged")
        if self.highlights:
            tags.append("reader/highlighted")
        return tags

    def front_matter(self) -> dict:
        data: dict = {"title": self.title, "authors": list(self.authors)}
        if self.year:
            data["year"] = self.year
        data.update(
            {
                "source": self.source_path,
                **({"doi": self.doi} if self.doi else {}),
                **({"zotero": self.zotero_link} if self.zotero_key else {}),
                **({"collections": list(self.collections)} if self.collections else {}),
                **({"citekey": self.citekey} if self.citekey else {}),
                "sha256": self.paper_id,
                "reviewed_at": self.reviewed_at,
                "generator_model": self.generator_model,
                "verifier_model": self.verifier_model,
                "sentences": self.sentences,
                "flagged": self.flagged,
                "flagged_ratio": round(self.ratio, 4),
                "checked_by_model": self.decided("model"),
                "checked_by_guard": self.decided("guard"),
                "restated": self.decided("restated"),
                "tool_findings": self.decided("tool"),
                "unchecked": self.unchecked,
                "unanswered": self.unanswered,
                "regenerations": self.regenerations,
            }
        )
        if self.llm_calls is not None:
            data["llm_calls"] = self.llm_calls
        if self.judgements:
            data["reader_judgements"] = len(self.judgements)
            data["overruled_by_reader"] = self.overruled
        if self.gone_judgements:
            data["reader_judgements_no_longer_in_review"] = len(self.gone_judgements)
        if self.highlights:
            data["reader_highlights"] = len(self.highlights)
        if self.checklist is not None:
            data["checklist_found"] = f"{self.checklist.n_found} of {len(self.checklist.items)}"
        data["tags"] = self.tags
        return data


# ---------------------------------------------------------------- escaping

_THEMATIC_OR_SETEXT = re.compile(r"^(\s{0,3})([-*_=])[ \t]*(?:\2[ \t]*){2,}$|^(\s{0,3})(=+|-+)[ \t]*$")
_TAG = re.compile(r"(^|[\s(])#(?=[^\s#\d])")
# What makes a line a block: a quote by its first character, a heading or bullet by "#", "+",
# "*" or "-" followed by a space ("**bold**" and "-3%" start none), an ordered list by "1." or
# "1)" followed by a space. The list's digits cannot be escaped (a backslash before a digit is
# shown as a backslash): its "." or ")" is.
_BLOCK_START = re.compile(r"^(\s{0,3})(?:(>|[#+*-](?=[ \t]|$))|(\d{1,9})([.)])(?=[ \t]|$))")


def escape_inline(text: str) -> str:
    """Text that stays text in Markdown/Obsidian (no HTML, links, math, comments, tags)."""
    text = text.replace("&", "&amp;").replace("<", "&lt;").replace(">", "&gt;")
    text = text.replace("\\", "\\\\")
    text = text.replace("[[", "\\[\\[").replace("]]", "\\]\\]")
    text = text.replace("$", "\\$").replace("%%", "\\%\\%")
    text = text.replace("==", "\\=\\=").replace("`", "\\`")
    return _TAG.sub(lambda m: m.group(1) + "\\#", text)


def escape_title(text: str) -> str:
    """A title inside a heading or link text: every Markdown punctuation escaped."""
    text = " ".join(text.split())
    text = text.replace("&", "&amp;").replace("<", "&lt;").replace(">", "&gt;")
    return re.sub(r"([\\`*_\[\]#|$%=~^])", r"\\\1", text)


_HEADING = re.compile(r"^\s{0,3}(#{1,6})[ \t]+(.*?)[ \t#]*$")


def escape_block(text: str, min_heading: int = 3) -> str:
    """Generated prose: keep its paragraphs and simple Markdown, neutralise the rest.

    Its headings are pushed down to at least `min_heading`, below the note's own.
    """
    lines = []
    for line in text.splitlines():
        heading = _HEADING.match(line)
        if heading:
            level = min(6, max(min_heading, len(heading.group(1)) + min_heading - 2))
            lines.append("#" * level + " " + escape_inline(heading.group(2)))
            continue
        escaped = escape_inline(line)
        if _THEMATIC_OR_SETEXT.match(line):
            escaped = "\\" + escaped.lstrip()
        lines.append(escaped)
    return "\n".join(lines)


def _escape_block_start(m: re.Match) -> str:
    if m.group(2):
        return m.group(1) + "\\" + m.group(2)
    return m.group(1) + m.group(3) + "\\" + m.group(4)


def escape_phrase(text: str) -> str:
    """Text from the PDF or the LLM inside a line (quoted evidence, a reason, a reference
    entry): one line, inline markup escaped; nothing before it is a line's start to guard."""
    return escape_inline(" ".join(text.split()))


def escape_flat(text: str) -> str:
    """Text from the PDF (abstract, a flagged sentence) that starts a line: one line, nothing
    at its start read as markup."""
    flat = escape_phrase(text)
    if _THEMATIC_OR_SETEXT.match(flat):
        return "\\" + flat.lstrip()
    return _BLOCK_START.sub(_escape_block_start, flat)


def escape_cell(text: str) -> str:
    return escape_title(text)


def quote(text: str, limit: int = QUOTE_CHARS) -> str:
    flat = " ".join(text.split())
    if len(flat) <= limit:
        return flat
    cut = flat[:limit].rsplit(" ", 1)[0]
    return cut + " …"


def slugify(title: str, limit: int = 60) -> str:
    """A file-name-safe, readable slug; keeps CJK and other letters."""
    text = unicodedata.normalize("NFKC", title).lower()
    text = re.sub(r"[^\w]+", "-", text, flags=re.UNICODE).strip("-_")
    text = re.sub(r"[-_]{2,}", "-", text)
    if len(text) > limit:
        text = text[:limit].rsplit("-", 1)[0] if "-" in text[:limit] else text[:limit]
    return text.strip("-_") or "paper"


def note_file_name(title: str, paper_id: str) -> str:
    """Stable across exports: the slug plus the first 8 hex digits of the sha256."""
    return f"{slugify(title)}-{paper_id[:8]}.md"


# ---------------------------------------------------------------- collecting


_DANGLING_BULLET = re.compile(rf"(?:^|\n)[ \t]*{BULLET_MARK}$")


def split_marked(final_text: str, flags: list[Flag]) -> list[Block]:
    """Cut the marked text into paragraphs and one callout per `[待验证]` sentence.

    Each marker is matched to the longest flagged sentence that follows it;
    a marker without a stored verdict keeps the rest of its sentence.
    """
    by_text = sorted(flags, key=lambda f: len(f.sentence), reverse=True)
    blocks: list[Block] = []
    for paragraph in re.split(r"\n\s*\n", final_text.strip()):
        rest = paragraph
        while MARK in rest:
            before, after = rest.split(MARK, 1)
            before = _DANGLING_BULLET.sub("", before.rstrip())  # the bullet was the flagged sentence's
            if before.strip():
                blocks.append(Block(text=before.strip()))
            flag = next((f for f in by_text if f.sentence and after.startswith(f.sentence)), None)
            if flag is None:
                flag = Flag(sentence=first_sentence(after))
            blocks.append(Block(flag=flag))
            rest = after[len(flag.sentence) :]
        if rest.strip():
            blocks.append(Block(text=rest.strip()))
    return blocks


def with_judgements(blocks: list[Block], sentences: list[str], judged: dict[str, Judgement]) -> list[Block]:
    """The blocks with the reader's judgements: a flagged sentence's on its callout; a judged
    sentence that is not flagged cut out of its paragraph into a block of its own (its first
    occurrence). `sentences`: the analysis's audited sentences; `judged`: by sentence_key."""
    if not judged:
        return blocks
    targets = [t for t in dict.fromkeys(sentences) if t.strip() and sentence_key(t) in judged]
    out: list[Block] = []
    for block in blocks:
        if block.flag is not None:
            block.judgement = judged.get(sentence_key(block.flag.sentence))
            if block.judgement is not None and block.flag.sentence in targets:
                targets.remove(block.flag.sentence)
            out.append(block)
            continue
        rest = block.text
        while True:
            found = [(rest.find(t), t) for t in targets if t in rest]
            if not found:
                break
            at, sentence = min(found, key=lambda f: (f[0], -len(f[1])))
            targets.remove(sentence)
            before = _DANGLING_BULLET.sub("", rest[:at].rstrip())
            if before.strip():
                out.append(Block(text=before.strip()))
            out.append(Block(text=sentence, judgement=judged[sentence_key(sentence)]))
            rest = rest[at + len(sentence) :]
        if rest.strip():
            out.append(Block(text=rest.strip()))
    return out


def _flags(iteration: AnalysisIteration) -> tuple[list[Flag], int, int]:
    """The marked sentences, and the numbers of unanswered and unchecked sentences."""
    verdicts = iteration.verdicts  # in ordinal order, each with its evidence in rank order
    flags = []
    for verdict in verdicts:
        if verdict.verdict not in (UNSUPPORTED, UNCHECKED):
            continue
        nearest = verdict.evidence[0] if verdict.evidence else None
        flags.append(
            Flag(
                sentence=verdict.text,
                evidence=quote(nearest.text) if nearest else "",
                page_start=nearest.page_start if nearest else None,
                page_end=nearest.page_end if nearest else None,
                reasons=[str(r) for r in (verdict.reasons or [])],
                verdict=verdict.verdict,
                decided=decision_of(verdict)["label"],
            )
        )
    return flags, count_verdicts(verdicts, UNANSWERED), count_verdicts(verdicts, UNCHECKED)


def collect_note(
    session: Session, paper: Paper, keys: dict[str, str] | None = None, lookup=None, user: str | None = None
) -> Note | None:
    """The note's data, or None when the paper has no stored review. `keys`: every paper's
    citation key (reader.export.bibtex.citekeys), computed here when not given. `lookup`
    (reader.export.lookup.ReferenceLookup, optional) checks each cited entry. `user`: whose
    judgements and highlights it carries (an account's; None: the single-user mode's)."""
    analyses = {kind: a for kind, a in newest_analyses(session, paper.id).items() if kind in KIND_ORDER}
    if not analyses:
        return None
    views = []
    refs = None
    judged = judgements_of(session, paper.id, user)
    for kind in KIND_ORDER:
        analysis = analyses.get(kind)
        if analysis is None:
            continue
        last = analysis.iterations[-1] if analysis.iterations else None
        sentences = [v.text for v in last.verdicts] if last else []
        citations, refs = _cited(session, paper.id, sentences, refs, lookup)
        views.append(_analysis_note(kind, analysis, sentences, judged, citations))
    first = next(iter(analyses.values()))
    reviewed = max(a.created_at for a in analyses.values())
    title = " ".join((paper.title or "").split()) or Path(paper.source_path).stem
    shown = list({id(b.judgement): b.judgement for a in views for b in a.blocks if b.judgement}.values())
    return Note(
        paper_id=paper.id,
        file_name=note_file_name(title, paper.id),
        title=title,
        authors=[" ".join(str(a).split()) for a in (paper.authors or [])],
        year=paper.year,
        # the name the file came in with (an upload's is not its internal sha256 name)
        source_path=paper.file_name or Path(paper.source_path).name,
        doi=paper.doi,
        zotero_key=paper.zotero_key,
        citekey=(keys if keys is not None else citekeys(session)).get(paper.id),
        collections=[str(c) for c in (paper.zotero_meta or {}).get("collections", [])]
        if paper.zotero_key
        else [],
        reviewed_at=_iso(reviewed),
        generator_model=first.generator_model,
        verifier_model=first.verifier_model,
        abstract=paper.abstract or "",
        analyses=views,
        llm_calls=_llm_calls(session, paper.id),
        judgements=shown,
        highlights=highlights_of(session, paper.id, user),
        gone_judgements=[j for j in judged.values() if id(j) not in {id(s) for s in shown}],
        followups=followups_of(session, paper.id),
        checklist=checklist_of(session, paper.id),
    )


def _cited(session: Session, paper_id: str, sentences: list[str], refs, lookup) -> tuple[list, list | None]:
    """The references the sentences cite, with the library's copies of them and, given
    `lookup`, each entry checked; and the paper's reference list, read once per note and only
    when a sentence cites."""
    if not any(markers_in(t) for t in sentences):
        return [], refs
    refs = refs or reference_list(session, paper_id)
    citations = with_library(session, paper_id, cited_references(refs, sentences))
    if lookup is not None:
        for cited in citations:
            cited.checks = [lookup(entry) for entry in cited.entries]
    return citations, refs


def _analysis_note(kind: str, analysis, sentences: list[str], judged, citations: list) -> AnalysisNote:
    iterations = analysis.iterations  # in iteration order
    last = iterations[-1] if iterations else None
    flags, unanswered, unchecked = _flags(last) if last else ([], 0, 0)
    return AnalysisNote(
        kind=kind,
        title=KIND_TITLES[kind],
        blocks=with_judgements(
            split_marked(with_decisions(analysis.final_text, last.verdicts if last else []), flags),
            sentences,
            judged,
        ),
        sentences=last.n_sentences if last else 0,
        flagged=last.n_flagged if last else 0,
        ratio=last.flagged_ratio if last else analysis.flagged_ratio,
        regenerations=analysis.regenerations,
        unanswered=unanswered,
        unchecked=unchecked,
        iterations=[
            IterationFigures(i.iteration, i.n_sentences, i.n_flagged, i.flagged_ratio) for i in iterations
        ],
        left_out_sections=[str(s) for s in (analysis.left_out_sections or [])],
        citations=citations,
        decided=decided_counts(last.verdicts) if last else {},
    )


def _llm_calls(session: Session, paper_id: str) -> int | None:
    """The LLM calls of the paper's last finished review, when its job counted them."""
    job = session.scalars(
        select(ReviewJob)
        .where(ReviewJob.paper_id == paper_id, ReviewJob.status == "done")
        .order_by(ReviewJob.id.desc())
        .limit(1)
    ).first()
    if job is not None and job.summary and "llm_calls" in job.summary:
        return int(job.summary["llm_calls"])
    return None


def with_decisions(final_text: str, verdicts) -> str:
    """The final text with each audited sentence that carries no [待验证] mark followed by how it
    was decided: " ⟨verifier P(YES) 0.83⟩", " ⟨restated, p. 3⟩", " ⟨tool's finding: variance, p. 5⟩".
    A marked sentence says it in its callout. Each verdict's sentence is looked up after the
    previous one, as the web page does (reader.web.paper_page.segment_text)."""
    out, pos = [], 0
    for verdict in sorted(verdicts, key=lambda v: v.ordinal):
        sentence = verdict.text.strip()
        at = final_text.find(sentence, pos) if sentence else -1
        if at < 0:
            continue
        end = at + len(sentence)
        out.append(final_text[pos:end])
        marked = final_text[max(0, at - len(MARK)) : at] == MARK
        if not marked and verdict.verdict not in (UNSUPPORTED, UNCHECKED):
            out.append(f" ⟨{decision_of(verdict)['label']}⟩")
        pos = end
    out.append(final_text[pos:])
    return "".join(out)


def _iso(moment: datetime) -> str:
    return moment.replace(microsecond=0).isoformat()


# ---------------------------------------------------------------- rendering


def _percent(value: float) -> str:
    return f"{value * 100:.1f}%"


def _callout(flag: Flag) -> str:
    head = (
        "> [!warning] 待验证 · not checked: the verifier's reply could not be read or left it out"
        if flag.unchecked
        else "> [!warning] 待验证 · no support found in the paper"
    )
    lines = [head, "> " + escape_flat(flag.sentence)]
    if flag.decided:
        lines += [">", "> Decided by: " + escape_phrase(flag.decided)]
    if flag.evidence:
        label = "Evidence it would have been checked against" if flag.unchecked else "Nearest evidence"
        lines += [">", f"> {label} ({flag.pages}): “{escape_phrase(flag.evidence)}”"]
    else:
        lines += [">", "> No evidence passage was found in the paper."]
    if flag.reasons:
        lines += [">", "> Why: " + escape_phrase("; ".join(flag.reasons))]
    return "\n".join(lines)


def _judgement_callout(block: Block) -> str:
    """The reader's judgement, told apart from the audit's mark: a note callout that says who
    decided and how it stands to the audit; under a flagged sentence's callout, or with the
    sentence itself when the audit passed it."""
    judged = block.judgement
    lines = [f"> [!note] Reader's judgement: {judged.verdict} — {judged.relation}"]
    if block.flag is None:
        lines.append("> " + escape_flat(block.text))
    if judged.comment:
        lines += [">", "> Comment: " + escape_phrase(judged.comment)]
    decided = f"Decided by {escape_phrase(judged.decided_by)}"
    lines += [">", f"> {decided} on {judged.decided_on}." if judged.decided_on else f"> {decided}."]
    return "\n".join(lines)


def _gone_judgement_callout(judged: Judgement) -> str:
    """A judgement whose sentence a review since no longer has: the sentence with it, so that
    neither is lost from the note."""
    return _judgement_callout(Block(text=judged.sentence, judgement=judged))


def _highlight_callout(highlight: HighlightItem) -> str:
    """One of the reader's highlights: the text they selected, its page and their note, in a
    quote callout that says it is theirs (not the audit's)."""
    lines = [f"> [!quote] Your highlight, p. {highlight.page}", "> " + escape_flat(highlight.text)]
    if highlight.note:
        lines += [">", "> Note: " + escape_phrase(highlight.note)]
    if highlight.created_on:
        lines += [">", f"> Highlighted by the reader on {highlight.created_on}."]
    return "\n".join(lines)


def _followup_block(item) -> str:
    """One follow-up question, its answer and its sources, as a question callout."""
    lines = [f"> [!question] {escape_phrase(item.question)}", "> " + escape_flat(item.answer)]
    if item.sources:
        lines.append(">")
        lines += [
            f"> - {escape_phrase(s['label'])}: “{escape_phrase(quote(s['text'], 240))}”" for s in item.sources
        ]
    return "\n".join(lines)


def _checklist_row(item) -> str:
    """| item | found | value | page | the sentence it rests on, or what was searched |"""
    if item.found:
        how = " (extraction)" if item.decided_by == "extraction" else ""
        cells = [item.label, "yes" + how, item.value, item.pages, "“" + quote(item.quote, 240) + "”"]
    else:
        cells = [item.label, "not found", "", "", "searched: " + quote(item.searched, 240)]
    return "| " + " | ".join(escape_cell(c) if c else " " for c in cells) + " |"


def _citation_line(cited) -> str:
    """- **[12]** the entry's text — and what is wrong with it, if anything."""
    line = f"- **{escape_title(cited.marker)}**"
    if cited.entries:
        line += " " + escape_phrase(quote(" · ".join(cited.entries), 400))
    for check in getattr(cited, "checks", []):
        if says_missing(check):  # the service has no such work: a reference that may not exist
            line += f" — ⚠ {escape_phrase(check)}: {MISSING_WORK}"
        else:
            line += f" ({escape_phrase(check)})"
    for found in getattr(cited, "library", []):  # the citation card: the cited paper's own note
        name = note_file_name(found["title"], found["paper_id"])[:-3]
        line += f" — in your library: [[{name}|{escape_title(found['title'])}]]"
        if found["abstract"]:
            line += f" (“{escape_phrase(quote(found['abstract'], 200))}”)"
    for ident in getattr(cited, "add", []):
        line += f" — not in your library; add it: `reader import {ident}`"
    if cited.missing:
        line += f" — ⚠ {escape_phrase(', '.join(cited.missing))}: no entry in the paper's reference list"
    for note in cited.notes:
        line += f" — *note: {escape_phrase(note)}*"
    return line


def _cite_links(text: str, citations: list, kind: str) -> str:
    """Each numbered citation marker of escaped text made a link to its line under "References
    cited above" (a block id, `^cite-<kind>-<n>`), so the marker opens the reference's card."""
    for n, cited in sorted(enumerate(citations, 1), key=lambda nc: -len(nc[1].marker)):
        marker = cited.marker
        if not marker.startswith("["):
            continue
        link = "[\\" + marker[:-1] + "\\]](#^cite-" + kind + f"-{n})"
        text = re.sub(r"(?<![\\\[])" + re.escape(marker) + r"(?!\()", lambda _m, w=link: w, text)
    return text


def _cleaned(value):
    """Every text in the front matter's data without control characters: YAML would write an
    escape code as "\\e", which a reader of the note turns back into one."""
    if isinstance(value, str):
        return clean_text(value)
    if isinstance(value, list):
        return [_cleaned(v) for v in value]
    if isinstance(value, dict):
        return {k: _cleaned(v) for k, v in value.items()}
    return value


def _yaml(data: dict) -> str:
    import yaml

    return yaml.safe_dump(
        _cleaned(data), allow_unicode=True, sort_keys=False, default_flow_style=False, width=10_000
    ).strip()


@lru_cache(maxsize=1)
def environment() -> Environment:
    env = Environment(
        loader=FileSystemLoader(str(TEMPLATES_DIR)),
        undefined=StrictUndefined,
        trim_blocks=True,
        lstrip_blocks=True,
        keep_trailing_newline=True,
        autoescape=False,  # Markdown, escaped by the filters below
    )
    env.filters.update(
        md_block=escape_block,
        md_flat=escape_flat,
        md_phrase=escape_phrase,
        md_title=escape_title,
        md_cell=escape_cell,
        callout=_callout,
        judgement=_judgement_callout,
        gone_judgement=_gone_judgement_callout,
        highlight=_highlight_callout,
        percent=_percent,
        yaml=_yaml,
        citation=_citation_line,
        checklist_row=_checklist_row,
        followup=_followup_block,
        cite_links=_cite_links,
    )
    return env


def render_note(note: Note) -> str:
    """The note's Markdown, without a control character or a bidi override from any field: a
    file's name (kept as the file's real name) or text stored by an earlier version passes
    through no entry that cleaned it."""
    return clean_text(environment().get_template("note.md.j2").render(note=note))


def _checked(note: Note) -> int:
    """The sentences of a note a model or a guard checked (all of them for a review stored before
    the decisions were kept)."""
    return note.decided("checked") if any(a.decided for a in note.analyses) else note.sentences


def render_index(notes: list[Note]) -> str:
    sentences = sum(n.sentences for n in notes)
    flagged = sum(n.flagged for n in notes)
    unchecked = sum(n.unchecked for n in notes)
    front = {
        "title": "Reviewed papers",
        "papers": len(notes),
        "sentences": sentences,
        "flagged": flagged,
        # flagged among the sentences a model or a guard checked, as each note's ratio
        "flagged_ratio": round(flagged / checked, 4) if (checked := sum(_checked(n) for n in notes)) else 0.0,
        "unchecked": unchecked,
        "unanswered": sum(n.unanswered for n in notes),
        "tags": ["reader/index"],
    }
    ordered = sorted(notes, key=lambda n: (n.title.lower(), n.paper_id))
    return clean_text(
        environment()
        .get_template("index.md.j2")
        .render(
            notes=ordered,
            front=front,
            sentences=sentences,
            flagged=flagged,
            unchecked=unchecked,
        )
    )
