"""What the pages need beyond one Reader call: an upload's review with a progress
fraction, and an answer shaped for the Ask page. `ctx` is a reader.facade.Reader."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import asdict, dataclass, field
from pathlib import Path

from reader.errors import ReaderError


class ReviewFailed(ReaderError):
    pass


# Where each review stage sits on the progress bar (fraction reached when it starts).
STAGE_FRACTIONS = {"ingest": 0.05, "read": 0.30, "reviewed": 0.99, "skipped": 0.99}
# deep_read reports finer stages; they move the bar within the "read" span.
READ_SPAN = (0.30, 0.98)


def _read_fraction(detail: str, seen: list[str]) -> float:
    """Progress inside the deep read: every new detail moves the bar forward, with
    diminishing steps, since the number of audit batches is not known up front."""
    if detail and (not seen or seen[-1] != detail):
        seen.append(detail)
    start, end = READ_SPAN
    return start + (end - start) * (1 - 0.85 ** len(seen))


def review_upload(pdf_path: Path, ctx, on_progress: Callable[[str, float | None], None], *,
                  force: bool = False) -> str:
    """Ingest, deep-read and audit one uploaded PDF through the batch review runner
    (so the web and `reader review` record the same ReviewJob rows). Returns the paper id.
    `force`: review it again even if it was reviewed before ("Review again")."""
    details: list[str] = []
    ingest = _IngestCreep(on_progress)

    def on_event(event) -> None:
        if event.stage != "ingest":
            ingest.stop()
        if event.stage == "read" and event.detail:
            on_progress(f"read: {event.detail}", _read_fraction(event.detail, details))
        elif event.stage == "ingest":
            ingest.start()
        elif event.stage in STAGE_FRACTIONS:
            on_progress(event.stage, STAGE_FRACTIONS[event.stage])

    try:
        report = ctx.review([pdf_path], jobs=1, on_event=on_event, force=force)
    finally:
        ingest.stop()
    outcome = report.papers[0]
    if outcome.status in ("reviewed", "skipped") and outcome.paper_id:
        return outcome.paper_id
    raise ReviewFailed(outcome.error or f"the review ended as {outcome.status!r}")


class _IngestCreep:
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
            self.on_progress("ingest: parsing and indexing", start + (end - start) * (1 - 0.93 ** seconds))

    def stop(self) -> None:
        self._stop.set()


# ---------------------------------------------------------------- asking


@dataclass
class SourceView:
    label: str
    pages: str
    text: str
    paper_id: str | None


@dataclass
class AskView:
    question: str
    answer: str
    grounded: bool
    grounded_reason: str
    route: str
    confidence: float
    sources: list[SourceView] = field(default_factory=list)
    notes: list[str] = field(default_factory=list)
    llm_calls: int = 0
    seconds: float = 0.0

    def to_json(self) -> dict:
        return asdict(self)


def ask(ctx, question: str, paper_id: str | None) -> AskView:
    """Answer with Corrective RAG about one paper or (paper_id None) the whole library."""
    result = ctx.ask(question, paper_id)
    return AskView(
        question=result.question,
        answer=result.answer,
        grounded=result.grounded,
        grounded_reason=result.grounded_reason,
        route=result.route,
        confidence=result.confidence,
        sources=[
            SourceView(label=c.source_label, pages=c.pages, text=c.refined or c.text,
                       paper_id=None if c.external else c.paper_id)
            for c in result.sources
        ],
        notes=list(result.notes),
        llm_calls=result.llm_calls,
        seconds=result.seconds,
    )


# ---------------------------------------------------------------- asking in the background

# What each LLM stage of an answer means, in the words the Ask page shows while it waits.
STAGE_WORDS = {
    "": "Searching the papers",
    "crag-grade-batch": "Judging which passages answer the question",
    "crag-grade": "Judging which passages answer the question",
    "crag-rewrite": "Rewording the question to search again",
    "crag-refine-batch": "Picking out the sentences that answer it",
    "crag-refine": "Picking out the sentences that answer it",
    "crag-answer": "Writing the answer",
    "crag-check": "Checking the answer against the passages",
    "audit": "Checking the answer against the passages",
    "verify": "Checking the answer against the passages",
}


def stage_words(stage: str) -> str:
    return STAGE_WORDS.get(stage, "Working on the answer")


@dataclass
class AskJob:
    id: str
    question: str
    paper_id: str | None
    status: str = "running"  # running | done | error
    stage: str = ""
    words: str = STAGE_WORDS[""]
    started: float = 0.0
    finished: float | None = None
    question_id: int | None = None
    error: str = ""

    def to_json(self, now: float) -> dict:
        data = asdict(self)
        data["elapsed_s"] = round((self.finished or now) - self.started, 1)
        data["url"] = f"/ask/{self.question_id}" if self.question_id else None
        return data


class AskRunner:
    """Questions answered one at a time in a worker thread; the page polls the job for its
    stage (the LLM stage of the call being made) and, when done, opens the stored answer."""

    def __init__(self, ctx, keep: int = 50):
        import threading
        from concurrent.futures import ThreadPoolExecutor

        self.ctx = ctx
        self.keep = keep
        self._jobs: dict[str, AskJob] = {}
        self._lock = threading.Lock()
        self._pool = ThreadPoolExecutor(max_workers=1, thread_name_prefix="ask")

    def submit(self, question: str, paper_id: str | None) -> AskJob:
        import time
        import uuid

        job = AskJob(id=uuid.uuid4().hex[:12], question=question, paper_id=paper_id, started=time.time())
        with self._lock:
            self._jobs[job.id] = job
            for old in list(self._jobs.values())[: max(0, len(self._jobs) - self.keep)]:
                if old.status != "running":
                    del self._jobs[old.id]
        self._pool.submit(self._run, job)
        return job

    def get(self, job_id: str) -> dict | None:
        import time

        with self._lock:
            job = self._jobs.get(job_id)
            return job.to_json(time.time()) if job else None

    def shutdown(self) -> None:
        self._pool.shutdown(wait=False, cancel_futures=True)

    def _set(self, job: AskJob, **changes) -> None:
        with self._lock:
            for key, value in changes.items():
                setattr(job, key, value)

    def _run(self, job: AskJob) -> None:
        import time
        import traceback

        def on_stage(stage: str) -> None:
            self._set(job, stage=stage, words=stage_words(stage))

        try:
            qid = self.ctx.ask(job.question, job.paper_id, on_stage=on_stage).question_id
        except ReaderError as exc:
            self._set(job, status="error", error=str(exc), finished=time.time())
        except Exception as exc:  # a bug; the page says so instead of waiting forever
            traceback.print_exc()
            self._set(job, status="error", error=f"internal error: {type(exc).__name__}: {exc}",
                      finished=time.time())
        else:
            self._set(job, status="done", question_id=qid, words="Done", finished=time.time())
