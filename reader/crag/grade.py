"""Grade each retrieved chunk for relevance to the question, concurrently.

The grader is asked for YES/NO and a one-line reason, but models answer in
many shapes, so parsing is lenient (see `parse_grade`). A labelled score
always wins (`Score: 0.75`, `score = 7/10`, `Relevance: 8` on a 1-10 scale);
otherwise a leading YES/NO (0.8/0.2) decides, and a number or fraction in its
reason ("NO — covers 3/4 datasets") is no score. Without a verdict word a reply
that is a score (`8`, `7/10 - mentions...`), the words "relevant"/"irrelevant"
or a fraction on a score scale ("gets 3 / 10") decide; anything else is 0.4
and marked ambiguous — deliberately below the 0.6 threshold, so an unreadable
grade never lets a chunk into the answer on its own.

Batched (`grade_in_batches`, the pipeline's default): one call grades up to
`BATCH_PASSAGES` passages shown as <passage n="1"> … <passage n="k">, and the
reply has one line per passage, `[2] NO - about another method`. The lines are
found as the audit's verifier replies are (reader.audit.verify.numbered_lines)
and each is read by `parse_grade`; a passage the reply skips is ambiguous (0.4)
like an unreadable grade.

Where the LLM returns token log-probabilities (`supports_logprobs`), each grade also carries
`p_yes`, the probability the grader gave to YES at its answer token (read as the audit reads
the verifier's, reader.audit.confidence). The score that routes stays the parsed verdict; P(YES)
decides whether the answer step may quote the evidence when the writer refuses (generate.py).
"""

from __future__ import annotations

import re
from collections.abc import Callable, Iterable, Sequence
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, replace
from typing import TypeVar

from reader.audit.confidence import claim_probabilities
from reader.audit.verify import numbered_lines, parse_answers
from reader.llm.base import LLM, Message, supports_logprobs
from reader.prompts import messages
from reader.text.tokens import estimate_tokens

RELEVANT_SCORE = 0.8
IRRELEVANT_SCORE = 0.2
AMBIGUOUS_SCORE = 0.4
MAX_REASON_CHARS = 240
# A batched call holds at most this many passages and about this many passage tokens: eight
# chunks of ~300-350 tokens (reader.ingest.chunk), the paper text a deep read gives the embedded
# model (SMALL_LOCAL.context_tokens), well inside its 16k context (reader.llm.local).
BATCH_PASSAGES = 8
BATCH_TOKENS = 3000
BATCH_REPLY_TOKENS_EACH = 24  # "[3] NO - about the training data" and some slack
SKIPPED_REASON = "no grade for this passage in the reply"
TOP_LOGPROBS = 5  # alternatives per answer token, enough to find both YES and NO
T = TypeVar("T")
R = TypeVar("R")

