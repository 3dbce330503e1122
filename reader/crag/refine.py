"""Refine: from each kept chunk keep only the sentences that help answer the question.

The model never rewrites anything: it sees numbered sentences and answers with
numbers, and the kept sentences are copied verbatim from the chunk (with its
whitespace runs collapsed, as PDF text breaks lines mid-sentence). A chunk
where no sentence survives is dropped. When the reply has no usable numbers
(or the call fails) the chunk is kept whole: it already passed the grader,
and dropping evidence because of a formatting slip would be worse.

When the model answers "none" for a chunk the grader judged relevant, the two
disagree; then the sentences that share a content word with the question are
kept (still verbatim), and the chunk is dropped only if there are none. The
embedded 1.5B model answered "none" for the one passage that listed the
baselines asked about, which made the whole answer "not found".

One call (`refine_in_batches`) refines all kept chunks, their sentences numbered
`[passage.sentence]` ("[2.3]"), the reply the numbers to keep ("1.2, 1.3, 2.1").
The rules above hold per chunk: a reply (or a call) that cannot be read keeps every
chunk of the call whole, a chunk the reply picks nothing from is treated as "none"
for it, and a one-sentence chunk is kept without a call. (One call per chunk, the
path before batching, was measured against it and removed: docs/design/ask.md.)
"""

from __future__ import annotations

import re
from collections.abc import Sequence

from reader.crag.evidence import Candidate
from reader.crag.grade import BATCH_PASSAGES, BATCH_REPLY_TOKENS_EACH, BATCH_TOKENS, in_batches, only_paper
from reader.llm.base import LLM
from reader.prompts import messages
from reader.text.split import join_selected, split_sentences
from reader.text.tokens import estimate_tokens

_NONE = re.compile(r"\b(?:none|no sentences?|nothing)\b|无|没有", re.IGNORECASE)
_NUMBER_OR_RANGE = re.compile(r"(\d+)(?:\s*[-–]\s*(\d+))?")
# "2.3" (sentence 3 of passage 2), "1.2-1.4", "1.2-4"; not "1. 2" (a list number) nor "85.3%".
_PAIR = re.compile(r"(?<![\d.])(\d{1,2})\.(\d{1,3})(?:\s*[-–]\s*(?:(\d{1,2})\.)?(\d{1,3}))?(?![\d%])")
# A reply line for one passage: "[2] 1, 3", "Passage 2: none", "**Passage 2**: 1-3".
_PASSAGE_LINE = re.compile(
    r"^\W*(?:passage\s*\[?(\d{1,2})\]?|\[(\d{1,2})\])\W*?[:：.)\-–—]?\s*(.*)$", re.IGNORECASE
)


def normalise_space(text: str) -> str:
    return " ".join(text.split())


def parse_selection(text: str, n_sentences: int) -> list[int] | None:
    """1-based sentence numbers in order, [] for "none", None when the reply is unusable."""
    picked: set[int] = set()
    for first, last in _NUMBER_OR_RANGE.findall(text):
        picked.update(range(int(first), int(last or first) + 1))
    numbers = sorted(n for n in picked if 1 <= n <= n_sentences)
    if numbers:
        return numbers
    if _NONE.search(text):
        return []
    return None


_QUESTION_WORDS = frozenset(
    "which what how when where who whom whose why doe does do did against paper papers "
    "author authors use used using we they their this that".split()
)


def question_terms(question: str) -> set[str]:
    from reader.index.tokenize import tokenize

    return {t for t in tokenize(question) if len(t) >= 3 and t not in _QUESTION_WORDS}


def lexical_selection(question: str, sentences: Sequence[str]) -> list[int]:
    """1-based numbers of the sentences sharing a content word (stemmed) with the question."""
    from reader.index.tokenize import tokenize

    terms = question_terms(question)
    return [n for n, sentence in enumerate(sentences, 1) if terms & set(tokenize(sentence))]


def _sentences(candidate: Candidate) -> tuple[str, list[str]]:
    text = normalise_space(candidate.text)
    return text, split_sentences(text)


def _single(candidate: Candidate, text: str) -> Candidate | None:
    """A one-sentence chunk that passed the grader: kept whole without asking again."""
    _kept_whole(candidate, text, "single sentence, kept whole")
    return candidate if text else None


def _kept_whole(candidate: Candidate, text: str, note: str) -> Candidate:
    candidate.refined, candidate.refine_note = text, note
    return candidate


