"""Generate the answer from the refined evidence only.

When nothing was kept the answer is the shared "not found" sentinel and the
generator is not called at all. The same sentinel is written into the prompt,
so a model that finds the evidence insufficient answers with it too, and
`is_not_found` recognises it in either language.

Three failures of a small writer are caught here. A reply that is nothing but citation
markers ("[1] [2][3]") is a failed generation: it is asked once more, then counted as a
refusal. A line that copies the prompt's source list ("[2] Title, p. 4 — relevance 0.80:
…") or only names a source is dropped from the reply: it is no part of an answer. And a
1.5B writer replies "not found" even with the answer in its evidence, its choice flipping
with small changes of wording; when the grader was sure a passage answers
the question (P(YES) at or above `quote_threshold`), the answer quotes that passage's kept
sentences, cited, instead of refusing (`Answer.quoted`). Without log-probabilities from the
grader nothing is quoted and the refusal stands.

Who may answer "not found" once evidence was kept is a `Refusal` in `REFUSALS`, looked up
once per question by its name (`refusal_named`, `CragConfig.refusal`).
"""

from __future__ import annotations

import re
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field

from reader.audit.citations import FUNCTION_WORDS
from reader.crag.evidence import Candidate
from reader.crag.route import CORRECT, grade_value
from reader.index.tokenize import tokenize
from reader.llm.base import LLM, Completion
from reader.prompts import language_instruction, messages
from reader.text.pages import page_range
from reader.text.split import split_sentences
from reader.text.tokens import estimate_tokens
from reader.text.words import stems, words

NOT_FOUND = "Not found in the papers."
NOT_FOUND_ZH = "未在论文中找到。"
_CJK = re.compile(r"[\u4e00-\u9fff]")
_NOT_FOUND_LOOSE = re.compile(r"not found in the papers|未在论文中找到", re.IGNORECASE)
_MARKER = re.compile(r"\[\s*\d+(?:\s*[,–-]\s*\d+)*\s*\]")
QUOTED_PASSAGES = 2  # passages quoted at most, best graded first
QUOTED_SENTENCES = 2  # kept sentences quoted from each


def question_language(question: str) -> str:
    return "zh" if _CJK.search(question) else "en"


def not_found_sentinel(question: str) -> str:
    return NOT_FOUND_ZH if question_language(question) == "zh" else NOT_FOUND


def is_not_found(answer: str) -> bool:
    """The model refused with the sentinel (a short reply that is essentially only it)."""
    stripped = answer.strip().strip("\"'*` ")
    match = _NOT_FOUND_LOOSE.search(stripped)
    return bool(match) and len(stripped) <= len(match.group(0)) + 40


def only_markers(answer: str) -> bool:
    """A reply with nothing but citation markers and punctuation: "[1] [2][3]", "[2]."."""
    return not re.search(r"\w", _MARKER.sub("", answer))


# words that frame an answer without answering ("The paper states that …", "as follows")
_ANSWER_FRAME = set(stems("state states stated follows following include includes".split()))
# "The evaluation metrics used are detailed in Table 1 of the first passage.", "The method is
# described in [1].": an answer that only says where the answer is
_ONLY_POINTER = re.compile(
    r"^[^.;:]{0,100}?\b(?:is|are|was|were|can be)\s+(?:\w+ly\s+)?(?:described|detailed|given|listed|"
    r"shown|reported|presented|discussed|provided|explained|found|summari[sz]ed|stated|evaluated|defined|"
    r"covered|addressed)\s+in\s+"
    r"(?:\[\d+\]|§\s*\d|(?:the\s+)?(?:table|figure|fig\.|section|appendix|(?:first|second|third|above)\s+passage|"
    r"passage|paper|source)\b)[^.;]{0,60}\.?\s*(?:\[\d+\]\s*)*$",
    re.I,
)


_ASKS_NAME = re.compile(r"\b(?:title[ds]?|called|named?)\b", re.I)


def restates_question(answer: str, question: str, titles: str = "") -> bool:
    """A reply whose words are all the question's ("The evaluation metrics used in the paper are
    [1] and [2][3]." to "What are the evaluation metrics used in the paper?"), or the question's and
    the `titles` of its passages' papers ("The dataset used for the experiments is sparse
    information extraction." of "Sparse Information Extraction: …"), unless the question asks for
    a title or a name."""
    given = _said(question) | (set() if _ASKS_NAME.search(question) else _said(titles))
    return not _said(answer) - _ANSWER_FRAME - given


