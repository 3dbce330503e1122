"""Corrective RAG as a small state machine.

    retrieve -> grade -> route --correct------------------------------> refine
                              \\-ambiguous/incorrect-> correct --kept--> refine
                                                        \\-nothing kept-> fallback -> refine
    refine -> generate --not found--> done
                       \\-> check -> done

Each state is a function of the run that returns the next state. The loop
guard is twofold: corrective rounds are capped (`max_corrective_rounds`,
default 1) and the fallback runs at most once, so every path reaches `done`;
a step counter turns any future wiring mistake into an error instead of a hang.

The routing rule and the refusal rule are objects (reader.crag.route.ROUTINGS,
reader.crag.generate.REFUSALS) chosen once per question from the configuration's names.
For measurement, `ask` takes `on_step(step, run)`, called after each step with the
question's working state (`Run`), and `stop_before=` a step, where the run ends early.
"""

from __future__ import annotations

import re
import threading
import time
from collections.abc import Callable
from concurrent.futures import ThreadPoolExecutor, wait
from dataclasses import dataclass, field, fields, replace
from typing import Protocol

from reader.config import CragSettings
from reader.crag.correct import Search, corrective_retrieval, retrieve_all
from reader.crag.decompose import per_paper_quota, sub_queries
from reader.crag.evidence import Candidate
from reader.crag.external import ExternalSearch, external_candidates
from reader.crag.generate import (
    Answer,
    Refusal,
    generate_answer,
    not_found_sentinel,
    only_points_elsewhere,
    refusal_named,
    restates_question,
)
from reader.crag.grade import (
    AMBIGUOUS_SCORE,
    BATCH_PASSAGES,
    BATCH_TOKENS,
    IRRELEVANT_SCORE,
    RELEVANT_SCORE,
    Grade,
    blend_model,
    grade_in_batches,
    grade_passages,
)
from reader.crag.grounded import Groundedness, unfounded_sentences
from reader.crag.refine import refine_in_batches
from reader.crag.route import AMBIGUOUS, CORRECT, INCORRECT, Routing, grade_value, routing_named, why_missed
from reader.errors import LLMError, ReaderError, WeightsUnusable
from reader.llm.base import LLM, Completion, supports_logprobs
from reader.text.split import split_sentences

RETRIEVE, GRADE, ROUTE, CORRECT_STEP, FALLBACK, REFINE, GENERATE, CHECK, DONE = (
    "retrieve",
    "grade",
    "route",
    "correct",
    "fallback",
    "refine",
    "generate",
    "check",
    "done",
)
MAX_STEPS = 20

# -> reader.crag.grounded.Groundedness, or its first two fields (grounded, reason)
CheckGrounded = Callable[[str, list[Candidate], LLM], tuple]


class PassageGrader(Protocol):
    """The trained relevance grader (reader.grader.model.RelevanceGrader): for each passage, its
    best window's P(relevant) and that window."""

    def grade(self, question: str, passages: list[str]) -> list: ...


_CITATION = re.compile(r"\s*\[\d+(?:\s*[,–-]\s*\d+)*\]")


@dataclass(frozen=True)
class CragConfig(CragSettings):
    """The pipeline's configuration: the settings (reader.config.CragSettings: routing and its
    thresholds, the quote threshold, who may refuse, what an unsupported answer becomes; their
    help says what each does) and the fixed parts below. `crag_config` gives the one for a
    Settings' `crag` group."""

    min_relevant: int = 2
    max_corrective_rounds: int = 1
    n_rewrites: int = 3
    answer_budget_tokens: int = 1500
    max_workers: int = 4
    collection_fallback: bool = True
    fallback_max_chunks: int = 6  # graded from the rest of the collection
    per_paper_quota: int = 3  # a library-wide question's first candidates from any one paper
    external_limit: int = 3
    check_timeout_s: float = 300.0
    # A call grades or refines at most batch_passages passages of about batch_tokens in all.
    batch_passages: int = BATCH_PASSAGES
    batch_tokens: int = BATCH_TOKENS
    # Confidence routing re-grades the best `confirm_top` passages of each batched grading one
    # by one and routes on those grades (docs/design/ask.md, "Routing on confidence").
    confirm_top: int = 2

    @property
    def writer_bar(self) -> float:
        """The grader's best P(YES) below which the writer is not asked (the "p_yes" refusal's
        answer_p_yes); 0 under the other refusals."""
        return self.answer_p_yes if refusal_named(self.refusal).by_p_yes else 0.0


