"""Domain errors with messages a researcher can act on.

The CLI turns ReaderError into a one-line message and a non-zero exit status;
everything else is a bug and keeps its traceback.
"""


class ReaderError(Exception):
    """Base class: the message names the file or value and what to do."""


class ConfigError(ReaderError):
    pass


class IngestError(ReaderError):
    """A file could not be turned into a paper. `path` names the file."""

    def __init__(self, path, reason: str):
        self.path = str(path)
        self.reason = reason
        super().__init__(f"{self.path}: {reason}")


class PaperNotFound(ReaderError):
    pass


class DatabaseUnusable(ReaderError):
    """The database cannot be used at all (its file damaged or read-only): no retry helps, and the
    message names the file and what to do."""


class IndexUnusable(ReaderError):
    """The search index's folder cannot be used (not a folder, not writable); the message says
    what to do. The index is a cache of the database: nothing stored is lost."""


class WeightsUnusable(ReaderError):
    """A trained model's shipped weights (the claim checker's, the relevance grader's) are
    missing or damaged: the message names the file and how to restore it. The callers go on
    without that model, with a warning, where the LLM can do its work."""


class NotStored(Exception):
    """An answer a request may only read (a GET) is not stored: it would take a model call. Not a
    ReaderError, so no stage takes it for a failed call and goes on without it; the caller says
    how to build what is missing (reader.llm.logged.LoggedLLM.stored_only)."""


class Conflict(ReaderError):
    """What a change was based on changed meanwhile (another tab, command or process wrote
    first): nothing was stored, and the message says what to reload before trying again."""


class LLMError(ReaderError):
    """An LLM endpoint failed in a way retrying will not fix (or retries ran out)."""


class DiskFull(ReaderError):
    """No space left where reader writes. `problem` is the one-line diagnosis
    ("the disk is full: N MB needed under ..."); the message adds what to do."""

    def __init__(self, needed_bytes: int, where: str):
        self.needed_bytes = needed_bytes
        self.where = where
        megabytes = max(1, -(-int(needed_bytes) // 1_000_000))
        self.problem = f"the disk is full: {megabytes} MB needed {where}"
        super().__init__(f"{self.problem}; free some space there and run the command again")


# How a full disk reads in the first line of an error: OSError (ENOSPC, EDQUOT),
# SQLite (SQLITE_FULL), PostgreSQL ("could not extend file ...: No space left on device").
_DISK_FULL_TEXT = ("database or disk is full", "no space left on device", "disk quota exceeded")
_DISK_FULL_ERRNOS = {28, 122}  # ENOSPC, EDQUOT (Linux)


def is_disk_full(exc: BaseException | None) -> bool:
    """Whether the error, or one it wraps (a database driver's, its cause), says the disk is full."""
    seen: set[int] = set()
    while exc is not None and id(exc) not in seen:
        seen.add(id(exc))
        if isinstance(exc, DiskFull):
            return True
        if isinstance(exc, OSError) and exc.errno in _DISK_FULL_ERRNOS:
            return True
        if getattr(exc, "sqlstate", None) == "53100":  # PostgreSQL disk_full
            return True
        if any(text in _first_line(exc).lower() for text in _DISK_FULL_TEXT):
            return True
        exc = getattr(exc, "orig", None) or exc.__cause__ or exc.__context__
    return False


def describe_error(exc: BaseException, limit: int = 200) -> str:
    """One line for an unexpected error: its class and the first line of its message,
    shortened. A database error is described by the driver's error it wraps, so the
    SQL statement and its parameters (often kilobytes) are left out."""
    inner = getattr(exc, "orig", None)
    message = _first_line(inner if isinstance(inner, BaseException) else exc)
    line = f"{type(exc).__name__}: {message}" if message else type(exc).__name__
    return line if len(line) <= limit else line[: limit - 1] + "…"


def _first_line(exc: BaseException) -> str:
    text = str(exc).strip()
    return text.splitlines()[0].strip() if text else ""
