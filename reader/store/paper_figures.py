"""A paper's stored figures (paper_figures, migration 0014) as plain data (reader.text.figures.Figure)."""

from __future__ import annotations

from sqlalchemy import select
from sqlalchemy.orm import Session

from reader.store.tables import Caption, PaperFigure
from reader.text.figures import Figure


def paper_figures(session: Session, paper_id: str, *, with_png: bool = True) -> list[Figure]:
    """The paper's figures in page order; [] for none. `with_png=False` leaves the pictures'
    bytes in the database (a listing)."""
    columns = [PaperFigure.label, PaperFigure.caption, PaperFigure.page, PaperFigure.rect, PaperFigure.method]
    if with_png:
        columns.append(PaperFigure.png)
    rows = session.execute(
        select(*columns).where(PaperFigure.paper_id == paper_id).order_by(PaperFigure.ordinal)
    )
    return [
        Figure(
            label=r.label,
            caption=r.caption,
            page=r.page,
            rect=list(r.rect or []),
            method=r.method,
            png=bytes(r.png) if with_png and r.png else b"",
        )
        for r in rows
    ]


def figure_png(session: Session, paper_id: str, ordinal: int) -> bytes | None:
    """The picture of the paper's figure at `ordinal` (its place in paper_figures' order), or None."""
    return session.scalar(
        select(PaperFigure.png).where(PaperFigure.paper_id == paper_id, PaperFigure.ordinal == ordinal)
    )


def figure_captions(session: Session, paper_id: str) -> dict[str, tuple[int, str]]:
    """The paper's figures by number ("3" of "Figure 3"): (page, caption), from its captions as
    ingest found them (every paper ingested from a PDF has them, figures read or not; the first
    caption of each label), then its stored figures (a caption the parser missed)."""
    rows = session.execute(
        select(Caption.label, Caption.page, Caption.text)
        .where(Caption.paper_id == paper_id, Caption.kind == "figure")
        .order_by(Caption.ordinal)
    )
    figures = session.execute(
        select(PaperFigure.label, PaperFigure.page, PaperFigure.caption)
        .where(PaperFigure.paper_id == paper_id)
        .order_by(PaperFigure.ordinal)
    )
    found: dict[str, tuple[int, str]] = {}
    for label, page, text in [*rows, *figures]:  # a figure whose caption only the figures' reader found
        number = (label or "").split()[-1] if label else ""
        if number and number not in found:
            found[number] = (page, text)
    return found
