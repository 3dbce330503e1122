"""The progress lines of `reader review` and `reader worker`: one line whenever a paper changes stage."""

from __future__ import annotations

import sys
import threading
from pathlib import Path

from reader.commands.output import printable


def duration(seconds: float | None) -> str:
    if seconds is None:
        return "--"
    seconds = int(round(seconds))
    if seconds < 60:
        return f"{seconds}s"
    minutes, seconds = divmod(seconds, 60)
    if minutes < 60:
        return f"{minutes}m{seconds:02d}s"
    hours, minutes = divmod(minutes, 60)
    return f"{hours}h{minutes:02d}m"


class ProgressPrinter:
    """One stderr line whenever a paper changes stage, for `reader review` and `reader worker`:
    `[i/N] file · stage · elapsed · ETA`, or `[i] file · stage · elapsed` when the number of
    papers is open (a worker takes whatever is queued)."""

    def __init__(self, stream=None):
        self.stream = stream or sys.stderr
        self.last: dict[int, tuple[str, str]] = {}
        self.lock = threading.Lock()

    def __call__(self, event) -> None:
        key = (event.stage, event.detail)
        with self.lock:
            if self.last.get(event.index) == key:
                return
            self.last[event.index] = key
            detail = event.detail if len(event.detail) <= 90 else event.detail[:89] + "…"
            stage = event.stage + (f": {detail}" if detail else "")
            counter = (
                f"{event.index:>{len(str(event.total))}}/{event.total}" if event.total else str(event.index)
            )
            parts = [
                f"[{counter}] {printable(Path(event.source).name)}",
                stage,
                f"{duration(event.elapsed_s)} elapsed",
            ]
            if event.total:
                parts.append(f"ETA {duration(event.eta_s)}")
            print(" · ".join(parts), file=self.stream, flush=True)