_NUMBER = r"(\d+(?:\.\d+)?|\.\d+)"
_SCORE_LABEL = re.compile(
    r"\b(?:score|rating|relevan(?:ce|cy|t)(?:\s+score)?|分数|评分)\s*\**\s*[:：=]?\s*\**\s*"
    + _NUMBER
    + r"(?:\s*/\s*"
    + _NUMBER
    + r")?",
    re.IGNORECASE,
)
# What may stand before a labelled score on its line: nothing, markup, separators, or the
# verdict ("NO, score: 0.3", "Yes (score = 0.8)") — not prose ("a ROUGE score 0.41", "F1 score: 0.9").
# Seed 000's own format leads with its verdict word: "Relevance: relevant, Score: 0.9".
_LABEL_LEAD = re.compile(
    r"(?:\s*\d{1,2}[.)]\s+)?[\s*_#>•(\[,;:—–|-]*"
    r"(?:(?:yes|no|relevance\s*\**\s*[:：]\s*\**\s*(?:relevant|irrelevant|ambiguous|partially relevant))"
    r"\b[\s*.,;:!—–(\[-]*)?$",
    re.IGNORECASE,
)
_FRACTION = re.compile(r"(?<![\d.])" + _NUMBER + r"\s*/\s*" + _NUMBER + r"(?![\d.])")
_LEADING_FRACTION = re.compile(r"^\s*\**\s*" + _NUMBER + r"\s*/\s*" + _NUMBER + r"(?![\d.])")
_SCORE_SCALES = {5.0, 10.0, 100.0}  # "3 / 10" is a score, "3/4 datasets" a count
# A line that opens with a bare number: "8", "0.75", "8.", "7 - mostly relevant".
# "1. The passage..." is a list number, not a score, so a trailing dot only counts at line end.
_LEADING_NUMBER = re.compile(r"^\s*\**\s*" + _NUMBER + r"\s*\**\s*(?:[.)]?\s*$|[,:–—-]|\s+[-–—:(])")
_LEADING_SCORE_TEXT = re.compile(
    r"^\s*\**\s*" + _NUMBER + r"(?:\s*/\s*" + _NUMBER + r")?(?=\s*(?:$|[,:–—-]))"
)
_IRRELEVANT = re.compile(
    r"\birrelevant\b|\bnot\s+(?:at\s+all\s+|very\s+|directly\s+)?relevant\b|\bunrelated\b|不相关|无关",
    re.IGNORECASE,
)
_RELEVANT = re.compile(r"\brelevant\b|相关", re.IGNORECASE)
# The prompt asks for YES/NO first: the embedded 1.5B model answered "Score: 0.5" to every
# passage when asked for a score, but tells relevant from unrelated passages with YES/NO.
_VERDICT_WORD = re.compile(r"^\W*(?:(?:answer|verdict|relevant|relevance)\W*)?(yes|no)\b\W*", re.IGNORECASE)
_REASON_LABEL = re.compile(
    r"^\s*[-*]?\s*\**\s*(?:reason(?:ing)?|because|理由|原因)\s*\**\s*[:：]\s*", re.IGNORECASE
)


@dataclass
class Grade:
    chunk_key: str  # "chunk:<id>" or "external:<n>"; see pipeline.Candidate.key
    score: float
    ambiguous: bool
    reasoning: str
    error: str = ""
    p_yes: float | None = None  # P(YES) at the grader's answer token, when log-probabilities came back
    model_p: float | None = None  # the trained relevance grader's P(relevant), when it graded the passage


def _normalise(value: float, scale: float | None = None) -> float | None:
    """A score as a fraction of 1: 0.75, 7/10, 8 (on a 1-10 scale), 85 (percent)."""
    if scale is not None:
        if scale <= 0:
            return None
        value = value / scale
    elif value > 10:
        if value > 100:
            return None
        value = value / 100
    elif value > 1:
        value = value / 10
    return min(1.0, max(0.0, value))


def _labelled_scores(line: str) -> list[re.Match[str]]:
    """The labelled scores of one line ("Score: 7/10", "NO, score = 0.3"), not a score
    named inside prose ("reports a ROUGE score 0.41")."""
    return [m for m in _SCORE_LABEL.finditer(line) if _LABEL_LEAD.fullmatch(line, 0, m.start())]


def _labelled_score(text: str) -> float | None:
    for line in text.splitlines():
        for match in _labelled_scores(line):
            scale = float(match.group(2)) if match.group(2) else None
            score = _normalise(float(match.group(1)), scale)
            if score is not None:
                return score
    return None


def _bare_score(first_line: str) -> float | None:
    """A reply that is a score: "8", "0.75", "7/10 - mentions the baselines"."""
    match = _LEADING_FRACTION.match(first_line)
    if match:
        return _normalise(float(match.group(1)), float(match.group(2)))
    match = _LEADING_NUMBER.match(first_line)
    if match:
        return _normalise(float(match.group(1)))
    return None


def _scale_fraction(text: str) -> float | None:
    """A fraction on a score scale anywhere: "The passage gets 3 / 10 from me"."""
    for match in _FRACTION.finditer(text):
        if float(match.group(2)) in _SCORE_SCALES:
            return _normalise(float(match.group(1)), float(match.group(2)))
    return None


def _reasoning(text: str) -> str:
    lines = [line.strip() for line in text.splitlines() if line.strip()]
    for line in lines:
        if _REASON_LABEL.match(line):
            return _REASON_LABEL.sub("", line)[:MAX_REASON_CHARS]
    for line in lines:
        for match in reversed(_labelled_scores(line)):
            line = line[: match.start()] + line[match.end() :]
        line = _VERDICT_WORD.sub("", line)
        rest = _LEADING_SCORE_TEXT.sub("", line).replace("()", "").strip(" *:-–—.,")
        if rest:
            return rest[:MAX_REASON_CHARS]
    return ""


