"""What one file may cost ingest, and reading a source file within it.

Only regular files are read (a named pipe would block the read forever, a link to /dev/zero
would read until memory runs out), and only up to the size limit. Parsing a PDF is bounded
in memory, time and pages by reader.ingest.child. The limits are settings (READER_INGEST_*);
IngestLimits() holds their defaults.
"""

from __future__ import annotations

import os
import stat
from dataclasses import dataclass, fields
from pathlib import Path

from reader.config.settings import Settings
from reader.errors import IngestError

_DEFAULTS = {f.name: f.default for f in fields(Settings)}


@dataclass(frozen=True)
class IngestLimits:
    max_mb: int = _DEFAULTS["ingest_max_mb"]  # the largest file read
    memory_mb: int = _DEFAULTS["ingest_memory_mb"]  # memory one PDF's parsing may take
    timeout_s: float = _DEFAULTS["ingest_timeout"]  # time one PDF's parsing may take
    max_pages: int = _DEFAULTS["ingest_max_pages"]

    @classmethod
    def of(cls, settings) -> IngestLimits:
        return cls(
            settings.ingest_max_mb,
            settings.ingest_memory_mb,
            settings.ingest_timeout,
            settings.ingest_max_pages,
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


_KINDS = (
    (stat.S_ISFIFO, "a named pipe"),
    (stat.S_ISCHR, "a character device"),
    (stat.S_ISBLK, "a block device"),
    (stat.S_ISSOCK, "a socket"),
)
_FOLDER = "is a folder; give the folder to ingest_paths / `reader ingest`"


def _kind(mode: int) -> str:
    return next((name for is_kind, name in _KINDS if is_kind(mode)), "not a plain file")


def read_source(path: Path, limits: IngestLimits | None = None) -> bytes:
    """The bytes of a regular file (links followed) of at most the size limit. Raises
    IngestError with the reason for anything else; never blocks on a pipe or a device."""
    limits = limits or IngestLimits()
    path = Path(path)
    try:
        # O_NONBLOCK: opening a named pipe for reading would otherwise wait for a writer
        fd = os.open(path, os.O_RDONLY | getattr(os, "O_NONBLOCK", 0) | getattr(os, "O_CLOEXEC", 0))
    except IsADirectoryError:
        raise IngestError(path, _FOLDER) from None
    except OSError as exc:
        raise IngestError(path, f"cannot read the file ({exc.strerror or exc})") from None
    try:
        info = os.fstat(fd)
        if stat.S_ISDIR(info.st_mode):
            raise IngestError(path, _FOLDER)
        if not stat.S_ISREG(info.st_mode):
            raise IngestError(
                path, f"not a regular file ({_kind(info.st_mode)}); only regular files are read"
            )
        if reason := limits.too_large(info.st_size):
            raise IngestError(path, reason)
        os.set_blocking(fd, True)
    except BaseException:
        os.close(fd)
        raise
    with os.fdopen(fd, "rb") as fh:
        try:
            data = fh.read(limits.max_bytes + 1)  # a file growing while it is read stops here
        except OSError as exc:
            raise IngestError(path, f"cannot read the file ({exc.strerror or exc})") from None
    if reason := limits.too_large(len(data)):
        raise IngestError(path, reason)
    return data
