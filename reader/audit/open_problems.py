"""An open problem stated as a result: "Key results include the development of robust evaluation
protocols" of a paper that says "The development of robust evaluation protocols has already been
a long-standing problem …" among its open challenges.

    open_problem_as_result_reasons(sentence, facts) -> ["gives “development of robust evaluation
        protocols” as a result, but the paper names it only as an open problem: “… has already been
        a long-standing problem …”"]

A sentence states a result when it says so ("key results include", "the main findings are",
"the paper develops …", "the authors also present … and evaluate …"). What it states is each run
of at least MIN_WORDS of its words after that, with MIN_CONTENT content words, that the paper
prints word for word (longest first, none overlapping). The paper names one only as an open
problem when every sentence of its text that holds the run speaks of a problem, a challenge or
future work and not of the paper's own doing ("we propose", "our").
"""

from __future__ import annotations

import re
from functools import lru_cache

_RESULT_FRAME = re.compile(
    r"\b(?:(?:key|main|major|principal|central)\s+(?:results?|findings?|contributions?|achievements?)"
    r"(?:\s+of\s+the\s+(?:paper|study|work|tutorial))?\s+(?:include|includes|are|is|was|were)"
    r"|(?:results?|findings?|contributions?|achievements?)\s+(?:include|includes)"
    r"|the\s+(?:paper|authors?|study|work|tutorial)\s+(?:also\s+)?"
    r"(?:develop|achiev|demonstrat|establish|solv|evaluat|present|propos|introduc)\w*)\b",
    re.I,
)
_PROBLEM = re.compile(
    r"\b(?:challeng\w*|problems?|open\s+(?:questions?|issues?)|future\s+(?:work|research|stud\w*|direction\w*)|"
    r"remains?|remained|unsolved|unresolved|lacks?|lacking|yet\s+to|bottlenecks?)\b"
)
_OWN_DOING = re.compile(r"\b(?:we|our)\b")
_FUNCTION = set(
    """a an the of to in on for and or with by from as at is are was were be been this that these
    those its their it such which""".split()
)
MIN_WORDS = 4
MIN_CONTENT = 3


def _words(text: str) -> list[str]:
    return re.findall(r"[a-z0-9]+", re.sub(r"(\w)-\s+(\w)", r"\1\2", text.lower()))


def _stated_runs(sentence: str, paper_words: str) -> list[str]:
    """The runs of the sentence's words after its result frame that the paper prints, longest first,
    none overlapping another."""
    frame = _RESULT_FRAME.search(sentence)
    if not frame:
        return []
    words = _words(sentence[frame.end() :])
    taken: set[int] = set()
    runs = []
    for size in range(len(words), MIN_WORDS - 1, -1):
        for start in range(len(words) - size + 1):
            span = set(range(start, start + size))
            run = words[start : start + size]
            if span & taken or sum(w not in _FUNCTION for w in run) < MIN_CONTENT:
                continue
            if f" {' '.join(run)} " in paper_words:
                runs.append(" ".join(run))
                taken |= span
    return runs


@lru_cache(maxsize=8)
def _paper_words(flat: str) -> tuple[str, tuple[str, ...]]:
    """The paper's words (line-break hyphens joined: "pro- tocols"), whole and per sentence (split
    at full stops), each padded with spaces for a whole-word search; built once per paper."""
    text = re.sub(r"(\w)-\s+(\w)", r"\1\2", flat)
    sentences = tuple(f" {' '.join(_words(piece))} " for piece in re.split(r"(?<=[.!?])\s+", text))
    return f" {' '.join(_words(text))} ", sentences


def open_problem_as_result_reasons(sentence: str, facts) -> list[str]:
    """Why what the sentence states as a result is one of the paper's open problems ([] when it is
    not); `facts`: reader.audit.guards.PaperFacts (its text as printed, lower case)."""
    if not _RESULT_FRAME.search(sentence):
        return []
    words, sentences = _paper_words(facts.flat)
    for run in _stated_runs(sentence, words):
        holding = [s.strip() for s in sentences if f" {run} " in s]
        if holding and all(_PROBLEM.search(s) and not _OWN_DOING.search(s) for s in holding):
            return [
                f"gives “{run}” as a result, but the paper names it only as an open problem: “{holding[0][:160]}”"
            ]
    return []