def _said(text: str) -> set[str]:
    """The stems of every word that is not a function word, short ones and figures too ("GC-MS", "1999")."""
    return set(stems([w for w in words(_MARKER.sub(" ", text)) if w not in FUNCTION_WORDS]))


def only_points_elsewhere(answer: str) -> bool:
    """A one-sentence reply that only says where the answer is ("… are detailed in Table 1")."""
    return bool(_ONLY_POINTER.match(" ".join(answer.split())))


# "The evaluation metrics used in the paper are not explicitly stated in the given passage. However,
# … it seems that …": the writer says its passages do not answer, then guesses
_SOURCES = r"(?:given\s+|provided\s+)?(?:passages?|text|evidence|context|sources?)"
_DISCLAIMER = re.compile(
    r"^[^.]{0,160}?\b(?:(?:is|are|was|were)\s+not\s+(?:explicitly\s+|directly\s+|clearly\s+)?"
    r"(?:stated|mentioned|specified|provided|given|described|discussed|reported|defined)\s+"
    r"(?:in|by)\s+(?:the\s+|these\s+|any\s+)?" + _SOURCES + r"|"
    r"(?:the\s+|these\s+)?" + _SOURCES + r"\s+(?:do|does)\s+not\s+(?:explicitly\s+|directly\s+)?"
    r"(?:state|mention|specify|provide|say|describe|give))\b",
    re.I,
)


def disclaims_answer(answer: str) -> bool:
    """A reply whose first sentence says the passages do not give the answer (what follows is a guess)."""
    return bool(_DISCLAIMER.match(" ".join(_MARKER.sub(" ", answer).split())))


# A line of the answer prompt's source list, "[2] Title, p. 4 — relevance 0.80: the reason".
_SOURCE_LINE = re.compile(r"—\s*relevance\s+\d(?:\.\d+)?\b")


def without_source_lines(answer: str, labels: Sequence[str]) -> str:
    """The answer without the lines that copy the prompt's source list (a 1.5B writer often
    begins its answer with one) or that are nothing but a source's label."""
    bare_labels = {label.strip().rstrip(".") for label in labels}
    kept = [
        line
        for line in answer.splitlines()
        if not _SOURCE_LINE.search(line) and _MARKER.sub("", line).strip().rstrip(".") not in bare_labels
    ]
    return "\n".join(kept).strip()


def closest_sentences(question: str, text: str, n: int) -> list[str]:
    """The `n` sentences of `text` sharing the most word tokens with the question (earlier first
    on ties), in the order the text has them."""
    sentences = split_sentences(text)
    wanted = set(tokenize(question))
    overlap = [len(wanted & set(tokenize(s))) for s in sentences]
    best = sorted(sorted(range(len(sentences)), key=lambda i: -overlap[i])[:n])
    return [sentences[i] for i in best]


def quoted_answer(chosen: Sequence[Candidate], quote_threshold: float | None, question: str = "") -> str:
    """The kept sentences closest to the question of the passages the grader was sure of, quoted
    with their page and cited by their number in `chosen`; "" when none is sure enough (or the
    grader gave no P(YES))."""
    if quote_threshold is None:
        return ""
    sure = sorted(
        (
            i
            for i, c in enumerate(chosen)
            if c.grade is not None and c.grade.p_yes is not None and c.grade.p_yes >= quote_threshold
        ),
        key=lambda i: -chosen[i].grade.p_yes,
    )
    parts = []
    for i in sure[:QUOTED_PASSAGES]:
        sentences = closest_sentences(question, chosen[i].refined or chosen[i].text, QUOTED_SENTENCES)
        if sentences:
            page = page_range(chosen[i].page_start, chosen[i].page_end, prose=True)
            parts.append(f"“{' '.join(sentences)}”" + (f" ({page})" if page else "") + f" [{i + 1}]")
    return " ".join(parts)


def select_within_budget(evidence: Sequence[Candidate], budget_tokens: int) -> list[Candidate]:
    """Highest-graded first (P(YES) where the grader gave it) until the token budget is spent; the
    best one always goes in."""
    chosen: list[Candidate] = []
    spent = 0
    for candidate in sorted(evidence, key=lambda c: (-grade_value(c), -c.fused_score)):
        cost = estimate_tokens(candidate.refined or candidate.text)
        if chosen and spent + cost > budget_tokens:
            continue
        chosen.append(candidate)
        spent += cost
    return chosen


