"""`reader import`: papers brought in by identifier or from a RIS/BibTeX file.

Each record (reader.ingest.identifiers) becomes a paper: its local PDF when the entry names one;
else, with services allowed (reader.ingest.fetch), the open-access PDF they point to; else the
metadata alone (title, authors, abstract) stored as a short text paper, said so in its row. The
record's metadata (title, authors, year, DOI) is given to the stored paper, which is then linked
into the citation graph. Without services an identifier that the file does not describe is not
fetched: its row says how to allow it.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from pathlib import Path

from sqlalchemy import update

from reader.ingest.fetch import Fetcher, FetchError
from reader.ingest.identifiers import Record
from reader.ingest.limits import IngestLimits
from reader.ingest.links import link_paper
from reader.ingest.pipeline import ingest_data, ingest_file
from reader.store.db import transaction
from reader.store.tables import Paper
from reader.text.digest import sha256_bytes

OFFLINE = (
    "fetching it needs the network, which is off: allow services with --services "
    "arxiv,openalex,unpaywall (or READER_IMPORT_SERVICES)"
)


@dataclass
class ImportRow:
    source: str
    status: str = "error"  # ingested | unchanged | error
    paper_id: str = ""
    title: str = ""
    pdf: str = ""  # where the text came from: file | a PDF address | metadata
    error: str = ""
    notes: list[str] = field(default_factory=list)

    def to_json(self) -> dict:
        return {
            "source": self.source,
            "status": self.status,
            "paper_id": self.paper_id,
            "title": self.title,
            "pdf": self.pdf,
            "error": self.error,
            "notes": self.notes,
        }


@dataclass
class ImportReport:
    rows: list[ImportRow]

    def to_json(self) -> dict:
        return {"papers": [r.to_json() for r in self.rows]}


def _safe_name(record: Record) -> str:
    return re.sub(r"[^\w.\-]+", "_", record.name)[:80] or "paper"


def metadata_text(record: Record) -> str:
    """The record as a short Markdown paper, for one with no PDF to be had."""
    parts = [f"# {record.title}", ""]
    if record.authors:
        parts += [", ".join(record.authors), ""]
    parts += ["## Abstract", "", record.abstract or "(no abstract)"]
    return "\n".join(parts) + "\n"


def apply_record(db, paper_id: str, record: Record) -> None:
    """Give the stored paper the record's metadata where it has a value, then link it."""
    values = {
        key: value
        for key, value in (
            ("title", record.title),
            ("authors", list(record.authors)),
            ("year", record.year),
            ("doi", record.doi),
        )
        if value
    }
    with transaction(db) as session:
        if values:
            session.execute(update(Paper).where(Paper.id == paper_id).values(**values))
        link_paper(session, paper_id)


def _kept(data: bytes, name: str, keep_dir: Path | None) -> Path | None:
    """The downloaded PDF kept as an upload is (keep_dir/<sha256>/<name>), so that its pages can be
    shown and it can be reviewed again; None without a folder or when it cannot be written."""
    if keep_dir is None:
        return None
    folder = keep_dir / sha256_bytes(data)
    try:
        folder.mkdir(parents=True, exist_ok=True)
        path = folder / name
        if not path.is_file():
            path.write_bytes(data)
        return path
    except OSError:
        return None


def import_record(
    record: Record, db, index, fetcher: Fetcher | None, limits: IngestLimits, keep_dir: Path | None = None
) -> ImportRow:
    row = ImportRow(source=record.source)
    result = None
    if record.file is not None:
        result, row.pdf = ingest_file(record.file, db, index, limits=limits), "file"
    else:
        if fetcher is not None:
            row.notes += fetcher.complete(record)
            if record.pdf_url:
                try:
                    data = fetcher.download(record.pdf_url, limits.max_bytes)
                    path = _kept(data, f"{_safe_name(record)}.pdf", keep_dir)
                    result = ingest_file(path, db, index, limits=limits) if path else None
                    result = result or ingest_data(
                        data, f"{_safe_name(record)}.pdf", db, index, limits=limits
                    )
                    row.pdf = record.pdf_url
                except FetchError as exc:
                    row.notes.append(str(exc))
        elif not record.title:
            row.error = OFFLINE
            return row
        if result is None:
            if not record.title:
                row.error = "no service knew it: " + ("; ".join(row.notes) or "no metadata came back")
                return row
            data = metadata_text(record).encode("utf-8")
            result = ingest_data(data, f"{_safe_name(record)}.md", db, index, limits=limits)
            row.pdf = "metadata"
            row.notes.append("no open-access PDF was found: the title and abstract were stored as its text")
    if result.status == "error":
        row.error = result.error
        return row
    row.status, row.paper_id = result.status, result.paper_id
    apply_record(db, result.paper_id, record)
    row.title = record.title or result.title
    return row


def import_records(
    records: list[Record],
    db,
    index,
    fetcher: Fetcher | None,
    limits: IngestLimits,
    keep_dir: Path | None = None,
) -> ImportReport:
    """Each record imported in turn; one's failure is its row's error, never the others'. A
    downloaded PDF is kept under `keep_dir` (READER_HOME/uploads), as an upload is."""
    return ImportReport([import_record(r, db, index, fetcher, limits, keep_dir) for r in records])