def crag_config(
    settings: CragSettings, *, threshold: float | None = None, max_corrections: int | None = None
) -> CragConfig:
    """The configuration a question runs with: these settings (a Settings' `crag`, i.e.
    READER_CRAG_*, the config file and `reader calibrate --write`; or a calibration grid point)
    with one question's overrides (None keeps the setting)."""
    values = {f.name: getattr(settings, f.name) for f in fields(CragSettings)}
    if threshold is not None:
        values["threshold"] = threshold
    if max_corrections is not None:
        values["max_corrective_rounds"] = max_corrections
    return CragConfig(**values)


class Metered:
    """Counts calls and tokens of one question's LLM use (the wrapped LLM may be shared)."""

    def __init__(self, llm: LLM):
        self.llm = llm
        self.supports_logprobs = supports_logprobs(llm)
        self.calls = 0
        self.tokens = 0
        self._lock = threading.Lock()

    def complete(self, messages, **kwargs) -> Completion:
        with self._lock:
            self.calls += 1
        completion = self.llm.complete(messages, **kwargs)
        with self._lock:
            self.tokens += completion.prompt_tokens + completion.completion_tokens
        return completion


@dataclass
class AskResult:
    question: str
    paper_id: str | None
    answer: str
    not_found: bool
    grounded: bool
    grounded_reason: str
    route: str
    confidence: float
    sources: list[Candidate]  # numbered as cited: sources[0] is [1]
    graded: list[Candidate]  # everything graded, in the order it was graded
    rewrites: list[str]
    llm_calls: int
    tokens: int
    seconds: float
    trace: list[str]
    corrective_rounds: int
    fallback_used: bool
    notes: list[str] = field(default_factory=list)
    quoted: bool = False  # the answer quotes the evidence (the writer had refused)
    # what the question asks for (reader.crag.intent.Intent.to_json()): passages or citations
    intent: dict | None = None

    def to_json(self) -> dict:
        return {
            "question": self.question,
            "paper_id": self.paper_id,
            "answer": self.answer,
            "not_found": self.not_found,
            "answer_quoted": self.quoted,
            "grounded": self.grounded,
            "grounded_reason": self.grounded_reason,
            "route": self.route,
            "confidence": self.confidence,
            "sources": [
                {
                    "paper_id": c.paper_id,
                    "chunk_id": c.chunk_id,
                    "pages": c.pages,
                    "text": c.refined or c.text,
                    "score": round(c.score, 3),
                    "external": c.external,
                    "origin": c.origin,
                    "label": c.source_label,
                }
                for c in self.sources
            ],
            "grades": [
                {
                    "chunk_id": c.chunk_id,
                    "paper_id": c.paper_id,
                    "score": round(c.grade.score, 3),
                    "ambiguous": c.grade.ambiguous,
                    "reasoning": c.grade.reasoning,
                    "origin": c.origin,
                    "p_yes": None if c.grade.p_yes is None else round(c.grade.p_yes, 3),
                    "model_p": None if c.grade.model_p is None else round(c.grade.model_p, 3),
                    **({"error": c.grade.error} if c.grade.error else {}),
                }
                for c in self.graded
                if c.grade is not None
            ],
            "rewrites": self.rewrites,
            "llm_calls": self.llm_calls,
            "tokens": self.tokens,
            "seconds": round(self.seconds, 3),
            "trace": self.trace,
            "corrective_rounds": self.corrective_rounds,
            "fallback_used": self.fallback_used,
            "notes": self.notes,
            "intent": self.intent,
        }


