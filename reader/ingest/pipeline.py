"""Files -> stored papers: find sources, parse, chunk, write one paper per
transaction, then tell the search index.

A paper's id is the sha256 of the file's bytes, so ingesting the same file
again (under any name) is a no-op. A failure on one file (a bad file, the
database refusing it, a full disk) is reported in one line in its IngestResult
and never touches another paper's rows. Papers are stored with the absolute
path of their file. What one file may cost is bounded (reader.ingest.limits): only regular
files up to a size are read, and a PDF is parsed in a child process with bounded memory, time
and pages (reader.ingest.child).
"""

from __future__ import annotations

import json
import logging
import os
from collections.abc import Callable
from dataclasses import asdict, dataclass
from pathlib import Path

from sqlalchemy import delete, func, insert, select, update
from sqlalchemy.exc import IntegrityError, SQLAlchemyError

from reader.errors import DatabaseUnusable, DiskFull, IngestError, PaperNotFound, describe_error, is_disk_full
from reader.ingest.chunk import chunk_paper
from reader.ingest.limits import IngestLimits, read_source
from reader.ingest.links import link_paper
from reader.ingest.model import ChunkData, ParsedPaper
from reader.ingest.text import parse_text
from reader.store.db import database_away, transaction
from reader.store.tables import Caption, Chunk, Paper, PaperFigure, PaperFile, PaperTable, Reference, utcnow
from reader.text.digest import file_sha256, sha256_bytes
from reader.text.paths import stored_path

SOURCE_SUFFIXES = (".pdf", ".txt", ".md")


@dataclass
class IngestResult:
    file: str
    paper_id: str | None = None
    status: str = "error"  # ingested | unchanged | error | skipped (a Zotero item without a usable PDF)
    error: str = ""  # the reason, without the file name (the caller prints both)
    title: str = ""
    pages: int = 0
    chunks: int = 0

    def to_json(self) -> dict:
        return asdict(self)


def find_sources(paths) -> tuple[list[Path], list[IngestResult]]:
    """Files to ingest (folders searched recursively for .pdf/.txt/.md, hidden
    entries skipped) and an error result for every path that cannot be used."""
    found: list[Path] = []
    errors: list[IngestResult] = []
    seen: set[Path] = set()

    def add(path: Path) -> None:
        key = path.resolve()
        if key not in seen:
            seen.add(key)
            found.append(path)

    for raw in paths:
        path = Path(raw).expanduser()
        if not path.exists():
            errors.append(IngestResult(str(path), error="no such file or directory"))
        elif path.is_dir():
            if not os.access(path, os.R_OK | os.X_OK):
                errors.append(IngestResult(str(path), error="cannot read the folder (permission denied)"))
                continue
            for root, dirs, files in os.walk(
                path,
                onerror=lambda exc: errors.append(
                    IngestResult(str(exc.filename), error=f"cannot read the folder ({exc.strerror})")
                ),
            ):
                dirs[:] = sorted(d for d in dirs if not d.startswith("."))
                for name in sorted(files):
                    if not name.startswith(".") and name.lower().endswith(SOURCE_SUFFIXES):
                        add(Path(root) / name)
        elif path.suffix.lower() in SOURCE_SUFFIXES:
            add(path)
        else:
            errors.append(
                IngestResult(
                    str(path),
                    error=f"unsupported file type {path.suffix or '(none)'!r}; "
                    "reader ingests .pdf, .txt and .md files",
                )
            )
    return found, errors


def is_pdf(path: Path, data: bytes) -> bool:
    """PDF by content (whatever the extension), or by its .pdf extension."""
    return data[:1024].lstrip().startswith(b"%PDF-") or path.suffix.lower() == ".pdf"


def parse_file(path: Path, data: bytes, sha256: str | None = None) -> ParsedPaper:
    """PDF by content (whatever the extension), else text by extension, parsed in this process.
    `sha256` is the bytes' hash when the caller already has it."""
    if is_pdf(path, data):
        from reader.ingest.pdf import parse_pdf

        return parse_pdf(path, data, sha256)
    return parse_text(path, data, sha256)


