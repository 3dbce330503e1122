"""One checklist question asked of the passages the paper's index found for it (prompts/checklist.j2):
the LLM copies the span that answers it, or says NONE — one question, one span to quote, a task a
small model does well. A reply is kept only when it is, word for word, in one of the passages and
says something of the item's kind (a data size for the datasets, a name for the baselines …); the
sentence of the passage holding it is the item's evidence."""

from __future__ import annotations

import re
from dataclasses import dataclass

from reader.llm.base import supports_accept
from reader.prompts import messages
from reader.text.pages import page_range
from reader.text.rigour import Passage, matchable, named
from reader.text.rigour_experiments import data_sizes, metric_names
from reader.text.rigour_find import CUES
from reader.text.split import split_sentences

STAGE = "checklist"
MAX_TOKENS = 80  # a span of at most 40 words
NONE = "NONE"


@dataclass(frozen=True)
class Extracted:
    passage: Passage
    sentence: str  # the passage's sentence holding the span
    span: str


def ask(llm, key: str, question: str, passages: list[Passage], *, paper_id: str | None = None) -> str:
    """The LLM's reply to one question over these passages (raises what the LLM raises). A reply
    that is neither NONE nor a span of the passages is never cached (the call log's `accept=`)."""
    shown = [{"text": p.text, "pages": page_range(p.page_start, p.page_end)} for p in passages]
    extra = {}
    if supports_accept(llm):
        extra["accept"] = lambda completion: (
            is_none(completion.text) or located(key, completion.text, passages)
        )
    return llm.complete(
        messages(STAGE, question=question, passages=shown),
        temperature=0.0,
        max_tokens=MAX_TOKENS,
        stage=STAGE,
        paper_id=paper_id,
        **extra,
    ).text


def is_none(reply: str) -> bool:
    return _span_of(reply).upper().startswith(NONE)


def _flat(text: str) -> str:
    return " ".join(matchable(text).lower().split())


def _span_of(reply: str) -> str:
    """The reply without quotes, labels and a trailing full stop."""
    text = reply.strip().splitlines()[0] if reply.strip() else ""
    text = re.sub(r"^(?:answer|span|quote)\s*[:：]\s*", "", text, flags=re.I)
    return text.strip().strip("\"'“”‘’`").strip().rstrip(".").strip()


def answers_item(key: str, text: str) -> bool:
    """Does the copied text say something of the item's kind? A size for the datasets, a name for
    the baselines, a metric's name for the metrics; the item's cue words for the rest."""
    plain = matchable(text)
    if key == "datasets":
        return bool(data_sizes(plain)) or bool(re.search(r"\d", plain) and CUES[key].search(plain))
    if key == "baselines":
        return bool(named(plain))
    if key == "metrics":
        return bool(metric_names(plain))
    return bool(CUES[key].search(plain))


def located(key: str, reply: str, passages: list[Passage]) -> Extracted | None:
    """The reply as a span of one passage that answers the item, or None (NONE, a paraphrase,
    a span found nowhere, or one that does not answer the question)."""
    span = _span_of(reply)
    if not span or is_none(span) or len(span.split()) < 2:
        return None
    wanted = _flat(span)
    for passage in passages:
        if wanted not in _flat(passage.text):
            continue
        holding = next(
            (" ".join(s.split()) for s in split_sentences(passage.text) if wanted[:40] in _flat(s)),
            span,
        )
        if answers_item(key, span) or answers_item(key, holding):
            return Extracted(passage, holding, span)
    return None
