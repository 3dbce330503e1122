"""What the paper leaves undone, stated as done: an open problem stated as a result ("Key results
include the development of robust evaluation protocols" of a paper that says "The development of
robust evaluation protocols has already been a long-standing problem …" among its open
challenges), and a plan stated as done ("The paper reports that it extends the framework to
handle arbitrary phrases" of a paper that "would like to extend the framework to handle arbitrary
phrases" in future work).

    open_problem_as_result_reasons(sentence, facts) -> ["gives “development of robust evaluation
        protocols” as a result, but the paper names it only as an open problem: “… has already been
        a long-standing problem …”"]
    plan_as_done_reasons(sentence, facts) -> ["gives “extend the framework to handle arbitrary
        phrases” as done, but the paper only plans it: “… we would like to extend the framework …”"]

A sentence states a result when it says so ("key results include", "the main findings are",
"the paper develops …", "the authors also present … and evaluate …"). What it states is each run
of at least MIN_WORDS of its words after that, with MIN_CONTENT content words, that the paper
prints word for word (longest first, none overlapping). The paper names one only as an open
problem when every sentence of its text that holds the run speaks of a problem, a challenge or
future work and not of the paper's own doing ("we propose", "our").

A plan stated as done: a sentence with no word of a plan, a possibility or an open question
(would, future, could, open, remains …) that prints a run of at least MIN_PLAN_WORDS of the paper's
words (MIN_CONTENT content words) which every sentence of the paper holding it puts at most
PLAN_REACH words after a plan ("would like to", "plan to", "future work" …; not a heading's
"Conclusion and future work"), and that does what is planned: the plan's verb ("extend") is one of
its words ("extends").
"""

from __future__ import annotations

import re
from functools import lru_cache

from reader.text.words import stems

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
MIN_PLAN_WORDS = 5
PLAN_REACH = 8
# the paper's plan, before what it plans (its words as _words gives them: lower case, no punctuation;
# "like to" alone where a passage begins inside "would like to")
_PLANNED = re.compile(
    r"\b(?:(?:would )?like to|plans? to|planning to|intends? to|hopes? to|(?<!and )future work|"
    r"(?<!and )future research|in the future|in future|for future)\b"
)
# what may stand between a plan and its verb: "in future work we will also apply …"
_BEFORE_VERB = _FUNCTION | set("we will also further to be would like first then next".split())
# a sentence that speaks of something as not done: a plan, a possibility, an open question
_NOT_DONE = re.compile(
    r"\b(?:would|will|plans?|planned|planning|future|intends?|intended|hopes?|could|may|might|should|"
    r"open|remains?|remained|left|yet|aims? to|next|directions?|propos\w* to|suggest\w*|potential\w*|"
    r"possib\w*|extension|unexplored)\b",
    re.I,
)


def _words(text: str) -> list[str]:
    return re.findall(r"[a-z0-9]+", re.sub(r"(\w)-\s+(\w)", r"\1\2", text.lower()))


def _stated_runs(sentence: str, paper_words: str) -> list[str]:
    """The runs of the sentence's words after its result frame that the paper prints, longest first,
    none overlapping another."""
    frame = _RESULT_FRAME.search(sentence)
    if not frame:
        return []
    return _printed_runs(_words(sentence[frame.end() :]), paper_words, MIN_WORDS)


def _printed_runs(words: list[str], paper_words: str, min_words: int) -> list[str]:
    """The runs of at least `min_words` of `words` that the paper prints, longest first, none
    overlapping another."""
    taken: set[int] = set()
    runs = []
    for size in range(len(words), min_words - 1, -1):
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


def plan_as_done_reasons(sentence: str, facts) -> list[str]:
    """Why the sentence states as done what the paper only plans ([] when it does not)."""
    if _NOT_DONE.search(sentence):
        return []
    words, sentences = _paper_words(facts.flat)
    if not _PLANNED.search(words):
        return []
    own = set(stems(_words(sentence)))
    for run in _printed_runs(_words(sentence), words, MIN_PLAN_WORDS):
        holding = [s for s in sentences if f" {run} " in s]
        if holding and all(_plans_it(s[: s.index(f" {run} ")], run, own) for s in holding):
            return [f"gives “{run}” as done, but the paper only plans it: “{holding[0].strip()[:160]}”"]
    return []


def _plans_it(before: str, run: str, own: set[str]) -> bool:
    """`before` (a sentence of the paper up to `run`) ends in a plan, at most PLAN_REACH words
    back, whose verb (the first word after it, in the run or before it) the claim uses."""
    plans = list(_PLANNED.finditer(before))
    if not plans:
        return False
    after = before[plans[-1].end() :].split()
    if len(after) > PLAN_REACH:
        return False
    verb = next((w for w in after + run.split() if w not in _BEFORE_VERB), "")
    return bool(verb) and bool(set(stems([verb])) & own)