def parse_and_chunk(
    path: Path, data: bytes, sha256: str, limits: IngestLimits
) -> tuple[ParsedPaper, list[ChunkData]]:
    """The parsed file and its passages. A PDF is parsed in a child process within `limits`
    (its passages come with their places on the pages); a text file, bounded by its size, here."""
    if is_pdf(path, data):
        from reader.ingest.child import parse_pdf_in_child

        return parse_pdf_in_child(path, data, sha256, limits)
    parsed = parse_file(path, data, sha256)
    return parsed, chunk_paper(parsed)


def _insert_many(session, table, columns: tuple[str, ...], rows: list[tuple]) -> None:
    """Bulk insert of plain values. On SQLite the driver's SQL and executemany inside the
    session's transaction (SQLAlchemy's per-row parameter processing was most of the storing
    time; exec_driver_sql skips it and still passes errors through the engine's hooks);
    elsewhere Core."""
    if not rows:
        return
    conn = session.connection()
    if conn.dialect.name == "sqlite":
        sql = (
            f"INSERT INTO {table.__tablename__} ({', '.join(columns)}) "
            f"VALUES ({', '.join('?' * len(columns))})"
        )
        # JSON columns (lists) as the JSON text SQLAlchemy would have written
        rows = [tuple(json.dumps(v) if isinstance(v, (list, dict)) else v for v in row) for row in rows]
        conn.exec_driver_sql(sql, rows)
    else:
        session.execute(insert(table), [dict(zip(columns, row)) for row in rows])


def store_paper(db, parsed: ParsedPaper, chunks: list[ChunkData]) -> list[tuple[int, str]]:
    """Write the paper and everything parsed from it in one transaction;
    returns [(chunk_id, text)] for the index."""
    paper_id = parsed.sha256
    with transaction(db) as session:
        _insert_paper(session, parsed)
        _insert_many(
            session,
            Chunk,
            ("paper_id", "ordinal", "section", "page_start", "page_end", "text", "n_tokens", "rects"),
            [
                (paper_id, c.ordinal, c.section, c.page_start, c.page_end, c.text, c.n_tokens, c.rects)
                for c in chunks
            ],
        )
        _insert_many(
            session,
            Caption,
            ("paper_id", "ordinal", "kind", "label", "page", "text"),
            [(paper_id, i, c.kind, c.label[:32], c.page, c.text) for i, c in enumerate(parsed.captions)],
        )
        _insert_many(
            session,
            Reference,
            ("paper_id", "ordinal", "marker", "page", "text"),
            [(paper_id, i, r.marker[:32], r.page, r.text) for i, r in enumerate(parsed.references)],
        )
        _insert_tables(session, paper_id, parsed.tables)
        _insert_many(
            session,
            PaperFigure,
            ("paper_id", "ordinal", "label", "caption", "page", "rect", "method", "png"),
            [
                (paper_id, i, f.label[:32], f.caption, f.page, f.rect, f.method, f.png)
                for i, f in enumerate(parsed.figures)
            ],
        )
        link_paper(session, paper_id)  # the citation graph, both ways (reader.ingest.links)
        ids = _chunk_ids(session, paper_id)
        return list(zip(ids, (c.text for c in chunks)))


def _insert_paper(session, parsed: ParsedPaper) -> None:
    # values as parameters (not .values()) so the compiled statement is cached
    session.execute(
        insert(Paper),
        dict(
            id=parsed.sha256,
            title=parsed.title,
            authors=parsed.authors,
            year=parsed.year,
            abstract=parsed.abstract,
            source_path=parsed.source_path,
            source_kind=parsed.source_kind,
            language=parsed.language,
            pages=parsed.pages,
            text_chars=sum(len(b.text) for b in parsed.blocks),
            sections=parsed.sections,
            ingested_at=utcnow(),
            file_name=Path(parsed.source_path).name,
            doi=parsed.doi,
        ),
    )


