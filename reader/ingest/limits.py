"""What one file may cost ingest, and reading a source file within it.

Only regular files are read (a named pipe would block the read forever, a link to /dev/zero
would read until memory runs out), and only up to the size limit. Parsing a PDF is bounded
in memory, time and pages by reader.ingest.child. The limits are settings (READER_INGEST_*);
IngestLimits() holds their defaults.
"""

from __future__ import annotations

from dataclasses import dataclass, fields
from pathlib import Path

from reader.config.settings import Settings
from reader.errors import IngestError
from reader.files import FileRefused, read_regular

_DEFAULTS = {f.name: f.default for f in fields(Settings)}


@dataclass(frozen=True)
class IngestLimits:
    max_mb: int = _DEFAULTS["ingest_max_mb"]  # the largest file read
    memory_mb: int = _DEFAULTS["ingest_memory_mb"]  # memory one PDF's parsing may take
    timeout_s: float = _DEFAULTS["ingest_timeout"]  # time one PDF's parsing may take
    max_pages: int = _DEFAULTS["ingest_max_pages"]
    tables: str = _DEFAULTS["tables"]  # how a PDF's tables are found (reader.ingest.tables.FINDERS)
    figures: bool = _DEFAULTS["figures"]  # whether its figures' pictures are found

    @classmethod
    def of(cls, settings) -> IngestLimits:
        return cls(
            settings.ingest_max_mb,
            settings.ingest_memory_mb,
            settings.ingest_timeout,
            settings.ingest_max_pages,
            settings.tables,
            settings.figures,
        )

    @property
    def max_bytes(self) -> int:
        return self.max_mb * 1024 * 1024

    def too_large(self, size: int) -> str | None:
        """The reason a file of `size` bytes is refused, or None."""
        if size <= self.max_bytes:
            return None
        return (
            f"{size / 1024 / 1024:.1f} MB, larger than the limit of {self.max_mb} MB for one file "
            "(READER_INGEST_MAX_MB raises it)"
        )


_FOLDER = "is a folder; give the folder to ingest_paths / `reader ingest`"


def read_source(path: Path, limits: IngestLimits | None = None) -> bytes:
    """The bytes of a regular file (links followed) of at most the size limit. Raises
    IngestError with the reason for anything else; never blocks on a pipe or a device."""
    limits = limits or IngestLimits()
    try:
        return read_regular(Path(path), limits.max_bytes)
    except FileRefused as exc:
        reason = _FOLDER if exc.folder else limits.too_large(exc.size) if exc.size is not None else exc.reason
        raise IngestError(path, reason) from None