@dataclass
class Run:
    """One question's working state, as the steps leave it (what `ask`'s `on_step` observes)."""

    question: str
    paper_id: str | None
    generator: Metered
    verifier: Metered
    search: Search
    check_grounded: CheckGrounded
    external: list[ExternalSearch]
    titles: dict[str, str]
    config: CragConfig
    routing: Routing
    refusal: Refusal
    relevance: PassageGrader | None = None
    retrieved: list[Candidate] = field(default_factory=list)
    graded: list[Candidate] = field(default_factory=list)
    kept: list[Candidate] = field(default_factory=list)
    refined: list[Candidate] = field(default_factory=list)
    rewrites: list[str] = field(default_factory=list)
    route: str = ""
    confidence: float = 0.0
    corrective_rounds: int = 0
    fallback_used: bool = False
    answer: Answer | None = None
    grounded: bool = False
    grounded_reason: str = ""
    notes: list[str] = field(default_factory=list)

    def grade(self, candidates: list[Candidate]) -> None:
        """The trained grader decides what it is sure of (`grader_low` / `grader_high`); the LLM
        grades the rest, in batches, and their grade blends both (`blend_model`). Where the trained
        grader scored a passage, the LLM reads its best window, which is what the writer reads."""
        cfg = self.config
        unsure = self.grade_by_model(candidates) if self.relevance is not None else list(candidates)
        if unsure is None:  # the trained grader could not load: the LLM grades every passage
            unsure = list(candidates)
        grades = (
            grade_in_batches(
                self.question,
                [(c.key, c.refined or c.text, c.paper_id) for c in unsure],
                self.generator,
                max_workers=cfg.max_workers,
                max_passages=cfg.batch_passages,
                budget_tokens=cfg.batch_tokens,
            )
            if unsure
            else []
        )
        for candidate, grade in zip(unsure, grades):
            candidate.grade = blend_model(grade, candidate.grade)
        if self.routing.confirms and cfg.confirm_top > 0 and unsure:
            self.confirm(unsure)
        self.graded.extend(candidates)
        failed = [g for g in grades if g.error]
        if failed and len(failed) == len(candidates) and self.relevance is None:
            # Every grade failed (endpoint down, bad key): answering "not found" would be a lie.
            raise LLMError(
                f"the grader could not judge any passage, so the question was not answered: {failed[0].error}"
            )

    def grade_by_model(self, candidates: list[Candidate]) -> list[Candidate] | None:
        """Grade every candidate with the trained grader; its best window becomes the refined
        text. Those it is sure of get their grade; the others are returned for the LLM. None,
        with a note, when the grader's weights are missing or damaged: it is not used again."""
        cfg = self.config
        unsure = []
        try:
            scored = self.relevance.grade(self.question, [c.text for c in candidates])
        except WeightsUnusable as exc:
            self.notes.append(f"{exc}; the LLM graded every passage instead")
            self.relevance = None
            return None
        for candidate, relevance in zip(candidates, scored):
            p = relevance.p_relevant
            candidate.refined = relevance.window
            candidate.refine_note = "the passage's window the relevance grader scored best"
            reason = f"relevance grader: P(relevant) {p:.2f}"
            if p >= cfg.grader_high:
                candidate.grade = Grade(candidate.key, RELEVANT_SCORE, False, reason, p_yes=p, model_p=p)
            elif p <= cfg.grader_low:
                candidate.grade = Grade(candidate.key, IRRELEVANT_SCORE, False, reason, p_yes=p, model_p=p)
            else:
                candidate.grade = Grade(candidate.key, AMBIGUOUS_SCORE, True, reason, p_yes=p, model_p=p)
                unsure.append(candidate)
        return unsure

    def confirm(self, candidates: list[Candidate]) -> None:
        """Grade the best `confirm_top` batch-graded passages again, one call each; a grade that
        came back replaces the batched one (a failed call leaves the batched grade)."""
        best = sorted(
            (c for c in candidates if c.grade is not None and not c.grade.error),
            key=lambda c: -grade_value(c),
        )[: self.config.confirm_top]
        regraded = grade_passages(
            self.question,
            [(c.key, c.refined or c.text, c.paper_id) for c in best],
            self.generator,
            max_workers=self.config.max_workers,
        )
        for candidate, grade in zip(best, regraded):
            if not grade.error:
                candidate.grade = grade

    def keep(self, candidates: list[Candidate]) -> None:
        known = {c.key for c in self.kept}
        passing = [c for c in candidates if self.routing.keeps(c, self.config.threshold)]
        self.kept.extend(c for c in passing if c.key not in known)

    def by_p_yes(self) -> bool:
        """The "p_yes" refusal rule applies: it is configured and the grader gave P(YES)."""
        return self.refusal.by_p_yes and any(
            c.grade is not None and c.grade.p_yes is not None for c in self.graded
        )

    def best_p_yes(self) -> float:
        return max((grade_value(c) for c in self.graded), default=0.0)

    def evidence_by_p_yes(self) -> list[Candidate]:
        """Every graded passage at or above `evidence_p_yes` that no grader rejected, once each,
        best first: as the relevance grader's best window where it graded the passage, else whole."""
        seen: set[str] = set()
        out = []
        for candidate in sorted(self.graded, key=lambda c: -grade_value(c)):
            if candidate.key in seen or grade_value(candidate) < self.config.evidence_p_yes:
                continue
            if rejected(candidate):
                continue
            seen.add(candidate.key)
            out.append(candidate if candidate.grade.model_p is not None else replace(candidate, refined=""))
        return out

    def seen_keys(self) -> set[str]:
        return {c.key for c in self.graded} | {c.key for c in self.retrieved}

    def label(self, candidate: Candidate) -> str:
        if candidate.external:
            return candidate.source_label
        title = self.titles.get(candidate.paper_id or "", "") or (candidate.paper_id or "")[:12]
        where = f"{title}, p. {candidate.pages}" if candidate.pages else title
        if self.paper_id and candidate.paper_id != self.paper_id:
            where += " — from another paper in the library, not the one asked about"
        return where


