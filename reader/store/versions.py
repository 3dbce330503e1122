"""Versions of one paper among the stored ones: another file of the same paper (a revised
version, a re-download, the same PDF with other metadata) has another sha256, hence another
id. Two papers are taken for versions of one when they share a DOI, or a title and nearly all
their text. The review queue skips the review of a version whose twin is reviewed
(reader/review/worker.py), the upload page names it, and the library's rows of one title
say what differs between them (reader/web/library.py)."""

from __future__ import annotations

import re
from collections.abc import Iterable
from pathlib import PurePath

from sqlalchemy import select
from sqlalchemy.orm import Session

from reader.store.tables import Chunk, Paper, ReviewJob

SHINGLE_WORDS = 5  # a shingle: five words in a row (a CJK character counts as a word)
NEARLY_THE_SAME = 0.9  # of the shorter text's shingles found in the other
SHOWN_WORDS = 8  # words of a paper's first difference shown
NEAR_DUPLICATE = "near-duplicate"  # the status of a review job skipped for a reviewed twin
_WORD = re.compile(r"[\u3400-\u9fff]|\w+")


def shingles(text: str) -> set[int]:
    words = _WORD.findall(text.lower())
    return {hash(tuple(words[i : i + SHINGLE_WORDS])) for i in range(max(1, len(words) - SHINGLE_WORDS + 1))}


def title_key(title: str | None) -> str:
    """The title in lower-case words, "" for none (or "untitled")."""
    key = " ".join(re.findall(r"\w+", (title or "").lower()))
    return "" if key in ("", "untitled") else key


def doi_key(doi: str | None) -> str:
    return re.sub(r"^(https?://(dx\.)?doi\.org/|doi:)", "", (doi or "").strip().lower())


def paper_shingles(session: Session, paper_id: str) -> set[int]:
    """The shingles of each passage (none across two: where passages begin differs by version)."""
    found: set[int] = set()
    for text in session.scalars(select(Chunk.text).where(Chunk.paper_id == paper_id)):
        found |= shingles(text)
    return found


def _nearly_the_same(mine: set[int], theirs: set[int]) -> bool:
    return bool(mine and theirs) and len(mine & theirs) >= NEARLY_THE_SAME * min(len(mine), len(theirs))


def version_among(session: Session, paper_id: str, candidates: Iterable[str]) -> dict | None:
    """The first of `candidates` (paper ids, in the order given) that `paper_id` looks like a
    version of, as {"paper_id", "title", "reason"}; None when none: the same DOI, or the same
    title and nearly the same text (90% of the shorter one's shingles in the other)."""
    candidates = list(candidates)
    papers = {
        pid: (title, doi)
        for pid, title, doi in session.execute(
            select(Paper.id, Paper.title, Paper.doi).where(Paper.id.in_([paper_id, *candidates]))
        )
    }
    if paper_id not in papers:
        return None
    title, doi = papers[paper_id]
    others = [c for c in dict.fromkeys(candidates) if c in papers and c != paper_id]
    for other in others:
        if doi_key(doi) and doi_key(papers[other][1]) == doi_key(doi):
            return {"paper_id": other, "title": papers[other][0], "reason": "the same DOI"}
    same_title = [o for o in others if title_key(title) and title_key(papers[o][0]) == title_key(title)]
    mine = paper_shingles(session, paper_id) if same_title else set()
    for other in same_title:
        if _nearly_the_same(mine, paper_shingles(session, other)):
            return {
                "paper_id": other,
                "title": papers[other][0],
                "reason": "the same title and nearly the same text",
            }
    return None


def versions_of(session: Session, paper_ids: list[str]) -> dict[str, dict | None]:
    """paper id -> the paper stored before it that it looks like a version of (version_among),
    or None. The new paper is kept all the same."""
    added = dict(session.execute(select(Paper.id, Paper.ingested_at)).all())
    found: dict[str, dict | None] = {}
    for pid in paper_ids:
        found[pid] = None
        if pid not in added:
            continue
        bound = added[pid].timestamp() if added[pid] else float("inf")  # undated: after every other
        earlier = sorted(
            (at.timestamp() if at else 0.0, other)
            for other, at in added.items()
            if other != pid and (at.timestamp() if at else 0.0) <= bound
        )
        found[pid] = version_among(session, pid, [other for _, other in earlier])
    return found


def _paper_words(session: Session, paper_id: str) -> list[tuple[str, int]]:
    """(word, page) of the paper's passages in order."""
    words: list[tuple[str, int]] = []
    for text, page in session.execute(
        select(Chunk.text, Chunk.page_start).where(Chunk.paper_id == paper_id).order_by(Chunk.ordinal)
    ):
        words += [(word, page) for word in text.split()]
    return words


