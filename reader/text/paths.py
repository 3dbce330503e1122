"""How a file's path is kept in the database."""

from __future__ import annotations

from pathlib import Path


def stored_path(path: Path) -> str:
    """The absolute path stored for a paper's file. A name that is not valid UTF-8
    (the database can only hold text) keeps U+FFFD in place of the bad bytes."""
    try:
        absolute = str(path.resolve())
    except (OSError, RuntimeError):  # a symlink loop
        absolute = str(path.absolute())
    try:
        absolute.encode("utf-8")
    except UnicodeEncodeError:
        try:
            raw = absolute.encode("utf-8", "surrogateescape")
        except UnicodeEncodeError:
            raw = absolute.encode("utf-8", "surrogatepass")
        absolute = raw.decode("utf-8", "replace")
    return absolute