def rejected(candidate: Candidate) -> bool:
    """A grader said NO to the passage (an unreadable or failed grade is no rejection)."""
    grade = candidate.grade
    return grade is not None and not grade.error and not grade.ambiguous and grade.score <= IRRELEVANT_SCORE


def _retrieve(run: Run) -> str:
    """The question's passages; over the library, also each part's (decompose.sub_queries), with
    at most `per_paper_quota` passages from any one paper."""
    queries = [run.question]
    if run.paper_id is None:
        queries += sub_queries(run.question)
    run.retrieved = retrieve_all(queries, run.search, run.paper_id, origin="retrieval")
    if run.paper_id is None:
        run.retrieved = per_paper_quota(run.retrieved, run.config.per_paper_quota)
    return GRADE


def _grade(run: Run) -> str:
    run.grade(run.retrieved)
    return ROUTE


def _route(run: Run) -> str:
    cfg = run.config
    run.route, run.confidence = run.routing.route(run.retrieved, cfg)
    run.keep(run.retrieved)
    if run.route == CORRECT and run.kept:
        return REFINE
    return CORRECT_STEP if cfg.max_corrective_rounds > 0 else _after_correction(run)


def _after_correction(run: Run) -> str:
    low = run.routing.fallback_when_low and run.route == INCORRECT
    if low and not run.fallback_used:  # low confidence: the fallback sources too, whatever was kept
        return FALLBACK
    if run.kept:
        return REFINE
    if run.corrective_rounds < run.config.max_corrective_rounds:
        return CORRECT_STEP
    return FALLBACK if not run.fallback_used else REFINE


