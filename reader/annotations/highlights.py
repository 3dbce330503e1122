"""A researcher's own highlights and notes on a paper's PDF, kept beside the audit.

A highlight is text the reader selected on one page of the PDF, where it stands on that page
(rectangles as fractions of the page's width and height, as the passages' are) and an optional
note. They are shown on the page and in its list, printed by `reader show` and carried into
the exported note; they go with their paper.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from datetime import datetime

from sqlalchemy import delete, func, select
from sqlalchemy.orm import Session

from reader.annotations.judgements import of_user
from reader.errors import ReaderError
from reader.store.tables import Highlight, Paper, utcnow
from reader.text.controls import clean_text

NOTE_LIMIT = 2000
TEXT_LIMIT = 5000  # a selection longer than this is a page or more: not a highlight
RECTS_LIMIT = 400
# What one paper keeps: 1,500 highlights made a 6.8 MB page and a 3 MB note
PAPER_LIMIT = 500  # highlights
PAPER_CHARS_LIMIT = 250_000  # characters of their text and notes together


@dataclass
class HighlightItem:
    """One stored highlight as plain data."""

    id: int
    paper_id: str
    page: int
    rects: list[list[float]]
    text: str
    note: str
    created_at: datetime | None

    @property
    def created_on(self) -> str:
        return self.created_at.date().isoformat() if self.created_at else ""

    def to_json(self) -> dict:
        return {
            "id": self.id,
            "paper_id": self.paper_id,
            "page": self.page,
            "rects": self.rects,
            "text": self.text,
            "note": self.note,
            "created_at": self.created_at.isoformat() if self.created_at else None,
        }


def _plain(row: Highlight) -> HighlightItem:
    return HighlightItem(
        id=row.id,
        paper_id=row.paper_id,
        page=row.page,
        rects=[list(r) for r in row.rects or []],
        text=row.text,
        note=row.note or "",
        created_at=row.created_at,
    )


def highlights_of(session: Session, paper_id: str, user: str | None = None) -> list[HighlightItem]:
    """The paper's highlights made by `user`'s account (None: in the single-user mode), in
    reading order: by page, then from the top of the page."""
    rows = session.scalars(
        select(Highlight)
        .where(Highlight.paper_id == paper_id, of_user(Highlight.user_name, user))
        .order_by(Highlight.id)
    )
    items = [_plain(row) for row in rows]
    return sorted(items, key=lambda h: (h.page, min((r[1] for r in h.rects), default=0.0), h.id))


# ---------------------------------------------------------------- writing


def _fraction(value) -> float | None:
    """A JSON number as a float, or None: not a number (a bool, text, a list), not finite, or an
    integer too large for a float (401 digits made an OverflowError)."""
    if isinstance(value, bool) or not isinstance(value, int | float):
        return None
    try:
        number = float(value)
    except OverflowError:
        return None
    return number if math.isfinite(number) else None


def checked_rects(rects) -> list[list[float]]:
    """[[x0, y0, x1, y1], ...], each a box inside the page (fractions 0-1, x0 < x1, y0 < y1),
    rounded to 5 places; one line saying what is wrong otherwise."""
    if not isinstance(rects, list) or not rects:
        raise ReaderError("the highlight has no place on the page: select text on the page shown")
    if len(rects) > RECTS_LIMIT:
        raise ReaderError(f"the highlight has {len(rects)} rectangles; keep it to {RECTS_LIMIT}")
    out = []
    for n, rect in enumerate(rects, 1):
        numbers = [_fraction(v) for v in rect] if isinstance(rect, list) and len(rect) == 4 else [None]
        if None in numbers:
            raise ReaderError(
                f"rectangle {n} of the highlight: a rectangle is [x0, y0, x1, y1], four numbers, "
                "fractions of the page"
            )
        x0, y0, x1, y1 = (round(v, 5) for v in numbers)
        if not (0 <= x0 < x1 <= 1 and 0 <= y0 < y1 <= 1):
            raise ReaderError(
                f"{[x0, y0, x1, y1]}: a rectangle must lie on the page (fractions from 0 to 1, x0 < x1, y0 < y1)"
            )
        out.append([x0, y0, x1, y1])
    return out


def _checked_text(text, limit: int, what: str, *, required: bool) -> str:
    if not isinstance(text, str):
        raise ReaderError(f"the {what} must be text")
    text = " ".join(clean_text(text).split())
    if required and not text:
        raise ReaderError("nothing is selected: select the words on the page to highlight")
    if len(text) > limit:
        raise ReaderError(f"the {what} is {len(text):,} characters long; keep it to {limit:,}")
    return text


def add_highlight(session: Session, paper: Paper, page, rects, text, note="", user=None) -> HighlightItem:
    """Store `user`'s highlight (None: the single-user mode's) on `page` of `paper` (its PDF);
    refused in one line when the page is not one of the paper's, nothing is selected or the
    note is too long."""
    if paper.source_kind != "pdf":
        raise ReaderError(f"{paper.title[:60]!r} has no PDF pages to highlight")
    if not isinstance(page, int) or isinstance(page, bool) or not 1 <= page <= (paper.pages or 0):
        shown = str(page)[:20] if isinstance(page, int | str) else "given"
        raise ReaderError(f"page {shown}: the paper's pages are 1 to {paper.pages}")
    row = Highlight(
        paper_id=paper.id,
        page=page,
        text=_checked_text(text, TEXT_LIMIT, "selection", required=True),
        rects=checked_rects(rects),
        note=_checked_text(note or "", NOTE_LIMIT, "note", required=False),
        created_at=utcnow(),
        user_name=user,
    )
    _check_room(session, paper.id, len(row.text) + len(row.note))
    session.add(row)
    session.flush()
    return _plain(row)


def _check_room(session: Session, paper_id: str, adding: int) -> None:
    """Refuse a highlight past what one paper keeps (PAPER_LIMIT highlights, PAPER_CHARS_LIMIT
    characters of text and notes), in one line that says what to do."""
    count, chars = session.execute(
        select(
            func.count(Highlight.id),
            func.coalesce(
                func.sum(func.length(Highlight.text) + func.length(func.coalesce(Highlight.note, ""))), 0
            ),
        ).where(Highlight.paper_id == paper_id)
    ).one()
    if count >= PAPER_LIMIT:
        raise ReaderError(
            f"this paper has {count:,} highlights, as many as one paper keeps ({PAPER_LIMIT:,}); "
            "delete some to add more"
        )
    if chars + adding > PAPER_CHARS_LIMIT:
        raise ReaderError(
            f"this paper's highlights and notes hold {chars:,} characters; with this one they would pass "
            f"the {PAPER_CHARS_LIMIT:,} one paper keeps: delete some, or shorten the note"
        )


def delete_highlight(session: Session, paper_id: str, highlight_id: int, user: str | None = None) -> bool:
    """Remove one of `user`'s highlights of the paper; False when it has none by that id."""
    done = session.execute(
        delete(Highlight).where(
            Highlight.paper_id == paper_id, Highlight.id == highlight_id, of_user(Highlight.user_name, user)
        )
    )
    return bool(done.rowcount)


def with_highlights(session: Session, stored, user: str | None = None) -> None:
    """Give `reader show`'s analyses (reader.audit.record.StoredAnalyses) the paper's highlights
    (`user`'s, as highlights_of)."""
    stored.highlights = [h.to_json() for h in highlights_of(session, stored.paper_id, user)]
