"""Citation keys and BibTeX entries for stored papers.

A paper keeps the citation key Zotero (or Better BibTeX, through Zotero's Extra field) stored
for it; otherwise it gets one in Better BibTeX's `authorYearTitleword` style: the first
author's surname in lower-case ASCII, the year, and the first title word that is not a
function word, capitalised ("downey2007Redundancy"). Two papers that would get the same key
are told apart by a suffix a, b, … in the order they were ingested, so a paper's key does
not change when later papers arrive.
"""

from __future__ import annotations

import re
import unicodedata
from dataclasses import dataclass, field
from pathlib import Path

from sqlalchemy import select
from sqlalchemy.orm import Session

from reader.store.tables import Paper
from reader.text.controls import clean_text

# function words Better BibTeX skips when it picks a title's first word
_SKIP = {
    "a",
    "an",
    "the",
    "and",
    "or",
    "but",
    "nor",
    "for",
    "so",
    "yet",
    "of",
    "on",
    "in",
    "at",
    "to",
    "by",
    "from",
    "with",
    "into",
    "onto",
    "upon",
    "about",
    "as",
    "via",
    "is",
    "are",
    "be",
    "do",
    "does",
    "how",
    "what",
    "when",
    "where",
    "which",
    "who",
    "why",
    "toward",
    "towards",
}
_TYPES = {
    "journalArticle": "article",
    "magazineArticle": "article",
    "newspaperArticle": "article",
    "conferencePaper": "inproceedings",
    "book": "book",
    "bookSection": "incollection",
    "thesis": "phdthesis",
    "report": "techreport",
    "preprint": "misc",
    "manuscript": "unpublished",
}
_VENUE_FIELD = {"article": "journal", "inproceedings": "booktitle", "incollection": "booktitle"}


def _ascii(text: str) -> str:
    return unicodedata.normalize("NFKD", text).encode("ascii", "ignore").decode("ascii")


def surname(author: str) -> str:
    """The family name of "First Last" or "Last, First"."""
    author = " ".join(str(author).split())
    if "," in author:
        return author.split(",", 1)[0]
    return author.rsplit(" ", 1)[-1] if author else ""


def make_citekey(authors: list[str], year: int | None, title: str) -> str:
    """Better BibTeX style authorYearTitleword, e.g. "vaswani2017Attention"."""
    name = re.sub(r"[^a-z]", "", _ascii(surname(authors[0])).lower()) if authors else ""
    word = ""
    for raw in re.findall(r"[^\W_]+", _ascii(title or "")):
        if raw.lower() not in _SKIP and not raw.isdigit():
            word = raw[0].upper() + raw[1:]
            break
    key = f"{name}{year or ''}{word}"
    return key or "paper"


def citekeys(session: Session) -> dict[str, str]:
    """Every paper's citation key: the stored one, else a made one, unique in the library."""
    rows = session.execute(
        select(Paper.id, Paper.authors, Paper.year, Paper.title, Paper.citekey).order_by(
            Paper.ingested_at, Paper.id
        )
    ).all()
    keys: dict[str, str] = {}
    taken = {row.citekey for row in rows if row.citekey}
    for row in rows:
        if row.citekey:
            keys[row.id] = row.citekey
            continue
        base = make_citekey(list(row.authors or []), row.year, row.title)
        key, n = base, 0
        while key in taken:
            key = base + _suffix(n)
            n += 1
        taken.add(key)
        keys[row.id] = key
    return keys


def _suffix(n: int) -> str:
    letters = ""
    n += 1
    while n:
        n, r = divmod(n - 1, 26)
        letters = chr(ord("a") + r) + letters
    return letters


def _escape(value: str) -> str:
    value = " ".join(str(value).split())
    value = value.replace("\\", "\x00")
    value = re.sub(r"([{}&%$#_])", r"\\\1", value)
    value = value.replace("~", r"\textasciitilde{}").replace("^", r"\textasciicircum{}")
    return value.replace("\x00", r"\textbackslash{}")


def bibtex_entry(paper: Paper, key: str) -> str:
    meta = paper.zotero_meta or {}
    kind = _TYPES.get(meta.get("type", ""), "article" if meta.get("venue") else "misc")
    fields: list[tuple[str, str]] = [("title", paper.title or "")]
    if paper.authors:
        fields.append(("author", " and ".join(" ".join(str(a).split()) for a in paper.authors)))
    if paper.year:
        fields.append(("year", str(paper.year)))
    if meta.get("venue"):
        fields.append((_VENUE_FIELD.get(kind, "howpublished"), meta["venue"]))
    if paper.doi:
        fields.append(("doi", paper.doi))
    body = ",\n".join(f"  {name} = {{{_escape(value)}}}" for name, value in fields if value)
    return f"@{kind}{{{key},\n{body}\n}}\n"


@dataclass
class BibtexResult:
    path: Path
    entries: list[tuple[str, str]] = field(default_factory=list)  # (paper_id, key)

    def to_json(self) -> dict:
        return {
            "path": str(self.path),
            "entries": [{"paper_id": pid, "citekey": key} for pid, key in self.entries],
        }


def bibtex_text(session: Session, paper_ids: list[str]) -> tuple[str, list[tuple[str, str]]]:
    keys = citekeys(session)
    papers = [p for p in (session.get(Paper, pid) for pid in paper_ids) if p is not None]
    papers.sort(key=lambda p: keys[p.id].lower())
    entries = [(p.id, keys[p.id]) for p in papers]
    # no control character or bidi override from a stored field reaches the file (clean_text)
    return clean_text("\n".join(bibtex_entry(p, keys[p.id]) for p in papers)), entries