def _correct(run: Run) -> str:
    run.corrective_rounds += 1
    correction = corrective_retrieval(
        run.question,
        why_missed(run.graded, run.config.threshold),
        llm=run.generator,
        search=run.search,
        paper_id=run.paper_id,
        seen_keys=run.seen_keys(),
        grade=run.grade,
        n_rewrites=run.config.n_rewrites,
        max_workers=run.config.max_workers,
    )
    if correction.error:
        run.notes.append(correction.error)
    run.rewrites.extend(q for q in correction.rewrites if q not in run.rewrites)
    run.keep(correction.candidates)
    return _after_correction(run)


def _fallback(run: Run) -> str:
    """The rest of the collection (for a one-paper question), then the external source if any."""
    run.fallback_used = True
    cfg = run.config
    found: list[Candidate] = []
    if run.paper_id is not None and cfg.collection_fallback:
        queries = [run.question, *run.rewrites]
        others = retrieve_all(
            queries,
            run.search,
            None,
            origin="collection",
            skip_keys=run.seen_keys(),
            skip_paper=run.paper_id,
            max_workers=cfg.max_workers,
        )
        found.extend(others[: cfg.fallback_max_chunks])
    for adapter in run.external:
        try:
            found.extend(external_candidates(adapter.search(run.question, cfg.external_limit)))
        except ReaderError as exc:  # the adapter's own one-line account: service and cause
            run.notes.append(f"external search failed: {exc}")
        except Exception as exc:
            run.notes.append(
                f"external search ({getattr(adapter, 'name', '?')}) failed: {type(exc).__name__}: {exc}"
            )
    run.grade(found)
    run.keep(found)
    return REFINE


def _refine(run: Run) -> str:
    cfg = run.config
    if run.by_p_yes():
        run.refined = run.evidence_by_p_yes()
    else:
        run.refined = refine_in_batches(
            run.question,
            run.kept,
            run.generator,
            max_workers=cfg.max_workers,
            max_passages=cfg.batch_passages,
            budget_tokens=cfg.batch_tokens,
        )
    return GENERATE


def _generate(run: Run) -> str:
    cfg = run.config
    if run.by_p_yes() and run.best_p_yes() < cfg.writer_bar:
        run.notes.append(
            f"no passage was judged likely to answer (best P(YES) {run.best_p_yes():.2f} "
            f"< {cfg.writer_bar:.2f}), so the writer was not asked"
        )
        run.answer = Answer(not_found_sentinel(run.question), not_found=True)
    else:
        may_refuse = run.refusal.writer_may_refuse(run.route) and not run.by_p_yes()
        run.answer = generate_answer(
            run.question,
            run.refined,
            run.generator,
            label=run.label,
            budget_tokens=cfg.answer_budget_tokens,
            paper_id=run.paper_id,
            quote_threshold=cfg.quote_threshold,
            may_refuse=may_refuse,
        )
    if run.answer.retried:
        run.notes.append("the first answer was only citation markers; it was asked for once more")
    if run.answer.quoted:
        run.notes.append(
            f"the writer replied that the papers do not say, but the grader was sure "
            f"(P(YES) ≥ {run.config.quote_threshold:.2f}) that a passage answers: "
            "the answer quotes it"
        )
    for candidate in run.answer.evidence:
        candidate.source_label = candidate.source_label or run.label(candidate)
    if run.answer.not_found:
        run.grounded = True
        run.grounded_reason = "nothing to check: the answer is that the papers do not say"
        return DONE
    return CHECK