def _insert_tables(session, paper_id: str, tables) -> None:
    _insert_many(
        session,
        PaperTable,
        (
            "paper_id",
            "ordinal",
            "label",
            "caption",
            "page",
            "rect",
            "rows",
            "header_rows",
            "cell_rects",
            "method",
        ),
        [
            (
                paper_id,
                i,
                t.label[:32],
                t.caption,
                t.page,
                t.rect,
                t.rows,
                t.header_rows,
                t.cell_rects,
                t.method,
            )
            for i, t in enumerate(tables)
        ],
    )


def _chunk_ids(session, paper_id: str) -> list[int]:
    conn = session.connection()
    if conn.dialect.name == "sqlite":
        # the driver's SQL as it is (no compiling); its errors still pass the engine's hooks
        rows = conn.exec_driver_sql(
            "SELECT id FROM chunks WHERE paper_id = ? ORDER BY ordinal", (paper_id,)
        ).fetchall()
        return [r[0] for r in rows]
    return list(session.scalars(select(Chunk.id).where(Chunk.paper_id == paper_id).order_by(Chunk.ordinal)))


def _stored_bytes(parsed: ParsedPaper | None, chunks: list[ChunkData], data: bytes) -> int:
    """About what storing a paper writes: its text in the rows, twice (SQLite's WAL, then the file)."""
    if parsed is None:
        return 2 * len(data)
    texts = [c.text for c in chunks] + [c.text for c in parsed.captions] + [r.text for r in parsed.references]
    pictures = sum(len(f.png) for f in parsed.figures)
    return 2 * (
        sum(len(t.encode("utf-8", "replace")) for t in texts) + len(parsed.abstract) + pictures + 4096
    )


def _database_place(db) -> str:
    """Where the database keeps its files, for the message about a full disk."""
    engine = getattr(db, "kw", {}).get("bind")
    if engine is None:
        return "for the database"
    url = engine.url
    if url.get_backend_name() == "sqlite" and url.database and url.database != ":memory:":
        return f"under READER_HOME ({Path(url.database).parent})"
    return f"on the database server ({url.host or 'local socket'})"


def _failure(exc: Exception, db, parsed: ParsedPaper | None, chunks: list[ChunkData], data: bytes) -> str:
    """One line for an unexpected error while ingesting one file."""
    if isinstance(exc, DiskFull):
        return str(exc)
    if is_disk_full(exc):
        return str(DiskFull(_stored_bytes(parsed, chunks, data), _database_place(db)))
    logging.getLogger("reader").debug("ingest failed", exc_info=exc)
    if isinstance(exc, SQLAlchemyError):
        return f"the database refused it ({describe_error(exc)}); nothing of it was stored"
    return f"unexpected error ({describe_error(exc)}); nothing of it was stored"


def _index_failure(exc: Exception) -> str:
    """The warning for a paper that was stored but is not in the search index yet."""
    if isinstance(exc, DiskFull):
        return (
            f"stored, but the search index was not updated ({exc.problem}); free some space: "
            "the index catches up on next use or with `reader reindex`"
        )
    reason = (str(exc).strip().splitlines() or [type(exc).__name__])[0][:200]
    return (
        f"stored, but the search index was not updated ({reason}); "
        "it is rebuilt from the database on next use or with `reader reindex`"
    )


def ingest_file(path, db, index=None, *, limits: IngestLimits | None = None) -> IngestResult:
    """Ingest one file. Never raises for a bad file or a failure while storing it
    (the database refusing it, a full disk): the result says what went wrong, in one line.
    Only a regular file within `limits` is read (default: the settings' defaults)."""
    path = Path(path)
    result = IngestResult(str(path))
    try:
        data = read_source(path, limits)
    except IngestError as exc:
        result.error = exc.reason
        return result
    return ingest_data(data, path, db, index, label=stored_path(path), limits=limits)


