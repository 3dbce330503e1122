"""The training papers in a library of their own: ingested once, read back passage by passage."""

from __future__ import annotations

import sys
from pathlib import Path


def training_papers(services, folder: Path) -> dict[str, str]:
    """The library id of each PDF in `folder`, by file name, in name order; the ones not stored
    yet are ingested first."""
    from sqlalchemy import select

    from reader.ingest.pipeline import ingest_paths
    from reader.store.tables import Paper

    files = sorted(folder.glob("*.pdf"))
    with services.db() as session:
        stored = {Path(p.source_path or "").name: p.id for p in session.scalars(select(Paper))}
    missing = [f for f in files if f.name not in stored]
    if missing:
        print(f"ingesting {len(missing)} papers …", file=sys.stderr, flush=True)
        for r in ingest_paths(missing, services.db, open_index=lambda: services.search_index):
            if r.paper_id:
                stored[Path(r.file).name] = r.paper_id
    wanted = {f.name for f in files}
    return {name: stored[name] for name in sorted(n for n in stored if n in wanted)}


def passages(services, paper_id: str) -> list[tuple[int, str, int, int, str]]:
    """The paper's passages in order: (id, section, first page, last page, text)."""
    from sqlalchemy import select

    from reader.store.tables import Chunk

    with services.db() as session:
        chunks = session.scalars(select(Chunk).where(Chunk.paper_id == paper_id).order_by(Chunk.ordinal))
        return [(c.id, c.section or "", c.page_start, c.page_end, c.text) for c in chunks]


def usable_sentences(rows: list[tuple[int, str, int, int, str]]) -> list[tuple[str, int]]:
    """Each sentence of the passages (`passages`) fit to make a claim or a question from, with its
    passage's id: prose, outside the sections a read skips (reader.deepread: references …)."""
    from reader.text.split import split_sentences
    from scripts.training.claims import SKIP_SECTION, usable_sentence

    return [
        (s, cid)
        for cid, section, _, _, text in rows
        if not SKIP_SECTION.match(section)
        for s in split_sentences(text)
        if usable_sentence(s)
    ]