def _check(run: Run) -> str:
    claims = _CITATION.sub("", run.answer.text).strip()
    pool = ThreadPoolExecutor(max_workers=1)
    future = pool.submit(run.check_grounded, claims, run.answer.evidence, run.verifier)
    # wait() rather than result(timeout=): TimeoutError raised *inside* the check (an HTTP
    # read timeout) is the same class as the future's own timeout since Python 3.11.
    wait([future], timeout=run.config.check_timeout_s)
    try:
        if not future.done():
            run.grounded = False
            run.grounded_reason = f"groundedness check timed out after {run.config.check_timeout_s:g} s"
        else:
            run.grounded, run.grounded_reason, supported = Groundedness(*future.result())
            supported = _without_unfounded(run, claims, supported)
            if not run.grounded and run.config.ungrounded == "refuse" and not _keep_supported(run, supported):
                _withhold(run)
    except Exception as exc:
        run.grounded = False
        run.grounded_reason = f"groundedness check failed: {type(exc).__name__}: {exc}"
    finally:
        pool.shutdown(wait=False)
    return DONE


def _without_unfounded(run: Run, claims: str, supported) -> list[str]:
    """The supported sentences less those of `claims` (the answer as checked, its citation markers
    taken out) that share no word with the evidence beyond the question's
    (reader.crag.grounded.unfounded_sentences); with any such sentence the answer is not grounded,
    whatever the verifier said."""
    texts = [t for c in run.answer.evidence for t in (c.text, c.refined) if t]
    unfounded = set(unfounded_sentences(claims, run.question, texts))
    if not unfounded:
        return list(supported)
    run.grounded = False
    run.grounded_reason = (
        f"{len(unfounded)} sentence{'' if len(unfounded) == 1 else 's'} share no word with the passages "
        f"beyond the question's: “{sorted(unfounded)[0][:120]}”"
    )
    return [s for s in supported if s not in unfounded]


def _keep_supported(run: Run, supported) -> bool:
    """The drafted answer cut to the sentences the check found supported, when they still answer
    (not only the question's words, not only a pointer to where the answer is); False, and the
    answer unchanged, when none does. A sentence left out is in the notes with the reason."""
    draft = run.answer
    sentences = split_sentences(draft.text)
    supported = set(supported)
    kept = [s for s in sentences if _CITATION.sub("", s).strip() in supported]
    text = " ".join(kept).strip()
    if not kept or only_points_elsewhere(text) or restates_question(text, run.question):
        return False
    run.notes.append(
        f"{len(sentences) - len(kept)} of {len(sentences)} sentences of the drafted answer were left out "
        f"because the check did not find them supported ({run.grounded_reason}): "
        + " ".join(s for s in sentences if s not in kept)
    )
    run.answer = replace(draft, text=text)
    run.grounded = True
    run.grounded_reason = (
        f"the {len(kept)} sentence{'' if len(kept) == 1 else 's'} kept of the drafted answer's "
        f"{len(sentences)} supported by the kept evidence"
    )
    return True


def _withhold(run: Run) -> None:
    draft = run.answer
    run.notes.append(
        f"a drafted answer was withheld because the check found it unsupported "
        f"({run.grounded_reason}): {draft.text}"
    )
    run.answer = Answer(
        not_found_sentinel(run.question),
        evidence=draft.evidence,
        not_found=True,
        completion=draft.completion,
        retried=draft.retried,
    )
    run.grounded = True
    run.grounded_reason = "nothing to check: the drafted answer was withheld as unsupported"


def _withheld(run: Run) -> bool:
    return any(note.startswith("a drafted answer was withheld") for note in run.notes)


def _as_list(external) -> list[ExternalSearch]:
    """None, one adapter or several: the pipeline takes a list."""
    if external is None:
        return []
    return list(external) if isinstance(external, (list, tuple)) else [external]


STEPS: dict[str, Callable[[Run], str]] = {
    RETRIEVE: _retrieve,
    GRADE: _grade,
    ROUTE: _route,
    CORRECT_STEP: _correct,
    FALLBACK: _fallback,
    REFINE: _refine,
    GENERATE: _generate,
    CHECK: _check,
}


