"""Asking from the web page: an answer shaped for the page (the JSON reply of POST /ask), and
questions answered one at a time in a worker thread whose stage the page polls.
`ctx` is a reader.facade.Reader."""

from __future__ import annotations

from dataclasses import asdict, dataclass, field

from reader.errors import ReaderError


@dataclass
class AnswerSource:
    label: str
    pages: str
    text: str
    paper_id: str | None


@dataclass
class AnswerShown:
    question: str
    answer: str
    grounded: bool
    grounded_reason: str
    route: str
    confidence: float
    sources: list[AnswerSource] = field(default_factory=list)
    notes: list[str] = field(default_factory=list)
    llm_calls: int = 0
    seconds: float = 0.0

    def to_json(self) -> dict:
        return asdict(self)


def ask(ctx, question: str, paper_id: str | None) -> AnswerShown:
    """Answer with Corrective RAG about one paper or (paper_id None) the whole library."""
    result = ctx.ask(question, paper_id)
    return AnswerShown(
        question=result.question,
        answer=result.answer,
        grounded=result.grounded,
        grounded_reason=result.grounded_reason,
        route=result.route,
        confidence=result.confidence,
        sources=[
            AnswerSource(
                label=c.source_label,
                pages=c.pages,
                text=c.refined or c.text,
                paper_id=None if c.external else c.paper_id,
            )
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
            self._set(
                job,
                status="error",
                error=f"internal error: {type(exc).__name__}: {exc}",
                finished=time.time(),
            )
        else:
            self._set(job, status="done", question_id=qid, words="Done", finished=time.time())
