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


# ---- the upload page's one bar for the papers it follows ------------------------------------

MIN_PERCENT_TO_ESTIMATE = 3  # below it, the first paper's pace says nothing yet


RECENT_REVIEWS = 10  # finished reviews outside the batch that stand in for its own


def review_times(jobs: list) -> list[float]:
    """How long each finished review took, the latest first."""
    done = [j for j in jobs if j.status == "done" and j.started and j.finished_at]
    done.sort(key=lambda j: j.finished_at, reverse=True)
    return [j.finished_at - j.started for j in done if j.finished_at >= j.started]


def seconds_left(jobs: list, now: float, history: list = ()) -> float | None:
    """How long the papers still queued or running will take (None: too early to say).

    Each paper left is taken to need the finished papers' mean time (the batch's own, else the
    last RECENT_REVIEWS reviews of `history`): the mean times the papers still queued, plus for
    each one running the mean less its elapsed time (if it has run past the mean, its own pace
    from its percent). With no finished review at all, the running paper's own pace: its elapsed
    time over its percent, for itself and for every queued one."""
    took = review_times(jobs) or review_times(history)[:RECENT_REVIEWS]
    running = [j for j in jobs if j.status == "running"]
    queued = sum(1 for j in jobs if j.status == "queued")

    def own_pace(job) -> float | None:
        """The running job's whole time projected from its percent so far."""
        if not job.started or job.percent < MIN_PERCENT_TO_ESTIMATE:
            return None
        return max(0.0, now - job.started) * 100 / job.percent

    if took:
        mean = sum(took) / len(took)
        left = mean * queued
        for job in running:
            elapsed = max(0.0, now - job.started) if job.started else 0.0
            whole = mean if elapsed < mean else own_pace(job)
            left += max(0.0, (whole or elapsed) - elapsed)
        return left
    paces = [p for p in (own_pace(j) for j in running) if p is not None]
    if not paces:
        return None if (running or queued) else 0.0
    pace = sum(paces) / len(paces)
    elapsed = [max(0.0, now - j.started) for j in running if j.started]
    return sum(max(0.0, pace - e) for e in elapsed) + pace * queued


def duration(seconds: float) -> str:
    """A time left in words: "5 s", "40 s", "3 min", "2.5 h"."""
    if seconds < 60:
        return f"{max(5, round(seconds / 5) * 5)} s"
    minutes = round(seconds / 60)
    return f"{minutes} min" if minutes < 90 else f"{round(minutes / 6) / 10:g} h"


def batch_summary(jobs: list, now: float, history: list = ()) -> dict:
    """The bar over the papers the upload page follows: {"percent", "done", "total", "text"};
    `history`: every job on the queue, for the time left before one of these is done."""
    total = len(jobs)
    done = sum(
        1 for j in jobs if j.status in ("done", "error", "near-duplicate")
    )  # near-duplicate: not reviewed
    percent = round(sum(100 if j.status == "error" else j.percent for j in jobs) / total) if total else 0
    if done == total:
        text = "The review finished." if total == 1 else f"All {total} reviews finished."
        return {"percent": percent, "done": done, "total": total, "text": text, "head": "", "left_s": None}
    left = seconds_left(jobs, now, history)
    head = f"{done} of {total} reviewed · {percent}%"
    when = "estimating the time left…" if left is None else f"about {duration(left)} left"
    # head and left_s: the upload page steadies the time left itself (upload.js)
    return {
        "percent": percent,
        "done": done,
        "total": total,
        "text": f"{head} · {when}",
        "head": head,
        "left_s": None if left is None else round(left, 1),
    }
