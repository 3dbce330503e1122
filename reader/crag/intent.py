"""What a question asks for: the papers' content (passage search) or the citation graph.

    decide_intent(question, llm) -> Intent("citations", "cited_by", by="llm", ...)

Questions about what a paper cites, what cites it, or how the library's papers relate by citation
("which of my papers build on SPECTER?", "what does this paper cite for its baseline?") go to
the citation graph (reader.crag.graph), everything else to passage search as before.

The keyword rules (`keyword_intent`) look for citation words ("cite", "cited by", "builds on",
"references", "bibliography", "引用", "参考文献" …). Only a question they flag is shown to the LLM
(prompts/intent.j2, stage `crag-intent`), which decides between passages, cites, cited_by and
related; an ordinary question costs no call and is routed as before. A reply that names no
choice, or a failed call, leaves the keywords' decision (`by` says which decided).
"""

from __future__ import annotations

import re
from dataclasses import dataclass

from reader.prompts import messages

PASSAGES, CITATIONS = "passages", "citations"
CITES, CITED_BY, RELATED = "cites", "cited_by", "related"
KINDS = (CITES, CITED_BY, RELATED)

# "do any of my papers cite X", "how many papers cite X": the library's papers citing something
_LIBRARY_CITES = re.compile(
    r"\b(?:do|does|did)\s+(?:any|some|all|many|none)\b[^?]*\bcite\b"
    r"|\bhow\s+many\b[^?]*\b(?:cite|build\s+on)\b",
    re.I,
)
# "does this paper cite", "its references", "cite for its baseline": what a paper cites
_CITES = re.compile(
    r"\b(?:does|do|did)\b[^?]*\bcite\b|\bcites?\s+(?:for|as|when)\b|\bcited\s+(?:for|as)\b"
    r"|\b(?:its|their|the\s+paper'?s?|this\s+paper'?s?)\s+(?:references|reference\s+list|bibliography)\b"
    r"|\b(?:are|were)\s+cited\s+(?:by|in)\b|\breference\s+list\b|\bbibliography\s+of\b|\b(?:papers?|works?)\s+cited\s+by\b|\bworks\s+cited\b"
    r"|参考文献|引用了哪些",
    re.I,
)
# "papers cite X", "cited by", "build on X", "what cites": the library's papers citing something
_CITED_BY = re.compile(
    r"\b(?:what|which|who|whose)\b[^?]*\b(?:cites?|citing|builds?\s+(?:on|upon)|extends?|follows?\s+up\s+on)\b"
    r"|\b(?:papers?|works?|articles?)\s+(?:that\s+|which\s+)?(?:cite|build\s+on|build\s+upon|extend)\b"
    r"|\bis\s+[^?]*\bcited\b|\bcited\s+by\s+(?:which|what|my|any|the\s+library)|\bciting\s+papers?\b"
    r"|引用了?(?:它|这篇|该)|被引|哪些(?:论文|文章)引用",
    re.I,
)
# "how are A and B related", "relationship between": the graph between papers
_RELATED = re.compile(
    r"\bhow\b[^?]*\b(?:relate|related|connected)\b|\brelationships?\s+between\b"
    r"|\bcitation\s+(?:graph|links?|network)\b|\bcite\s+each\s+other\b|之间的关系|引用关系",
    re.I,
)
# in this order: the first that matches decides
_RULES = ((RELATED, _RELATED), (CITED_BY, _LIBRARY_CITES), (CITES, _CITES), (CITED_BY, _CITED_BY))


@dataclass
class Intent:
    route: str  # passages | citations
    kind: str = ""  # cites | cited_by | related (citations only)
    by: str = "keywords"  # keywords | llm
    reason: str = ""
    calls: int = 0  # LLM calls made to decide (0 or 1)

    def to_json(self) -> dict:
        return {"route": self.route, "kind": self.kind, "by": self.by, "reason": self.reason}


def keyword_intent(question: str) -> Intent:
    """The keyword rules' decision."""
    for kind, pattern in _RULES:
        found = pattern.search(question or "")
        if found:
            return Intent(CITATIONS, kind, "keywords", f"the question says {found.group(0).strip()!r}")
    return Intent(PASSAGES, "", "keywords", "no citation words in the question")


_CHOICE = re.compile(r"[\s\W]*(passages|cites|cited[_ -]by|related)\b", re.I)


def read_choice(reply: str) -> str | None:
    """The choice the LLM's reply starts with (passages, cites, cited_by, related), or None."""
    found = _CHOICE.match(reply or "")
    return found.group(1).lower().replace(" ", "_").replace("-", "_") if found else None


def decide_intent(question: str, llm=None) -> Intent:
    """The keywords decide whether the question may be about citations; when they say it may
    and an LLM is given, the LLM decides (its reply unreadable or its call failed: the keywords)."""
    guess = keyword_intent(question)
    if guess.route == PASSAGES or llm is None:
        return guess
    try:
        completion = llm.complete(
            messages("intent", question=question), temperature=0.0, max_tokens=8, stage="crag-intent"
        )
    except Exception as exc:  # noqa: BLE001 - the keywords still decide
        guess.reason += f"; the LLM could not be asked ({type(exc).__name__})"
        guess.calls = 1
        return guess
    choice = read_choice(completion.text)
    if choice is None:
        guess.reason += "; the LLM's reply named no choice"
        guess.calls = 1
        return guess
    if choice == PASSAGES:
        return Intent(PASSAGES, "", "llm", "the LLM read it as a question about the papers' content", 1)
    return Intent(CITATIONS, choice, "llm", f"the LLM read it as {choice.replace('_', ' ')}", 1)
