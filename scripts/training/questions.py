"""The relevance grader's training questions, made by rule from a paper's sentences.

A question is made from one sentence of a passage and asks for something the sentence states:
its number ("What is the accuracy of BERT on SQuAD?" from "BERT reaches 93.2% accuracy on
SQuAD"), one of its names ("Which model … ?"), or its comparison ("How does X compare with
Y … ?"). The question keeps the sentence's other content words, so it reads like a researcher's
keyword question, and leaves out the answer itself; it keeps only a few of the sentence's words,
and half the questions say some of them in other words (rewrites.synonyms). `unanswerable` turns
a question into one the same passage does not answer: its subject becomes a name the paper never
uses. The windows the questions are asked of are the grader's own (reader.grader.model.windows).
"""

from __future__ import annotations

import random
import re

from reader.text.relations import checkable_numbers
from scripts.training.rewrites import NAME, invented_word, name_matches, synonyms

_STOP = set(
    "the a an of in on for to and or with by from at as is are was were be been this that these those "
    "it its we our their they which who than into over under between each both all any such can may "
    "not no also more most other using used use based has have had do does did there here then thus "
    "however while where when whose what how however therefore et al i e g fig table".split()
)
_WORD = re.compile(r"[A-Za-z][A-Za-z0-9\-]*")
_COMPARE = re.compile(
    r"\b(outperform\w*|better than|worse than|higher than|lower than|compared (?:to|with)|"
    r"improv\w* (?:over|on|upon)|exceed\w*|surpass\w*)\b",
    re.I,
)
_QUANTITY_AFTER = re.compile(r"^\s*(?:%|percent)?\s*(?:of\s+)?(?:the\s+)?([A-Za-z][A-Za-z\-]+)")


def content_words(text: str, drop: str = "") -> list[str]:
    """The text's words that carry content, in order, without those of `drop`."""
    dropped = {w.lower() for w in _WORD.findall(drop)}
    out = []
    for w in _WORD.findall(text):
        low = w.lower()
        if low not in _STOP and low not in dropped and len(w) > 2 and low not in {o.lower() for o in out}:
            out.append(w)
    return out


def _context(sentence: str, answer: str, rng: random.Random, most: int | None = None) -> str:
    """A few of the sentence's content words in its order: its names first, then a random few
    (2 to 5 in all unless `most` says), so a question shares only part of its sentence's words."""
    words = content_words(sentence, drop=answer)
    most = most if most is not None else rng.randint(2, 5)
    if len(words) > most:
        names = [i for i, w in enumerate(words) if NAME.fullmatch(w)][:2]
        others = [i for i in range(len(words)) if i not in names]
        keep = set(names) | set(rng.sample(others, max(0, most - len(names))))
        words = [w for i, w in enumerate(words) if i in keep]
    return " ".join(w if NAME.fullmatch(w) else w.lower() for w in words)


def number_question(sentence: str, rng: random.Random) -> dict | None:
    numbers = checkable_numbers(sentence)
    if not numbers:
        return None
    m = rng.choice(numbers)
    answer = m.group(0).strip()
    after = _QUANTITY_AFTER.match(sentence[m.end() :])
    quantity = after.group(1).lower() if after and after.group(1).lower() not in _STOP else ""
    ctx = _context(sentence[: m.start()] + " " + sentence[m.end() :], quantity, rng)
    if not ctx:
        return None
    if quantity and not m.group(2) and "." not in m.group(1) and quantity.endswith("s"):
        text = f"How many {quantity} {ctx}?"
    elif quantity:
        text = rng.choice((f"What is the {quantity} of {ctx}?", f"What {quantity} is reported for {ctx}?"))
    else:
        text = rng.choice((f"What value is reported for {ctx}?", f"How much {ctx}?"))
    return {"question": text, "answer": answer, "kind": "number"}


def name_question(sentence: str, rng: random.Random) -> dict | None:
    names = name_matches(sentence)
    if not names:
        return None
    m = rng.choice(names)
    answer = m.group(0)
    ctx = _context(sentence, answer, rng)
    if not ctx:
        return None
    head = rng.choice(("Which method", "Which model", "What", "Which dataset or tool", "Which"))
    return {"question": f"{head} {ctx}?", "answer": answer, "kind": "name"}


def subject_question(sentence: str, rng: random.Random) -> dict | None:
    names = name_matches(sentence) or [m for m in NAME.finditer(sentence) if len(m.group(0)) >= 3]
    if not names:
        return None
    subject = names[0].group(0)
    compare = _COMPARE.search(sentence)
    ctx = _context(sentence, subject, rng, most=5)
    if not ctx:
        return None
    if compare and len(names) > 1:
        other = names[1].group(0)
        ctx = _context(sentence, subject + " " + other, rng, most=4)
        return {
            "question": f"How does {subject} compare with {other} on {ctx}?",
            "answer": "",
            "kind": "compare",
        }
    text = rng.choice(
        (f"What does the paper report about {subject} and {ctx}?", f"How does {subject} {ctx}?")
    )
    return {"question": text, "answer": "", "kind": "subject"}


MAKERS = (number_question, name_question, subject_question)


def question_for(sentence: str, rng: random.Random) -> dict | None:
    """One question the sentence answers, by a rule chosen at random among those that apply."""
    makers = list(MAKERS)
    rng.shuffle(makers)
    for make in makers:
        made = make(sentence, rng)
        if made:
            if rng.random() < 0.5:  # other words for the same thing, as a researcher's question has
                reworded = synonyms(made["question"], rng)
                if reworded and (not made["answer"] or made["answer"] not in reworded):
                    made["question"] = reworded
            return made
    return None


def unanswerable(question: dict, foreign_names: list[str], rng: random.Random) -> str | None:
    """The question about something the paper never names: its first name (or, without one, an
    added one) replaced by a name from another paper or an invented one."""
    text = question["question"]
    new = rng.choice(foreign_names) if foreign_names and rng.random() < 0.5 else invented_word(rng, "Xx")
    names = [m for m in NAME.finditer(text) if m.start() > 0]
    if names:
        m = rng.choice(names)
        return text[: m.start()] + new + text[m.end() :]
    return text.rstrip("?") + f" in {new}?"
