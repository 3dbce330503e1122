"""The citation graph of the library: each paper's reference entries matched to the library's
papers, stored both ways (what a paper cites, what cites it).

    link_paper(session, paper_id)     # its entries against the library, and the library's against it
    ensure_linked(session)            # papers stored before the graph existed, linked once
    cites(session, paper_id)          -> [Entry]   its reference entries, each with the library paper
    cited_by(session, paper_id)       -> [Entry]   the library's entries that cite it

An entry cites a library paper when it carries the paper's DOI, else when the paper's title,
normalised (NFKC, lower case, only letters and digits, a hyphen broken at a line end joined), stands
in the entry's normalised text; a title of fewer than MIN_TITLE_WORDS words is not matched by title
(too many entries would contain it). A title "Name: subtitle" is matched by its subtitle too when
that has MIN_TITLE_WORDS words.
"""

from __future__ import annotations

import re
import unicodedata
from dataclasses import dataclass, field

from sqlalchemy import delete, select, update

from reader.ingest.pages import find_doi
from reader.store.tables import Paper, Reference, ReferenceLink

MIN_TITLE_WORDS = 3
MIN_TITLE_CHARS = 15
_BROKEN = re.compile(r"(\w)-\s+(\w)")


def normalised(text: str) -> str:
    """Lower-case letters and digits of `text`, single spaces between them, a hyphen broken at a
    line end ("Docu- ment") joined."""
    text = unicodedata.normalize("NFKC", text or "")
    text = _BROKEN.sub(r"\1\2", text)
    return " ".join(re.sub(r"[^\w]+", " ", text.lower()).replace("_", " ").split())


def title_keys(title: str) -> list[str]:
    """The normalised forms of a title an entry may carry: the whole title, and its part after a
    colon ("SPECTER: Document-level …" → "document level …") when long enough."""
    keys = []
    for part in [title, *(title.split(":", 1)[1:] if ":" in (title or "") else [])]:
        key = normalised(part)
        if len(key.split()) >= MIN_TITLE_WORDS and len(key) >= MIN_TITLE_CHARS:
            keys.append(key)
    return list(dict.fromkeys(keys))


def short_name(title: str) -> str:
    """The name a paper goes by: its title's part before a colon when that is one to three words
    ("SPECTER", "S2ORC"), else ""."""
    head = (title or "").split(":", 1)[0].strip() if ":" in (title or "") else ""
    return head if head and len(head.split()) <= 3 else ""


@dataclass(frozen=True)
class LibraryPaper:
    id: str
    title: str
    doi: str | None
    keys: tuple[str, ...]


def library_papers(session) -> list[LibraryPaper]:
    return [
        LibraryPaper(pid, title or "", (doi or "").lower() or None, tuple(title_keys(title or "")))
        for pid, title, doi in session.execute(select(Paper.id, Paper.title, Paper.doi))
    ]


def match(entry: str, papers: list[LibraryPaper], *, exclude: str | None = None) -> tuple[str | None, str]:
    """(the library paper the entry cites, "doi" or "title"), or (None, "")."""
    doi = (find_doi([entry]) or "").lower()
    if doi:
        for paper in papers:
            if paper.doi == doi and paper.id != exclude:
                return paper.id, "doi"
    text = f" {normalised(entry)} "
    found = [p for p in papers if p.id != exclude and any(f" {key} " in text for key in p.keys)]
    if not found:
        return None, ""
    # the longest title that fits: "BERT: pre-training…" inside an entry for "RoBERTa: …" loses
    best = max(found, key=lambda p: max(len(k) for k in p.keys if f" {k} " in text))
    return best.id, "title"


def link_paper(session, paper_id: str) -> int:
    """Match the paper's entries against the library and the library's unmatched (or matched to
    this paper) entries against it; returns how many of the paper's entries cite a library paper.
    The caller commits."""
    papers = library_papers(session)
    session.execute(delete(ReferenceLink).where(ReferenceLink.citing_paper_id == paper_id))
    rows = session.execute(select(Reference.id, Reference.text).where(Reference.paper_id == paper_id)).all()
    resolved = 0
    for ref_id, text in rows:
        cited, how = match(text, papers, exclude=paper_id)
        resolved += cited is not None
        session.add(
            ReferenceLink(reference_id=ref_id, citing_paper_id=paper_id, cited_paper_id=cited, matched_by=how)
        )
    own = [p for p in papers if p.id == paper_id]
    if own:
        others = session.execute(
            select(ReferenceLink.reference_id, Reference.text, ReferenceLink.cited_paper_id)
            .join(Reference, Reference.id == ReferenceLink.reference_id)
            .where(ReferenceLink.citing_paper_id != paper_id)
            .where((ReferenceLink.cited_paper_id.is_(None)) | (ReferenceLink.cited_paper_id == paper_id))
        ).all()
        for ref_id, text, before in others:
            cited, how = match(text, own)
            if cited != before:
                session.execute(
                    update(ReferenceLink)
                    .where(ReferenceLink.reference_id == ref_id)
                    .values(cited_paper_id=cited, matched_by=how)
                )
    session.flush()
    return resolved


