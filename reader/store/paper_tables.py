"""A paper's stored tables (paper_tables, migration 0012) as plain data (reader.text.grid.Table)."""

from __future__ import annotations

from sqlalchemy import select
from sqlalchemy.orm import Session

from reader.store.tables import PaperTable
from reader.text.grid import Table


def paper_tables(session: Session, paper_id: str) -> list[Table]:
    """The paper's tables in the order ingest found them (page order); [] for none."""
    rows = session.scalars(
        select(PaperTable).where(PaperTable.paper_id == paper_id).order_by(PaperTable.ordinal)
    )
    return [
        Table(
            label=t.label,
            caption=t.caption,
            page=t.page,
            rect=list(t.rect or []),
            rows=[list(r) for r in t.rows or []],
            header_rows=t.header_rows,
            cell_rects=list(t.cell_rects or []),
            method=t.method,
        )
        for t in rows
    ]