def ingest_data(
    data: bytes, path, db, index=None, *, label: str | None = None, limits: IngestLimits | None = None
) -> IngestResult:
    """Ingest a file's bytes, e.g. a queued file read back from the database on another
    machine (reader.queue): `path` names it (its suffix and name count, it need not exist),
    `label` is the source path stored with the paper (default: `path` as given). A PDF is
    parsed within `limits` (default: the settings' defaults), in a child process."""
    path = Path(path)
    limits = limits or IngestLimits()
    result = IngestResult(str(path))
    if reason := limits.too_large(len(data)):
        result.error = reason
        return result
    paper_id = sha256_bytes(data)
    result.paper_id = paper_id
    parsed, chunks = None, []
    try:
        stored = _stored_before(db, paper_id)
        if stored is not None:
            result.status = "unchanged"
            result.title, result.pages, result.chunks = stored
            return result
        parsed, chunks = parse_and_chunk(path, data, paper_id, limits)
        parsed.source_path = label if label is not None else str(path)
        if not chunks:
            raise IngestError(path, "no text to index after parsing")
        rows = store_paper(db, parsed, chunks)
    except IngestError as exc:
        result.error = exc.reason
        return result
    except IntegrityError:
        # stored by a concurrent ingest of the same bytes between our check and commit
        result.status = "unchanged"
        return result
    except DatabaseUnusable:
        raise  # a damaged or read-only database fails every file alike: one line, not one per file
    except Exception as exc:  # noqa: BLE001 - one file's failure never stops the others
        result.error = _failure(exc, db, parsed, chunks, data)
        return result
    result.status = "ingested"
    result.title, result.pages, result.chunks = parsed.title, parsed.pages, len(rows)
    if index is not None:
        try:
            index.add_paper(paper_id, rows)
        except Exception as exc:  # the DB rows stand; the index is rebuilt from them
            result.error = _index_failure(exc)
    return result


def _stored_before(db, paper_id: str) -> tuple[str, int, int] | None:
    """The stored paper's title, pages and number of passages, or None when it is new."""
    with db() as session:
        # a plain select: loading the ORM object cost more than the rest of the check
        stored = session.execute(select(Paper.title, Paper.pages).where(Paper.id == paper_id)).first()
        if stored is None:
            return None
        return (
            stored.title,
            stored.pages,
            session.scalar(select(func.count()).where(Chunk.paper_id == paper_id)),
        )


def ingest_paths(
    paths,
    db,
    open_index: Callable[[], object] | None = None,
    on_progress: Callable[[IngestResult, int, int], None] | None = None,
    before_file: Callable[[Path, int], None] | None = None,
    limits: IngestLimits | None = None,
) -> list[IngestResult]:
    """Ingest files and folders. open_index() gives the search index to update
    (or None); it is called once, and only when there is a file to ingest.
    on_progress(result, done, total) after each file and each unusable path;
    before_file(path, n_files) before each file is read; each within `limits`."""
    sources, results = find_sources(paths)
    index = open_index() if open_index and sources else None
    total = len(sources) + len(results)
    done = len(results)
    if on_progress:
        for i, r in enumerate(results, start=1):
            on_progress(r, i, total)
    for source in sources:
        if before_file:
            before_file(source, len(sources))
        result = ingest_file(source, db, index=index, limits=limits)
        results.append(result)
        done += 1
        if on_progress:
            on_progress(result, done, total)
    return results


def remove_paper(db, paper_id: str, index=None) -> None:
    """Delete a paper and everything derived from it (chunks and their vectors, captions,
    tables, references, analyses, questions, review jobs: FK cascades; its queued file's bytes),
    then its index rows."""
    with transaction(db) as session:
        if session.scalar(select(Paper.id).where(Paper.id == paper_id)) is None:
            raise PaperNotFound(f"no paper with id {paper_id}; see `reader papers`")
        session.execute(delete(Paper).where(Paper.id == paper_id))
        session.execute(delete(PaperFile).where(PaperFile.sha256 == paper_id))
    if index is not None:
        index.remove_paper(paper_id)


