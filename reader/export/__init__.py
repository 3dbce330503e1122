"""Export stored reviews as Markdown notes: one per paper plus a collection index.

`export_notes(db, paper_ids, out_dir)` writes `<slug>-<sha8>.md` for each
reviewed paper (with its tables listed, each also as `<slug>-<sha8>-table-N.csv` beside it,
reader/export/tables.py, and its figures shown, each as `<slug>-<sha8>-figure-N.png` beside it,
reader/export/figures.py) and `index.md` linking every reader note present in the
folder. Writing is idempotent (same bytes for the same stored review) and
atomic per file; a note whose title changed replaces its older file.
"""

from __future__ import annotations

import os
import re
import tempfile
from dataclasses import dataclass, field
from pathlib import Path

from sqlalchemy import select
from sqlalchemy.orm import sessionmaker

from reader.errors import ReaderError
from reader.export.bibtex import BibtexResult, bibtex_text, citekeys
from reader.export.figures import figures_section, write_figures
from reader.export.markdown import (
    INDEX_NAME,
    Note,
    collect_note,
    note_file_name,
    render_index,
    render_note,
)
from reader.export.tables import tables_section, write_tables
from reader.store.paper_figures import paper_figures
from reader.store.paper_tables import paper_tables
from reader.store.tables import Paper

__all__ = ["BibtexResult", "ExportResult", "export_bibtex", "export_notes", "note_file_name"]

_NOTE_NAME = re.compile(r"-([0-9a-f]{8})\.md$")


@dataclass
class ExportResult:
    out_dir: Path
    notes: list[Path] = field(default_factory=list)
    index: Path | None = None
    not_reviewed: list[tuple[str, str]] = field(default_factory=list)  # (paper_id, title)
    tables: list[Path] = field(default_factory=list)  # each table's CSV file, beside its note
    figures: list[Path] = field(default_factory=list)  # each figure's PNG file, beside its note

    def to_json(self) -> dict:
        return {
            "out_dir": str(self.out_dir),
            "notes": [str(p) for p in self.notes],
            "tables": [str(p) for p in self.tables],
            "figures": [str(p) for p in self.figures],
            "index": str(self.index) if self.index else None,
            "not_reviewed": [{"paper_id": pid, "title": title} for pid, title in self.not_reviewed],
        }


def write_atomically(path: Path, text: str) -> None:
    fd, tmp = tempfile.mkstemp(prefix=".tmp-", suffix=".md", dir=path.parent)
    try:
        with os.fdopen(fd, "w", encoding="utf-8", newline="\n") as fh:
            fh.write(text)
        os.replace(tmp, path)
    except BaseException:
        Path(tmp).unlink(missing_ok=True)
        raise


def export_notes(
    db: sessionmaker, paper_ids: list[str] | None, out_dir: Path, *, lookup=None, user: str | None = None
) -> ExportResult:
    """Write notes for `paper_ids` (None: every reviewed paper) and the index note. `lookup`
    (reader.export.lookup.ReferenceLookup) checks the cited references in Crossref or OpenAlex;
    `user`: whose judgements and highlights the notes carry (None: the single-user mode's)."""
    out_dir = _writable_folder(out_dir)
    result = ExportResult(out_dir=out_dir)
    with db() as session:
        if paper_ids is None:
            papers = list(session.scalars(select(Paper).order_by(Paper.title)))
        else:
            papers = [session.get(Paper, pid) for pid in paper_ids]
        notes: dict[str, Note] = {}
        keys = citekeys(session)
        for paper in papers:
            if paper is None:
                continue
            note = collect_note(session, paper, keys, lookup, user)
            if note is None:
                result.not_reviewed.append((paper.id, paper.title))
                continue
            notes[paper.id] = note
            _write_note(session, note, paper.id, out_dir, result)
        notes.update(_notes_already_there(session, out_dir, notes, keys))
    if notes or result.notes:
        result.index = out_dir / INDEX_NAME
        write_atomically(result.index, render_index(list(notes.values())))
    return result


