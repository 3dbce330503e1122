"""The checklist in the database (checklist_items): stored by the deep read with its analyses, read
by the notes, the paper page, `reader show --json` and the extraction table. A paper read before
the checklist existed gets one from the rules alone when asked (not stored, `stored` False)."""

from __future__ import annotations

from sqlalchemy import delete, select
from sqlalchemy.orm import Session

from reader.checklist.build import build_checklist
from reader.checklist.model import Checklist, ChecklistItem
from reader.store.tables import ChecklistEntry, Chunk, Paper
from reader.text.rigour import ITEM_KEYS, Passage


def save_checklist(session: Session, checklist: Checklist) -> None:
    """Replace the paper's stored checklist with this one (in the caller's transaction)."""
    session.execute(delete(ChecklistEntry).where(ChecklistEntry.paper_id == checklist.paper_id))
    for item in checklist.items:
        session.add(
            ChecklistEntry(
                paper_id=checklist.paper_id,
                item=item.key,
                found=item.found,
                value=item.value,
                quote=item.quote,
                chunk_id=item.chunk_id,
                page_start=item.page_start,
                page_end=item.page_end,
                section=item.section,
                decided_by=item.decided_by,
                kind=item.kind,
                searched=item.searched,
            )
        )


def stored_checklist(session: Session, paper_id: str) -> Checklist | None:
    rows = list(session.scalars(select(ChecklistEntry).where(ChecklistEntry.paper_id == paper_id)))
    if not rows:
        return None
    items = [
        ChecklistItem(
            r.item,
            bool(r.found),
            value=r.value or "",
            quote=r.quote or "",
            page_start=r.page_start,
            page_end=r.page_end,
            chunk_id=r.chunk_id,
            section=r.section or "",
            decided_by=r.decided_by or "",
            kind=r.kind or "",
            searched=r.searched or "",
        )
        for r in rows
        if r.item in ITEM_KEYS
    ]
    items.sort(key=lambda i: ITEM_KEYS.index(i.key))
    return Checklist(paper_id, items)


def paper_passages(session: Session, paper_id: str) -> list[Passage]:
    """The paper's stored passages in order, with their sections, pages and ids."""
    chunks = session.scalars(select(Chunk).where(Chunk.paper_id == paper_id).order_by(Chunk.ordinal))
    return [Passage(c.text, c.section or "", c.page_start, c.page_end, c.id) for c in chunks]


def checklist_of(session: Session, paper_id: str) -> Checklist | None:
    """The stored checklist, else one made by the rules alone (no search, no model; `stored`
    False); None when there is no such paper, or it has no passages."""
    stored = stored_checklist(session, paper_id)
    if stored is not None:
        return stored
    paper = session.get(Paper, paper_id)
    if paper is None:
        return None
    passages = paper_passages(session, paper_id)
    if not passages:
        return None  # nothing to read: no checklist rather than thirteen "not found"
    checklist = build_checklist(paper_id, paper.title or "", passages)
    checklist.stored = False
    return checklist