# ---------------------------------------------------------------- Zotero


def apply_zotero(db, paper_id: str, item) -> str | None:
    """Give a stored paper its Zotero item's metadata (key, title, authors, year, DOI, citation
    key, collections): Zotero's record is the one the user curates, so it wins over what was
    parsed from the PDF where it has a value. Another paper holding the same item and attachment
    (an earlier version of a changed file) lets go of the key; returns one line about that, or None.

    Metadata the database refuses (a value it cannot hold) leaves the paper as it was, and the
    line returned says so: the paper is still ingested and reviewed, with what its PDF says."""
    try:
        return _apply_zotero(db, paper_id, item)
    except SQLAlchemyError as exc:
        if database_away(exc):  # not the metadata's fault: the caller waits for the database
            raise
        return f"Zotero item {item.key}: stored without its Zotero metadata ({describe_error(exc)})"


def _apply_zotero(db, paper_id: str, item) -> str | None:
    note = None
    with transaction(db) as session:
        older = session.execute(
            select(Paper.id, Paper.zotero_meta).where(Paper.zotero_key == item.key, Paper.id != paper_id)
        ).all()
        for old_id, meta in older:
            if (meta or {}).get("attachment") in (None, "", item.attachment_key):
                session.execute(update(Paper).where(Paper.id == old_id).values(zotero_key=None))
                note = (
                    f"Zotero item {item.key}: its PDF changed; the earlier version ({old_id[:8]}) "
                    f"stays in the library without the Zotero link (`reader rm {old_id[:8]}` removes it)"
                )
        values = dict(zotero_key=item.key, zotero_meta=item.meta(), citekey=item.citekey)
        if item.title:
            values["title"] = item.title
        if item.authors:
            values["authors"] = list(item.authors)
        if item.year:
            values["year"] = item.year
        if item.doi:
            values["doi"] = item.doi
        session.execute(update(Paper).where(Paper.id == paper_id).values(**values))
        link_paper(session, paper_id)  # a title or DOI from Zotero may match other entries now
    return note


def apply_zotero_to_stored(db, items) -> tuple[set[str], list[str]]:
    """Give the items whose PDF is already stored (ingested or reviewed from a folder before)
    their Zotero metadata now, since a reviewed paper is skipped without being ingested again.
    Returns the paper ids so handled and the lines `apply_zotero` had to say."""
    with db() as session:
        stored = set(session.scalars(select(Paper.id)))
    handled: set[str] = set()
    notes: list[str] = []
    for item in items:
        try:
            sha = file_sha256(item.pdf)
        except OSError:
            continue  # the review reports the file
        if sha in stored:
            handled.add(sha)
            note = apply_zotero(db, sha, item)
            if note:
                notes.append(note)
    return handled, notes


def ingest_zotero(
    library,
    db,
    open_index: Callable[[], object] | None = None,
    on_progress: Callable[[IngestResult, int, int], None] | None = None,
    on_note: Callable[[str], None] | None = None,
    limits: IngestLimits | None = None,
) -> list[IngestResult]:
    """Ingest a Zotero library's items (reader.ingest.zotero.read_library) with their metadata.
    An unchanged attachment is not parsed again (its bytes give the same paper); its metadata is
    refreshed from Zotero. The library's problems come back as "skipped" results."""
    results = [IngestResult(what, status="skipped", error=why) for what, why in library.problems]
    index = open_index() if open_index and library.items else None
    total = len(results) + len(library.items)
    if on_progress:
        for i, r in enumerate(results, start=1):
            on_progress(r, i, total)
    for item in library.items:
        result = ingest_file(item.pdf, db, index=index, limits=limits)
        if result.status != "error" and result.paper_id:
            note = apply_zotero(db, result.paper_id, item)
            result.title = item.title or result.title
            if note and on_note:
                on_note(note)
        results.append(result)
        if on_progress:
            on_progress(result, len(results), total)
    return results
