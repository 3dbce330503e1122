"""A question about several papers, as one query per part, and a ranking that leaves room for each
paper.

A library-wide question often asks two things of two papers ("How many papers does S2ORC
contain, and how many nodes does the literature graph have?") or one thing of several named
works ("What do SPECTER and ScienceParse each use as training data?"). One search for the whole
question brings the passages of whichever paper its words favour; `sub_queries` gives one query
per part (split where a second wh-clause begins) or per named work (the work's name with the
question's other content words), and `per_paper_quota` keeps any one paper from filling the
candidates.
"""

from __future__ import annotations

import re
from collections import defaultdict
from collections.abc import Sequence

from reader.crag.evidence import Candidate

_SECOND_CLAUSE = re.compile(
    r"(?:,|;)?\s+and\s+(?=(?:what|which|how|where|when|who|whom|whose|on how|over how|in how|for how)\b)"
    r"|;\s+",
    re.IGNORECASE,
)
# A name as papers write one: a capital inside or after a first letter, a digit or a hyphen
# (SPECTER, S2ORC-SciBERT, 2kenize, SemEAGAT), not a sentence's first capitalised word.
_NAME = re.compile(r"(?<![\w-])(?:[A-Z][a-z]*[A-Z0-9][\w-]*|[A-Z]{2,}[\w-]*|\d+[a-z][\w-]*)(?![\w-])")
_STOP = set(
    "a an the of in on for to and or with by from at as is are was were be been do does did what which "
    "how where when who whom whose each both two papers paper library their its this that these those use "
    "used".split()
)
MIN_PART_CONTENT_WORDS = 2  # a clause with fewer is not a question of its own
MIN_NAME = 4  # shorter capitals are units and formats more often than works (F1, PDF, GPU)


def _content(text: str) -> list[str]:
    return [w for w in re.findall(r"[\w-]+", text) if w.lower() not in _STOP]


def sub_queries(question: str) -> list[str]:
    """The question's parts as queries of their own (empty when it has one part): its clauses
    split where a second wh-clause begins, else one query per named work when it names two or more."""
    parts = [p.strip(" ,;?") for p in _SECOND_CLAUSE.split(question) if p and p.strip(" ,;?")]
    if len(parts) > 1 and all(len(_content(p)) >= MIN_PART_CONTENT_WORDS for p in parts):
        return [p + "?" for p in parts]
    names = list(dict.fromkeys(m.group(0) for m in _NAME.finditer(question) if len(m.group(0)) >= MIN_NAME))
    if len(names) < 2:
        return []
    rest = [w for w in _content(question) if w not in names]
    return [" ".join([name, *rest]) for name in names]


def per_paper_quota(candidates: Sequence[Candidate], quota: int) -> list[Candidate]:
    """The candidates, best fused score first, with at most `quota` from any one paper."""
    taken: dict[str | None, int] = defaultdict(int)
    out = []
    for candidate in sorted(candidates, key=lambda c: -c.fused_score):
        if taken[candidate.paper_id] >= quota:
            continue
        taken[candidate.paper_id] += 1
        out.append(candidate)
    return out
