"""The follow-up questioner: after a deep read whose audit passed, the questions the reading leaves
open are asked of the paper and answered with sources.

    open_points(texts, settled)                -> the sentences under the note's gap headings
    write_questions(title, points, llm, n)     -> (3-5 questions, "llm" or "rule")
    by_evidence(questions, best_relevance)     -> those the paper's passages answer best first
    questions_to_ask(title, points, llm, n, best_window) -> both, each point shown with its excerpt
    ask_until_answered(questions, ask, n)      -> the answers, until n are not refusals
    audit_passed(ratios)                       -> every analysis at or below the audit's threshold

The gaps are the sentences under "Open questions", "Missing experiments or baselines", "Threats to
validity" and "Weaknesses", in that order, except those the audit marked `[待验证]` (the paper
does not support them: asked of it, they come back "Not found") and the tool's own findings
from the rigour checklist ("The paper does not say over how many runs …"): the checklist searched
the paper for them already, so a question about them is answered "Not found" again. The LLM
turns them into questions the paper itself could answer (prompts/followup.j2, stage `followup`);
a reply with fewer than the questions asked for is filled by rule from the gaps ("What does the
paper report about …?"). Each gap is shown to the LLM with the window of the paper's passages
that the relevance grader finds closest to it, and the LLM asks what that excerpt answers where
it speaks to the gap: a question written in the paper's words is one its passages are found and
graded for. CANDIDATES_PER_QUESTION times as many are written as will be asked, and
they are asked in the order of the relevance grader's best score over the paper's retrieved
passages: the grader is what turns a question down in the pipeline (at or below its grader_low
no passage is used), and it reads wording closely ("potential areas for future research" 0.01,
"what would be interesting to investigate in future work" 0.96, against the same passage). A
question whose best passage scores below the pipeline's bar for asking the writer is asked only to
make up n questions, never as one of the extra ones.
Each question then goes through the question pipeline over the paper (Services.follow_up), so an
answer has sources and pages, and "Not found in the papers." is an answer too; up to EXTRA_QUESTIONS
more questions are written and asked while fewer than n answers are not refusals.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field

from reader.audit.citations import content_stems
from reader.audit.loop import FLAG_THRESHOLD, MARK
from reader.prompts import messages
from reader.text.split import split_sentences
from reader.text.words import words

GAP_HEADINGS = ("Open questions", "Missing experiments or baselines", "Threats to validity", "Weaknesses")
MAX_POINTS = 12
MAX_QUESTION_CHARS = 200
EXTRA_QUESTIONS = 2  # asked only while fewer than n questions have found an answer
CANDIDATES_PER_QUESTION = 2
_HEADING = re.compile(r"^\s*#{1,6}\s*(.+?)\s*#*\s*$")
_AFTER_QUESTION_MARK = re.compile(r"(?<=[?？])[\"'*]*\s+")
_NUMBERING = re.compile(r"^\s*(?:[-*•]|\d{1,2}[.)]|Q\d+[.:)]?)\s*")
# "What metrics are used, and how do they relate to the paper's claims?": the second half asks for
# a judgement the paper does not make, and a passage that answers the first half is then graded
# as not answering the whole
_SECOND_QUESTION = re.compile(
    r",?\s+and\s+(?:how|what|why|whether|which|to what extent|do|does|did|are|is)\b", re.I
)
MIN_FIRST_HALF_WORDS = 3
# "What is the title of the paper?", "Who are the authors?": the note's front matter says it
_BIBLIOGRAPHIC = re.compile(
    r"^(?:what|who|when|where|which)\b[^?]{0,30}\b(?:title|authors?|published|publication|venue|journal)\b",
    re.I,
)
# "What is the main conclusion of the paper?", "What is the model quality?", "What does the paper
# report about remainder organized follows?" (from "The remainder of the paper is organized as
# follows."): a question made only of
# these words (and FUNCTION_WORDS: paper, study, result, method …) names nothing of the paper; its
# answer restates the abstract or makes a judgement up, and it follows up no gap of the review
_WHOLE_PAPER_WORDS = """
main key primary central overall general generality finding findings conclusion conclusions conclude
focus purpose aim aims goal goals objective objectives contribution contributions quality model
limitation limitations significance importance implication implications performance observation
observations outcome outcomes novelty strength strengths weakness weaknesses problem problems
remainder organized organised follows outline structure structured
""".split()
_WHOLE_PAPER_STEMS = frozenset(content_stems(" ".join(_WHOLE_PAPER_WORDS)))
# "Additionally, extending the framework …" asked "What does the paper report about Additionally
# extending framework …?": words that link a gap to the one before it name nothing
_LINKING_STEMS = frozenset(
    content_stems(
        "additionally moreover furthermore further also however finally overall lastly firstly secondly"
    )
)


def names_something(stems: frozenset[str]) -> bool:
    """A question with these content stems names something of the paper: a content word beyond
    the words any paper's question could use ("What is the main conclusion of the paper?" names
    nothing)."""
    return bool(stems - _WHOLE_PAPER_STEMS)


def open_points(texts: list[str], settled: frozenset[str] | set[str] = frozenset()) -> list[str]:
    """The sentences under the gap headings of the final texts, Open questions first and Weaknesses
    last (GAP_HEADINGS' order); the sentences the audit marked unsupported and the `settled` ones
    (the tool's checklist findings) left out: the paper has nothing to answer about either."""
    by_heading: dict[str, list[str]] = {h.lower(): [] for h in GAP_HEADINGS}
    for text in texts:
        inside = None
        for line in (text or "").splitlines():
            heading = _HEADING.match(line)
            if heading:
                inside = by_heading.get(heading.group(1).strip().rstrip(":").lower())
                continue
            if inside is not None and line.strip():
                body = _NUMBERING.sub("", line)
                # a lead-in ("The results may not hold elsewhere due to several factors:") names no gap
                inside += [
                    s.strip()
                    for s in split_sentences(body)
                    if len(words(s)) >= 4 and not s.rstrip().endswith(":") and MARK.strip() not in s
                ]
    points = [p for found in by_heading.values() for p in found]
    settled = {" ".join(s.split()) for s in settled}
    return [p for p in dict.fromkeys(points) if " ".join(p.split()) not in settled][:MAX_POINTS]


def questions_in(reply: str) -> list[str]:
    """The questions of a reply: its lines that end with "?", numbering and bullets taken off; a
    line holding several questions (small models write them run together) gives each, a
    question joined to a second one by "and how / and what …" keeps its first, and one about the
    paper's title, authors or venue, or one that names nothing of the paper, is left out, and one
    with the same content words as an earlier one."""
    # by content stems: "the use of a fixed number of tokens" and "the use of fixed number of
    # tokens" are the same question
    by_stems: dict[frozenset[str], str] = {}
    for line in (reply or "").splitlines():
        for part in _AFTER_QUESTION_MARK.split(line.strip()):
            part = first_question(_NUMBERING.sub("", part.strip()).strip(" *\"'"))
            if (
                part.endswith(("?", "？"))
                and 12 <= len(part) <= MAX_QUESTION_CHARS
                and not _BIBLIOGRAPHIC.search(part)
            ):
                stems = frozenset(content_stems(part))
                if names_something(stems):
                    by_stems.setdefault(stems, part)
    return list(by_stems.values())


def first_question(question: str) -> str:
    """ "What metrics are used and how do they relate to the claims?" -> "What metrics are used?";
    a question whose first half would be shorter than MIN_FIRST_HALF_WORDS is kept whole."""
    join = _SECOND_QUESTION.search(question)
    if not join or not question.endswith(("?", "？")):
        return question
    head = question[: join.start()].rstrip(" ,;")
    return f"{head}?" if len(words(head)) >= MIN_FIRST_HALF_WORDS else question


def rule_question(point: str) -> str:
    """A question by rule from a gap: the gap itself when it asks one, else what the paper reports
    about its content words."""
    point = point.strip()
    if point.endswith(("?", "？")):
        return point[:MAX_QUESTION_CHARS]
    stems = content_stems(point) - _LINKING_STEMS
    if not names_something(frozenset(stems)):
        return ""  # "The remainder of the paper is organized as follows."
    kept = [w for w in re.findall(r"[\w\-]+", point) if content_stems(w) & stems][:8]
    return f"What does the paper report about {' '.join(kept)}?" if kept else ""


def write_questions(
    title: str, points: list[str], llm, n: int, fill_to: int | None = None, excerpts: list[str] | None = None
) -> tuple[list[str], str]:
    """Up to `n` follow-up questions from the gaps, and who wrote them ("llm", "rule", or
    "llm+rule" when the rule filled up the LLM's); the rule fills only up to `fill_to` (default
    n): its questions are strings of the gap's words, asked when the LLM wrote too few."""
    fill_to = n if fill_to is None else min(fill_to, n)
    if not points or n <= 0:
        return [], "rule"
    asked: list[str] = []
    try:
        completion = llm.complete(
            messages("followup", title=title, points=points, excerpts=excerpts or [], n=n),
            temperature=0.0,
            max_tokens=60 * n,
            stage="followup",
        )
        # a question copied from an excerpt is the paper's own example ("Which papers discuss the
        # effects of Ranibizumab on the Retina?"), not a follow-up
        shown = " ".join(" ".join(excerpts or []).lower().split())
        asked = [
            q for q in questions_in(completion.text) if " ".join(q.lower().split()).rstrip("?") not in shown
        ][:n]
    except Exception:  # noqa: BLE001 - the rule still asks
        asked = []
    known = {frozenset(content_stems(q)) for q in asked}
    filled = list(asked)
    for point in points:
        if len(filled) >= fill_to:
            break
        question = rule_question(point)
        if question and frozenset(content_stems(question)) not in known:
            known.add(frozenset(content_stems(question)))
            filled.append(question)
    by = "llm" if filled == asked else ("rule" if not asked else "llm+rule")
    return filled, by


def questions_to_ask(
    title: str, points: list[str], llm, n: int, best_window=None, min_relevance: float = 0.0
) -> tuple[list[str], str]:
    """The n + EXTRA_QUESTIONS questions to ask, and who wrote them: CANDIDATES_PER_QUESTION times
    as many written from the first points, each point shown with the paper's window that
    `best_window(text)` (a reader.grader.model.Relevance, or None) finds closest to it, then
    ranked by their own best window's score. A question whose best window scores below
    `min_relevance` (the pipeline's own bar for asking the writer, which would turn it down) is
    asked only to make up n questions. Without `best_window` (the grader off): written from the
    points alone, asked in the order written."""
    asked = n + EXTRA_QUESTIONS
    points = points[: asked * CANDIDATES_PER_QUESTION]
    excerpts = [_window(best_window(p)) for p in points] if best_window else []
    questions, by = write_questions(
        title, points, llm, asked * CANDIDATES_PER_QUESTION, fill_to=asked, excerpts=excerpts
    )
    if best_window is not None:
        score = {q: _p_relevant(best_window(q)) for q in questions}
        ranked = by_evidence(questions, score.get)
        promising = [q for q in ranked if score[q] >= min_relevance]
        questions = promising + [q for q in ranked if score[q] < min_relevance][: max(0, n - len(promising))]
    return questions[:asked], by


def _window(best) -> str:
    """The text of a best window (a reader.grader.model.Relevance); "" when the paper has none."""
    return best.window if best is not None else ""


def _p_relevant(best) -> float:
    """The grader's score of a best window (a reader.grader.model.Relevance); 0 when the paper has none."""
    return best.p_relevant if best is not None else 0.0


def by_evidence(questions: list[str], best_relevance) -> list[str]:
    """The questions, the one whose best passage `best_relevance(question)` scores highest first;
    equal scores keep their order."""
    scored = [(best_relevance(q), i, q) for i, q in enumerate(questions)]
    return [q for _, _, q in sorted(scored, key=lambda t: (-t[0], t[1]))]


def ask_until_answered(questions: list[str], ask, n: int, on_question=None) -> list:
    """Each question's answer (`ask(question)` -> AskResult), in order, until n of them are not
    refusals; the questions after that are not asked."""
    answers = []
    for question in questions:
        if sum(not a.not_found for a in answers) >= n:
            break
        if on_question is not None:
            on_question(question)
        answers.append(ask(question))
    return answers


def audit_passed(ratios: list[float]) -> bool:
    """The review passed its audit: every analysis's final flagged ratio at or below the audit's
    threshold (the one above which it rewrites, reader.audit.loop.FLAG_THRESHOLD)."""
    return bool(ratios) and all(r <= FLAG_THRESHOLD for r in ratios)


@dataclass
class FollowUps:
    """What the questioner did after a review: its questions' answers (AskResult), who wrote the
    questions, or why none was asked."""

    answers: list = field(default_factory=list)
    by: str = ""
    skipped: str = ""

    def to_json(self) -> dict:
        return {
            "by": self.by,
            "skipped": self.skipped,
            "questions": [
                {
                    "question": a.question,
                    "answer": a.answer,
                    "not_found": a.not_found,
                    "grounded": a.grounded,
                    "sources": [
                        {"label": s.source_label, "pages": s.pages, "text": (s.refined or s.text)[:400]}
                        for s in a.sources
                    ],
                }
                for a in self.answers
            ],
        }