def ensure_linked(session) -> int:
    """Link every paper whose entries were never matched (stored before the graph existed);
    returns how many were linked. The caller commits."""
    linked = select(ReferenceLink.citing_paper_id).distinct()
    todo = list(
        session.scalars(select(Reference.paper_id).distinct().where(Reference.paper_id.not_in(linked)))
    )
    for paper_id in todo:
        link_paper(session, paper_id)
    return len(todo)


@dataclass
class Entry:
    """One reference entry: the citing paper, its marker, page and text, and the library paper it
    cites (None when the library does not hold it)."""

    reference_id: int
    citing_id: str
    citing_title: str
    marker: str
    page: int
    text: str
    cited_id: str | None = None
    cited_title: str = ""
    matched_by: str = ""

    def to_json(self) -> dict:
        return {
            "reference_id": self.reference_id,
            "citing_paper_id": self.citing_id,
            "citing_title": self.citing_title,
            "marker": self.marker,
            "page": self.page,
            "entry": self.text,
            "cited_paper_id": self.cited_id,
            "cited_title": self.cited_title,
            "matched_by": self.matched_by,
        }


def _entries(session, condition) -> list[Entry]:
    titles = dict(session.execute(select(Paper.id, Paper.title)).all())
    rows = session.execute(
        select(
            Reference.id,
            Reference.paper_id,
            Reference.marker,
            Reference.page,
            Reference.text,
            ReferenceLink.cited_paper_id,
            ReferenceLink.matched_by,
        )
        .outerjoin(ReferenceLink, ReferenceLink.reference_id == Reference.id)
        .where(condition)
        .order_by(Reference.paper_id, Reference.ordinal)
    ).all()
    return [
        Entry(
            ref_id,
            citing,
            titles.get(citing, ""),
            marker or "",
            page,
            " ".join((text or "").split()),
            cited,
            titles.get(cited, "") if cited else "",
            how or "",
        )
        for ref_id, citing, marker, page, text, cited, how in rows
    ]


def cites(session, paper_id: str) -> list[Entry]:
    """The paper's reference entries in order, each with the library paper it cites, if any."""
    return _entries(session, Reference.paper_id == paper_id)


def cited_by(session, paper_id: str) -> list[Entry]:
    """The library's reference entries that cite the paper, by citing paper."""
    return _entries(session, ReferenceLink.cited_paper_id == paper_id)


def library_edges(session) -> list[Entry]:
    """Every entry of the library that cites another library paper."""
    return _entries(session, ReferenceLink.cited_paper_id.is_not(None))


def entries_naming(session, name: str) -> list[Entry]:
    """The library's entries whose text names `name` (a work that need not be in the library),
    matched as whole words, case-insensitively."""
    key = normalised(name)
    if not key:
        return []
    return [
        e for e in _entries(session, Reference.id.is_not(None)) if f" {key} " in f" {normalised(e.text)} "
    ]


@dataclass
class CitationList:
    """`reader cites` / `reader cited-by`: a paper's entries (`direction` "cites") or the library's
    entries citing it ("cited_by"); `external`, works outside the library that cite it, from the
    scholarly services when external search is on ({"source", "title", "year", "url"})."""

    paper_id: str
    title: str
    direction: str
    entries: list[Entry]
    external: list[dict] = field(default_factory=list)
    notes: list[str] = field(default_factory=list)

    @property
    def in_library(self) -> list[Entry]:
        return [e for e in self.entries if e.cited_id] if self.direction == "cites" else self.entries

    def to_json(self) -> dict:
        return {
            "paper_id": self.paper_id,
            "title": self.title,
            "direction": self.direction,
            "entries": [e.to_json() for e in self.entries],
            "in_library": len(self.in_library),
            "external": self.external,
            "notes": self.notes,
        }
