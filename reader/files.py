"""Reading a file that comes from outside (a paper, a config file) within what it may cost.

Only a regular file is read (links followed): a named pipe would block the read for ever and a
link to /dev/zero would read until memory runs out. And only up to a size, checked before a
byte is read and again while reading (a file may grow meanwhile). A leaf module: it imports
nothing from reader; the callers turn FileRefused into their own one-line errors.
"""

from __future__ import annotations

import os
import stat
from pathlib import Path

_KINDS = (
    (stat.S_ISFIFO, "a named pipe"),
    (stat.S_ISCHR, "a character device"),
    (stat.S_ISBLK, "a block device"),
    (stat.S_ISSOCK, "a socket"),
)


class FileRefused(Exception):
    """The file is not read. `reason` says why in words; `folder` and `size` (a file over the
    limit: its size in bytes) let a caller say it in its own."""

    def __init__(self, reason: str, *, folder: bool = False, size: int | None = None):
        super().__init__(reason)
        self.reason, self.folder, self.size = reason, folder, size


def file_kind(mode: int) -> str:
    """What a file of this st_mode is, in words ("a named pipe")."""
    return next((name for is_kind, name in _KINDS if is_kind(mode)), "not a plain file")


def read_regular(path: Path, max_bytes: int) -> bytes:
    """The bytes of the regular file at `path` (links followed), at most `max_bytes` of them;
    FileRefused for anything else. Never blocks on a pipe or a device."""
    try:
        # O_NONBLOCK: opening a named pipe for reading would otherwise wait for a writer
        fd = os.open(path, os.O_RDONLY | getattr(os, "O_NONBLOCK", 0) | getattr(os, "O_CLOEXEC", 0))
    except IsADirectoryError:
        raise FileRefused("is a folder", folder=True) from None
    except OSError as exc:
        raise FileRefused(f"cannot read the file ({exc.strerror or exc})") from None
    try:
        info = os.fstat(fd)
        if stat.S_ISDIR(info.st_mode):
            raise FileRefused("is a folder", folder=True)
        if not stat.S_ISREG(info.st_mode):
            raise FileRefused(f"not a regular file ({file_kind(info.st_mode)}); only regular files are read")
        if info.st_size > max_bytes:
            raise FileRefused("too large", size=info.st_size)
        os.set_blocking(fd, True)
    except BaseException:
        os.close(fd)
        raise
    with os.fdopen(fd, "rb") as fh:
        try:
            data = fh.read(max_bytes + 1)  # a file growing while it is read stops here
        except OSError as exc:
            raise FileRefused(f"cannot read the file ({exc.strerror or exc})") from None
    if len(data) > max_bytes:
        raise FileRefused("too large", size=len(data))
    return data