def parse_grade(text: str) -> tuple[float, bool, str]:
    """(score in [0, 1], ambiguous, one-line reasoning) from whatever the grader wrote.

    Only a labelled score overrides the YES/NO verdict: numbers in the reason
    ("NO — covers 3/4 datasets", "YES, 2 of 3 claims") are part of the reason."""
    reasoning = _reasoning(text)
    score = _labelled_score(text)
    if score is not None:
        return score, False, reasoning
    first_line = next((line for line in text.splitlines() if line.strip()), "")
    verdict = _VERDICT_WORD.match(first_line)
    if verdict:
        score = RELEVANT_SCORE if verdict.group(1).lower() == "yes" else IRRELEVANT_SCORE
        return score, False, reasoning or verdict.group(1).upper()
    score = _bare_score(first_line)
    if score is not None:
        return score, False, reasoning
    if _IRRELEVANT.search(text):
        return IRRELEVANT_SCORE, False, reasoning
    if _RELEVANT.search(text):
        return RELEVANT_SCORE, False, reasoning
    score = _scale_fraction(text)
    if score is not None:
        return score, False, reasoning
    return AMBIGUOUS_SCORE, True, reasoning or "unreadable grade"


def blend_model(grade: Grade, model_grade: Grade | None) -> Grade:
    """The LLM's grade of a passage the trained grader was unsure of: the LLM's verdict and reason
    stand, and its P(YES) (its parsed grade without log-probabilities) is averaged with the model's
    P(relevant). A failed LLM call leaves the model's grade, saying so."""
    if model_grade is None or model_grade.model_p is None:
        return grade
    if grade.error:
        return replace(
            model_grade, reasoning=f"{model_grade.reasoning}; the LLM grader failed: {grade.error}"
        )
    llm_p = grade.p_yes if grade.p_yes is not None else grade.score
    return replace(grade, p_yes=(llm_p + model_grade.model_p) / 2, model_p=model_grade.model_p)


def grade_messages(question: str, passage: str) -> list[Message]:
    """Instructions in the system message; the passage and the question, as data, in the user message."""
    return messages("grade", question=question, passage=passage)


def _logprobs_wanted(llm: LLM) -> dict:
    return {"logprobs": TOP_LOGPROBS} if supports_logprobs(llm) else {}


def grade_one(question: str, key: str, passage: str, llm: LLM, *, paper_id: str | None = None) -> Grade:
    try:
        completion = llm.complete(
            grade_messages(question, passage),
            temperature=0.0,
            max_tokens=80,
            stage="crag-grade",
            paper_id=paper_id,
            **_logprobs_wanted(llm),
        )
    except Exception as exc:  # one failed grade must not sink the question
        return Grade(key, AMBIGUOUS_SCORE, True, "grader call failed", error=f"{type(exc).__name__}: {exc}")
    score, ambiguous, reasoning = parse_grade(completion.text)
    [p_yes] = claim_probabilities(completion.logprobs, 1)
    return Grade(key, score, ambiguous, reasoning, p_yes=p_yes)


def grade_passages(
    question: str,
    passages: Sequence[tuple[str, str, str | None]],
    llm: LLM,
    *,
    max_workers: int = 4,
) -> list[Grade]:
    """Grade (key, text, paper_id) passages concurrently; results keep the input order."""
    if not passages:
        return []
    with ThreadPoolExecutor(max_workers=max(1, min(max_workers, len(passages)))) as pool:
        futures = [
            pool.submit(grade_one, question, key, text, llm, paper_id=paper_id)
            for key, text, paper_id in passages
        ]
        return [f.result() for f in futures]


Parsed = tuple[float, bool, str]