def _writable_folder(out_dir: Path) -> Path:
    out_dir = Path(out_dir).expanduser()
    try:
        out_dir.mkdir(parents=True, exist_ok=True)
    except OSError as exc:
        raise ReaderError(f"{out_dir}: cannot create the output folder ({exc.strerror})") from exc
    if not os.access(out_dir, os.W_OK):
        raise ReaderError(f"{out_dir}: the output folder is not writable; choose another with --out")
    return out_dir


def note_text(session, note: Note, paper_id: str) -> tuple[str, list, list]:
    """(the note's Markdown with its Tables and Figures sections, the tables, the figures)."""
    tables = paper_tables(session, paper_id)
    figures = paper_figures(session, paper_id)
    sections = tables_section(note.file_name, tables) + figures_section(note.file_name, figures)
    return render_note(note) + sections, tables, figures


def _write_note(session, note: Note, paper_id: str, out_dir: Path, result: ExportResult) -> None:
    """The note with its Tables and Figures sections, and the CSV and picture files beside it."""
    _remove_renamed(out_dir, note)
    path = out_dir / note.file_name
    text, tables, figures = note_text(session, note, paper_id)
    write_atomically(path, text)
    result.notes.append(path)
    result.tables += write_tables(out_dir, note.file_name, tables, write_atomically)
    result.figures += write_figures(out_dir, note.file_name, figures)


def _notes_already_there(session, out_dir: Path, written: dict[str, Note], keys) -> dict[str, Note]:
    """The notes of earlier exports in the folder, for the index (those written now aside)."""
    found: dict[str, Note] = {}
    for prefix, path in _existing_notes(out_dir):
        if any(pid.startswith(prefix) for pid in written):
            continue
        paper = session.scalars(select(Paper).where(Paper.id.startswith(prefix))).first()
        note = collect_note(session, paper, keys) if paper is not None else None
        if note is not None and note.file_name == path.name:
            found[paper.id] = note
    return found


def _existing_notes(out_dir: Path) -> list[tuple[str, Path]]:
    found = []
    for path in sorted(out_dir.glob("*.md")):
        match = _NOTE_NAME.search(path.name)
        if match and path.name != INDEX_NAME:
            found.append((match.group(1), path))
    return found


def _remove_renamed(out_dir: Path, note: Note) -> None:
    """A paper whose title changed since the last export: drop its old file."""
    for prefix, path in _existing_notes(out_dir):
        if prefix == note.paper_id[:8] and path.name != note.file_name:
            try:
                head = path.read_text(encoding="utf-8", errors="replace")[:4000]
            except OSError:
                continue
            if f"sha256: {note.paper_id}" in head:
                path.unlink(missing_ok=True)


def export_bibtex(db: sessionmaker, paper_ids: list[str] | None, path: Path) -> BibtexResult:
    """Write the BibTeX entries of `paper_ids` (None: every paper with a stored review) to `path`."""
    from reader.store.tables import Analysis

    path = Path(path).expanduser()
    if path.is_dir():
        raise ReaderError(
            f"{path}: is a folder; give a file name for the BibTeX entries, e.g. {path / 'papers.bib'}"
        )
    if not path.parent.is_dir():
        raise ReaderError(
            f"{path.parent}: no such folder for the BibTeX file; create it or choose another path"
        )
    with db() as session:
        if paper_ids is None:
            reviewed = set(session.scalars(select(Analysis.paper_id).distinct()))
            paper_ids = [
                pid for pid in session.scalars(select(Paper.id).order_by(Paper.title)) if pid in reviewed
            ]
        text, entries = bibtex_text(session, paper_ids)
    try:
        fd, tmp = tempfile.mkstemp(prefix=".tmp-", suffix=".bib", dir=path.parent)
        try:
            with os.fdopen(fd, "w", encoding="utf-8", newline="\n") as fh:
                fh.write(text)
            os.replace(tmp, path)
        finally:
            Path(tmp).unlink(missing_ok=True)
    except OSError as exc:
        raise ReaderError(f"{path}: cannot write the BibTeX file ({exc.strerror or exc})") from exc
    return BibtexResult(path=path, entries=entries)