def first_difference(session: Session, paper_id: str, other_id: str) -> str:
    """Where the paper's text first differs from the other's, in a few of its words:
    'differs from 1a2b3c4d on p. 3: “… now says …”', or 'the same text as 1a2b3c4d'. The
    passages of two versions begin at the same words up to their first difference, so the
    first word that differs in their run of passages is where the texts differ."""
    mine, theirs = _paper_words(session, paper_id), _paper_words(session, other_id)
    other = other_id[:8]
    at = next((n for n, (a, b) in enumerate(zip(mine, theirs, strict=False)) if a[0] != b[0]), None)
    if at is None:
        if len(mine) == len(theirs):
            return f"the same text as {other}"
        if len(mine) < len(theirs):
            return f"the text of {other} without its end (from p. {theirs[len(mine)][1]})"
        at = len(theirs)
    start = max(0, at - 2)
    shown = " ".join(word for word, _ in mine[start : start + SHOWN_WORDS])
    return f"differs from {other} on p. {mine[at][1]}: “{'… ' if start else ''}{shown} …”"


def near_duplicate_line(twin: dict) -> str:
    """What a job whose review was skipped says of it: 'near-duplicate of Title (1a2b3c4d), the
    same DOI: not reviewed'."""
    title = twin.get("title") or "a reviewed paper"
    reason = f", {twin['reason']}" if twin.get("reason") else ""
    return f"near-duplicate of {title} ({str(twin.get('paper_id', ''))[:8]}){reason}: not reviewed"


def _file_name(paper: Paper) -> str:
    return paper.file_name or PurePath(paper.source_path or "").name or f"{paper.id[:12]}.pdf"


def near_duplicates(session: Session, paper_ids: Iterable[str]) -> dict[str, dict]:
    """paper id -> the twin its latest review job found it a near-duplicate of ({"paper_id",
    "title", "reason"}), for the papers whose review was skipped for that."""
    latest: dict[str, tuple[str, dict]] = {}
    for pid, status, summary in session.execute(
        select(ReviewJob.paper_id, ReviewJob.status, ReviewJob.summary)
        .where(ReviewJob.paper_id.in_(list(paper_ids)))
        .order_by(ReviewJob.id)
    ):
        latest[pid] = (status, summary or {})
    return {
        pid: summary["near_duplicate"]
        for pid, (status, summary) in latest.items()
        if status == NEAR_DUPLICATE and isinstance(summary.get("near_duplicate"), dict)
    }


def told_apart(session: Session, paper_ids: Iterable[str]) -> dict[str, str]:
    """paper id -> what tells it from the other papers of its title (or the twin it is a
    near-duplicate of): what differs of file name, pages, year and date added, "near-duplicate
    of …", where its text first differs from the first one added, and its id. Papers alone
    under their title are not in the answer."""
    papers = {p.id: p for p in session.scalars(select(Paper).where(Paper.id.in_(list(paper_ids))))}
    twins = near_duplicates(session, papers)

    def group_of(paper: Paper) -> str:
        twin = twins.get(paper.id, {}).get("paper_id")
        paper = papers.get(twin, paper)
        return title_key(paper.title) or paper.id

    groups: dict[str, list[Paper]] = {}
    for paper in papers.values():
        groups.setdefault(group_of(paper), []).append(paper)
    found: dict[str, str] = {}
    for group in (g for g in groups.values() if len(g) > 1):
        group.sort(key=lambda p: (p.ingested_at.timestamp() if p.ingested_at else 0.0, p.id))
        for paper in group:
            found[paper.id] = " · ".join(_what_differs(session, paper, group, twins.get(paper.id)))
    return found


def _what_differs(session: Session, paper: Paper, group: list[Paper], twin: dict | None) -> list[str]:
    def differ(value) -> bool:
        return len({value(p) for p in group}) > 1

    def added(p: Paper) -> str:
        return f"added {p.ingested_at:%Y-%m-%d %H:%M}" if p.ingested_at else ""

    parts = [
        _file_name(paper) if differ(_file_name) else "",
        f"{paper.pages} pages" if paper.pages and differ(lambda p: p.pages) else "",
        str(paper.year) if paper.year and differ(lambda p: p.year) else "",
        added(paper) if differ(added) else "",
        f"near-duplicate of {twin.get('title') or 'a reviewed paper'} ({str(twin.get('paper_id'))[:8]}), not reviewed"
        if twin
        else "",
        first_difference(session, paper.id, group[0].id) if paper is not group[0] else "",
        f"id {paper.id[:8]}",
    ]
    return [p for p in parts if p]