def parse_grades(text: str, n: int) -> list[Parsed | None]:
    """`parse_grade` for each of the n numbered passages of a batched reply; None for a passage
    the reply skips.

    A numbered line ("[2] NO - about wheat", "2. YES", "Passage 2: Score: 0.7") and the
    unnumbered lines after it (a reason on its own line) are read by `parse_grade`; the first
    readable grade of a passage counts. A reply with no numbered line is read whole for one
    passage, and by its bare YES/NO lines in order for more (reader.audit.verify.parse_answers)."""
    entries: list[tuple[int, list[str]]] = []
    for number, rest, line in numbered_lines(text, label="passage"):
        if number is not None and number != "n":
            entries.append((int(number) - 1, [rest]))
        elif entries:
            entries[-1][1].append(line)
    if not entries:
        if n == 1:
            return [parse_grade(text)]
        return [
            None
            if answer is None
            else (RELEVANT_SCORE if answer == "YES" else IRRELEVANT_SCORE, False, answer)
            for answer in parse_answers(text, n)
        ]
    grades: list[Parsed | None] = [None] * n
    for index, lines in entries:
        if 0 <= index < n:
            grade = parse_grade("\n".join(lines))
            known = grades[index]
            if known is None or (known[1] and not grade[1]):
                grades[index] = grade
    return grades


def grade_batch(question: str, passages: Sequence[tuple[str, str, str | None]], llm: LLM) -> list[Grade]:
    """One call grading (key, text, paper_id) passages; results keep the input order."""
    conversation = messages(
        "grade_batch", question=question, passages=[text for _, text, _ in passages], n=len(passages)
    )
    try:
        completion = llm.complete(
            conversation,
            temperature=0.0,
            max_tokens=16 + BATCH_REPLY_TOKENS_EACH * len(passages),
            stage="crag-grade-batch",
            paper_id=only_paper(paper_id for _, _, paper_id in passages),
            **_logprobs_wanted(llm),
        )
    except Exception as exc:  # a failed call must not sink the question: its passages are ambiguous
        error = f"{type(exc).__name__}: {exc}"
        return [
            Grade(key, AMBIGUOUS_SCORE, True, "grader call failed", error=error) for key, _, _ in passages
        ]
    parsed_grades = parse_grades(completion.text, len(passages))
    p_values = claim_probabilities(completion.logprobs, len(passages))
    return [
        Grade(key, *parsed, p_yes=p_yes)
        if parsed is not None
        else Grade(key, AMBIGUOUS_SCORE, True, SKIPPED_REASON)
        for (key, _, _), parsed, p_yes in zip(passages, parsed_grades, p_values)
    ]


def only_paper(paper_ids: Iterable[str | None]) -> str | None:
    """The paper a batched call is about, for the call log: None when its passages come from several."""
    papers = set(paper_ids)
    return papers.pop() if len(papers) == 1 else None


def batch_ranges(costs: Sequence[int], *, max_items: int, budget: int) -> list[range]:
    """Consecutive runs of items, each at most `max_items` long and at most `budget` in cost
    (an item dearer than the budget goes alone)."""
    runs: list[range] = []
    start = spent = 0
    for i, cost in enumerate(costs):
        if i > start and (i - start >= max_items or spent + cost > budget):
            runs.append(range(start, i))
            start, spent = i, 0
        spent += cost
    if start < len(costs):
        runs.append(range(start, len(costs)))
    return runs


def in_batches(
    work: Callable[[list[T]], list[R]],
    items: Sequence[T],
    costs: Sequence[int],
    *,
    max_items: int,
    budget: int,
    max_workers: int,
) -> list[R]:
    """`work(batch)` (one result per item) over consecutive batches of at most `max_items`
    items and about `budget` tokens (`batch_ranges`), concurrently; results in input order."""
    runs = batch_ranges(costs, max_items=max(1, max_items), budget=budget)
    if not runs:
        return []
    with ThreadPoolExecutor(max_workers=max(1, min(max_workers, len(runs)))) as pool:
        futures = [pool.submit(work, [items[i] for i in run]) for run in runs]
        return [result for future in futures for result in future.result()]


def grade_in_batches(
    question: str,
    passages: Sequence[tuple[str, str, str | None]],
    llm: LLM,
    *,
    max_workers: int = 4,
    max_passages: int = BATCH_PASSAGES,
    budget_tokens: int = BATCH_TOKENS,
) -> list[Grade]:
    """Grade (key, text, paper_id) passages in batched calls (concurrently when there are
    several); results keep the input order."""
    return in_batches(
        lambda batch: grade_batch(question, batch, llm),
        passages,
        [estimate_tokens(text) for _, text, _ in passages],
        max_items=max_passages,
        budget=budget_tokens,
        max_workers=max_workers,
    )
