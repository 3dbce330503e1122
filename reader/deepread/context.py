"""The paper as the deep read's writer sees it: its sections from the database, and the context
within a token budget.

The context is the whole paper when it fits the budget; otherwise sections are chosen
deliberately — abstract, introduction, conclusion, results, method, captions, then the rest —
each first up to a share of the budget, then extended in that order; what was left out is named
in the prompt and stored in Analysis.left_out_sections.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field

from sqlalchemy.orm import Session

from reader.deepread.extract import select_sentences
from reader.deepread.material import (
    ABSTRACT,
    APPENDIX,
    CAPTIONS,
    CONCLUSION,
    INTRODUCTION,
    METHOD,
    OTHER,
    RESULTS,
)
from reader.errors import PaperNotFound, ReaderError
from reader.ingest.text import TEXT_SECTION
from reader.store.paper_figures import figure_captions
from reader.store.paper_tables import paper_tables
from reader.text.sections import is_reference_list
from reader.text.tokens import estimate_tokens

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
    figures: dict = field(default_factory=dict)  # its figures by number: (page, caption)

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


def section_priorities(titles: list[str]) -> list[int]:
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
    """The paper's sections to read (abstract, text sections by priority, captions last), the
    texts its facts come from, and its tables."""
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
    abstract = (paper.abstract or "").strip()
    captions = [
        f"{c.label}: {c.text}" if c.label and not c.text.startswith(c.label) else c.text
        for c in paper.captions
    ]
    sections = _sections(groups, abstract, captions)
    if not any(s.text.strip() for s in sections if s.priority not in (0, _CAPTION_PRIORITY)):
        _read_the_rest(sections, groups, abstract, [c.text for c in paper.chunks])
    if not any(s.text.strip() for s in sections):
        raise NotReadable(
            f"paper {paper_id[:12]} ({paper.source_path}) has no text to read: "
            "re-ingest it from a PDF with a text layer"
        )
    facts_texts = (
        [paper.title or "", abstract]
        + [c.text for c in paper.chunks]
        + captions
        + [(r.marker + " " + r.text).strip() for r in paper.references]
    )
    tables = paper_tables(session, paper.id)
    return PaperMaterial(
        paper.id,
        paper.title or "",
        paper.language or "en",
        sections,
        facts_texts,
        tables,
        figure_captions(session, paper.id),
    )


def _sections(groups: list[tuple[str, list[str]]], abstract: str, captions: list[str]) -> list[Section]:
    """The abstract, the text before the first heading when it is the main text, the sections a
    read does not skip, and the captions."""
    sections = [Section("Abstract", abstract, 0)] if abstract else []
    front = _front_matter_as_text(groups, abstract)
    kept = [(t, texts) for t, texts in groups if not _SKIP.match(t) and not _CAPTION_CHUNK.match(t)]
    for (title, texts), priority in zip(kept, section_priorities([t for t, _ in kept])):
        if abstract and priority == 0:
            continue
        sections.append(Section(title, _join_chunks(texts), priority))
    if front is not None:
        sections.insert(1 if abstract else 0, front)
    if captions:
        sections.append(Section(CAPTIONS_TITLE, "\n".join(captions), _CAPTION_PRIORITY))
    return sections


def _read_the_rest(
    sections: list[Section], groups: list[tuple[str, list[str]]], abstract: str, chunk_texts: list[str]
) -> None:
    """Nothing but an abstract and captions, because the headings put the text into sections a
    read skips (a lone "Funding" heading on page 1, say): read the rest of the text rather than
    nothing, the references only as a last resort."""
    shown = {s.title for s in sections}
    texts = [
        t
        for title, group_texts in groups
        if title not in shown and not _CAPTION_CHUNK.match(title) and not is_reference_list(title)
        for t in group_texts
    ]
    if not texts and not any(s.text.strip() for s in sections):
        texts = chunk_texts
    text = _join_chunks([t for t in texts if t.strip()])
    if abstract and abstract in text:
        text = text.replace(abstract, "", 1).strip()
    if text:
        sections.insert(1 if abstract else 0, Section(TEXT_SECTION, text, 1))


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


def truncate(text: str, max_tokens: int) -> str:
    """The longest beginning of `text` within `max_tokens`, cut after a sentence where one ends
    in its second half."""
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
    (reader.deepread.extract). Each section but the appendices first gets up to `floor_tokens`."""
    sections = material.sections
    sizes = [estimate_tokens(s.text) for s in sections]
    granted = sizes[:] if sum(sizes) <= token_budget else _grants(sections, sizes, token_budget, floor_tokens)
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
        parts = [truncate(material.full_text, max(token_budget, 1))]
        included, left_out = [s.title for s in sections], [f"{s.title} (partly)" for s in sections]
    text = "\n\n".join(parts)
    return PaperContext(text, included, left_out, estimate_tokens(text))


def _grants(sections: list[Section], sizes: list[int], token_budget: int, floor_tokens: int) -> list[int]:
    """The tokens each section is granted when the paper does not fit: a floor for every section
    but the appendices, then a share per priority class, then the rest, in priority order."""
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
    return granted
