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


class LLMError(ReaderError):
    """An LLM endpoint failed in a way retrying will not fix (or retries ran out)."""
