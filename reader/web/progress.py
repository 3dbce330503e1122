"""Where an upload's review stands on its progress bar: a fraction for each stage, steps
inside the deep read, and a creeping bar while ingest reports nothing."""

from __future__ import annotations

# Where each review stage sits on the progress bar (fraction reached when it starts).
STAGE_FRACTIONS = {"ingest": 0.05, "read": 0.30}
# deep_read reports finer stages; they move the bar within the "read" span.
READ_SPAN = (0.30, 0.98)


def read_fraction(detail: str, seen: list[str]) -> float:
    """Progress inside the deep read: every new detail moves the bar forward, with
    diminishing steps, since the number of audit batches is not known up front."""
    if detail and (not seen or seen[-1] != detail):
        seen.append(detail)
    start, end = READ_SPAN
    return start + (end - start) * (1 - 0.85 ** len(seen))


class IngestCreep:
    """Ingest (parse, passages, search index: embedding every passage is most of it) reports
    no steps of its own; while it runs the bar moves through the ingest span with diminishing
    steps, once a second, so a long ingest does not look stalled at its first percent."""

    SPAN = (0.05, 0.28)

    def __init__(self, on_progress):
        import threading

        self.on_progress = on_progress
        self._stop = threading.Event()
        self._thread = None

    def start(self) -> None:
        import threading

        self.on_progress("ingest: parsing and indexing", self.SPAN[0])
        if self._thread is None:
            self._thread = threading.Thread(target=self._run, daemon=True, name="ingest-progress")
            self._thread.start()

    def _run(self) -> None:
        start, end = self.SPAN
        seconds = 0
        while not self._stop.wait(1.0):
            seconds += 1
            self.on_progress("ingest: parsing and indexing", start + (end - start) * (1 - 0.93**seconds))

    def stop(self) -> None:
        self._stop.set()