@dataclass
class Answer:
    text: str
    evidence: list[Candidate] = field(default_factory=list)  # in citation order [1], [2], ...
    not_found: bool = False
    completion: Completion | None = None
    quoted: bool = False  # the text quotes the evidence: the writer refused with it in hand
    retried: bool = False  # the first reply had nothing but citation markers


def generate_answer(
    question: str,
    evidence: Sequence[Candidate],
    llm: LLM,
    *,
    label: Callable[[Candidate], str],
    budget_tokens: int = 1500,
    max_sentences: int = 6,
    paper_id: str | None = None,
    quote_threshold: float | None = None,
    may_refuse: bool = True,
) -> Answer:
    """`may_refuse` False: the prompt does not offer the not-found reply (the grader already
    judged that the evidence answers); a writer that refuses anyway is still caught below."""
    sentinel = not_found_sentinel(question)
    chosen = select_within_budget(evidence, budget_tokens)
    if not chosen:
        return Answer(sentinel, not_found=True)
    items = _evidence_items(chosen, label)
    language = language_instruction(question_language(question))
    from_elsewhere = any(c.external or (paper_id is not None and c.paper_id != paper_id) for c in chosen)
    conversation = messages(
        "answer",
        question=question,
        evidence=items,
        not_found=sentinel,
        language=language,
        max_sentences=max_sentences,
        from_elsewhere=from_elsewhere,
        may_refuse=may_refuse,
    )
    completion, retried = _write(llm, conversation, paper_id)
    text = without_source_lines(completion.text, [item["label"] for item in items])
    if (
        text
        and not is_not_found(text)
        and not only_markers(text)
        and not only_points_elsewhere(text)
        and not restates_question(text, question, " ".join(label(c) for c in chosen))
        and not disclaims_answer(text)
    ):
        return Answer(text, evidence=chosen, completion=completion, retried=retried)
    quote = quoted_answer(chosen, quote_threshold, question)
    if quote:
        return Answer(quote, evidence=chosen, completion=completion, quoted=True, retried=retried)
    return Answer(sentinel, evidence=chosen, not_found=True, completion=completion, retried=retried)


def _evidence_items(chosen: Sequence[Candidate], label: Callable[[Candidate], str]) -> list[dict]:
    return [
        {
            "label": label(c),
            "external": c.external,
            "score": c.score,
            "reasoning": c.grade.reasoning if c.grade else "",
            "text": c.refined or c.text,
        }
        for c in chosen
    ]


def _write(llm: LLM, conversation, paper_id: str | None) -> tuple[Completion, bool]:
    """The writer's reply, asked again (warmer) once when the first had nothing but citation
    markers; and whether it was asked again."""
    completion = llm.complete(
        conversation, temperature=0.1, max_tokens=400, stage="crag-answer", paper_id=paper_id
    )
    retried = bool(completion.text.strip()) and only_markers(completion.text)
    if retried:
        completion = llm.complete(
            conversation, temperature=0.4, max_tokens=400, stage="crag-answer", paper_id=paper_id
        )
    return completion, retried


@dataclass(frozen=True)
class Refusal:
    """Who may answer "not found" once evidence was kept."""

    # The grader's P(YES) decides: the writer reads every passage graded at least `evidence_p_yes`,
    # whole, and is asked only when the best reaches `answer_p_yes`, then without the refusal
    # offered. Without P(YES) from the grader the writer decides, as with "writer".
    by_p_yes: bool = False
    # On a correct route the prompt asks for the answer the evidence gives (the grader's route
    # already judged that it answers); on the others the writer may refuse.
    trusts_correct_route: bool = False

    def writer_may_refuse(self, route: str) -> bool:
        return not (self.trusts_correct_route and route == CORRECT)


REFUSALS: dict[str, Refusal] = {
    "writer": Refusal(),
    "grader": Refusal(trusts_correct_route=True),
    "p_yes": Refusal(by_p_yes=True),
}


def refusal_named(name: str) -> Refusal:
    """The refusal rule of that name (`CragConfig.refusal`)."""
    try:
        return REFUSALS[name]
    except KeyError:
        raise ValueError(f"unknown CRAG refusal rule {name!r}: one of {', '.join(REFUSALS)}") from None