def _select(
    question: str, candidate: Candidate, sentences: list[str], numbers: list[int]
) -> Candidate | None:
    """The chosen sentences verbatim; for "none", those sharing a question term, or None."""
    note = f"kept sentences {numbers} of {len(sentences)}"
    if not numbers:
        numbers = lexical_selection(question, sentences)
        if not numbers:
            return None
        note = f"refiner said none; kept sentences {numbers} of {len(sentences)} sharing question terms"
    candidate.refined = join_selected(sentences, numbers)
    candidate.refine_note = note
    return candidate


def parse_batch_selection(text: str, sizes: Sequence[int]) -> dict[int, list[int]] | None:
    """{passage: its 1-based sentence numbers} from a batched reply (`sizes`: sentences per
    passage); {} for "none"; None when the reply is unusable.

    "1.2, 1.3, 2.1" and ranges ("1.2-1.4", "1.2-4") name sentences of passages; so do
    lines for one passage ("[2] 1, 3", "Passage 2: none"). For one passage, plain numbers
    ("2, 5") are its sentences, as in `parse_selection`."""
    picked: dict[int, set[int]] = {}

    def add(passage: int, first: int, last: int) -> None:
        if 1 <= passage <= len(sizes):
            chosen = {n for n in range(first, last + 1) if 1 <= n <= sizes[passage - 1]}
            if chosen:
                picked.setdefault(passage, set()).update(chosen)

    said_none = False
    for line in text.splitlines():
        pairs = list(_PAIR.finditer(line))
        for m in pairs:
            passage, first = int(m.group(1)), int(m.group(2))
            if m.group(4) is None:
                add(passage, first, first)
            elif m.group(3) is None or int(m.group(3)) == passage:
                add(passage, first, int(m.group(4)))
            else:  # "1.3-2.2" across passages: the two ends
                add(passage, first, first)
                add(int(m.group(3)), int(m.group(4)), int(m.group(4)))
        m = None if pairs else _PASSAGE_LINE.match(line)
        if m:
            passage = int(m.group(1) or m.group(2))
            chosen = parse_selection(m.group(3), sizes[passage - 1]) if 1 <= passage <= len(sizes) else None
            if chosen:
                picked.setdefault(passage, set()).update(chosen)
            said_none = said_none or chosen == []
    if picked:
        return {p: sorted(numbers) for p, numbers in sorted(picked.items())}
    if len(sizes) == 1:
        chosen = parse_selection(text, sizes[0])
        return None if chosen is None else ({1: chosen} if chosen else {})
    return {} if said_none or _NONE.search(text) else None


def refine_batch(
    question: str, items: Sequence[tuple[Candidate, str, list[str]]], llm: LLM
) -> list[Candidate | None]:
    """One call for (candidate, text, sentences) items of several sentences each; in input order."""
    conversation = messages(
        "refine_batch", question=question, passages=[sentences for _, _, sentences in items]
    )
    try:
        reply = llm.complete(
            conversation,
            temperature=0.0,
            max_tokens=16 + BATCH_REPLY_TOKENS_EACH * len(items),
            stage="crag-refine-batch",
            paper_id=only_paper(candidate.paper_id for candidate, _, _ in items),
        ).text
    except Exception as exc:
        note = f"refine call failed ({type(exc).__name__}), kept whole"
        return [_kept_whole(candidate, text, note) for candidate, text, _ in items]
    selection = parse_batch_selection(reply, [len(sentences) for _, _, sentences in items])
    if selection is None:
        return [
            _kept_whole(candidate, text, "unreadable selection, kept whole") for candidate, text, _ in items
        ]
    return [
        _select(question, candidate, sentences, selection.get(n, []))
        for n, (candidate, _, sentences) in enumerate(items, 1)
    ]


def refine_in_batches(
    question: str,
    candidates: Sequence[Candidate],
    llm: LLM,
    *,
    max_workers: int = 4,
    max_passages: int = BATCH_PASSAGES,
    budget_tokens: int = BATCH_TOKENS,
) -> list[Candidate]:
    """Refine in batched calls (one for a usual question); returns the surviving candidates in input order."""
    prepared = [(candidate, *_sentences(candidate)) for candidate in candidates]
    asked = [item for item in prepared if len(item[2]) > 1]
    refined = iter(
        in_batches(
            lambda batch: refine_batch(question, batch, llm),
            asked,
            [estimate_tokens(text) for _, text, _ in asked],
            max_items=max_passages,
            budget=budget_tokens,
            max_workers=max_workers,
        )
    )
    out = (
        next(refined) if len(sentences) > 1 else _single(candidate, text)
        for candidate, text, sentences in prepared
    )
    return [c for c in out if c is not None]