def ask(
    question: str,
    *,
    paper_id: str | None,
    generator: LLM,
    verifier: LLM,
    search: Search,
    check_grounded: CheckGrounded,
    external: ExternalSearch | list[ExternalSearch] | None = None,
    titles: dict[str, str] | None = None,
    config: CragConfig | None = None,
    on_step: Callable[[str, Run], None] | None = None,
    stop_before: str | None = None,
    relevance: PassageGrader | None = None,
) -> AskResult:
    """Answer `question` about one paper (`paper_id`) or the whole collection (None).

    For measurement: `on_step(step, run)` is called after each step (a name of `STEPS`) with
    the question's working state; with `stop_before` (a name of `STEPS`), the run ends when it
    reaches that step: the result holds what the steps before it did, an empty answer
    (`not_found` false unless an earlier step decided it) and a note saying where it stopped.

    `relevance`, the trained relevance grader, grades every passage first when `config.grader`
    is on; the LLM grades only those it is unsure of (CragConfig.grader_low / grader_high)."""
    if stop_before is not None and stop_before not in STEPS:
        raise ValueError(f"stop_before={stop_before!r}: not a step; one of {', '.join(STEPS)}")
    question = question.strip()
    start = time.perf_counter()
    config = config or CragConfig()
    run = Run(
        question=question,
        paper_id=paper_id,
        generator=Metered(generator),
        verifier=Metered(verifier),
        search=search,
        check_grounded=check_grounded,
        external=_as_list(external),
        titles=titles or {},
        config=config,
        routing=routing_named(config.routing),
        refusal=refusal_named(config.refusal),
        relevance=relevance if config.grader else None,
    )
    trace, finished = _run_steps(run, on_step, stop_before)
    if finished:
        answer = run.answer or Answer(not_found_sentinel(question), not_found=True)
    else:
        answer = run.answer or Answer("")
    return _result(run, answer, trace, start)


def _run_steps(
    run: Run, on_step: Callable[[str, Run], None] | None, stop_before: str | None
) -> tuple[list[str], bool]:
    """The state machine from RETRIEVE: the steps taken, and whether it reached DONE (not
    stopped before `stop_before`)."""
    trace: list[str] = []
    state = RETRIEVE
    while state != DONE:
        if state == stop_before:
            run.notes.append(f"stopped before the {state} step")
            return trace, False
        if len(trace) >= MAX_STEPS:
            raise RuntimeError(f"CRAG state machine did not finish: {' -> '.join(trace)}")
        trace.append(state)
        state = STEPS[state](run)
        if on_step is not None:
            on_step(trace[-1], run)
    return trace, True


def _result(run: Run, answer: Answer, trace: list[str], start: float) -> AskResult:
    return AskResult(
        question=run.question,
        paper_id=run.paper_id,
        answer=answer.text,
        not_found=answer.not_found,
        grounded=run.grounded,
        grounded_reason=run.grounded_reason,
        route=run.route,
        confidence=run.confidence,
        # a withheld draft's passages are kept: they were found, only the draft was refused
        sources=answer.evidence if not answer.not_found or _withheld(run) else [],
        graded=run.graded,
        rewrites=run.rewrites,
        llm_calls=run.generator.calls + run.verifier.calls,
        tokens=run.generator.tokens + run.verifier.tokens,
        seconds=time.perf_counter() - start,
        trace=trace,
        corrective_rounds=run.corrective_rounds,
        fallback_used=run.fallback_used,
        notes=run.notes,
        quoted=answer.quoted,
    )


__all__ = [
    "ask",
    "AskResult",
    "CragConfig",
    "crag_config",
    "Run",
    "STEPS",
    "CORRECT",
    "AMBIGUOUS",
    "INCORRECT",
]
