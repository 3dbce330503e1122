"""Questions about citations answered from the citation graph (reader.ingest.links), not passages.

    graph_answer(session, question, intent, paper_id) -> AskResult, or None (no paper named)

- cites: the paper's reference entries; with words that say what for ("for its baseline",
  "SciBERT") only the entries whose text, or the paper's sentences citing them, hold those words.
- cited_by: the library's entries that cite the paper; a work outside the library ("BERT") is
  looked for in the entries' text.
- related: the graph's edges between the papers named (one: every edge touching it; none: the
  whole library).

The paper is the one asked about (`paper_id`), else the one the question names: a title's short
name ("SPECTER" of "SPECTER: Document-level …"), the title, or two content words of the title
in a row ("the Literature Graph paper"). The answer is written by rule from the entries, each cited
as a source (the citing paper, its reference list's page, the entry's text): nothing is generated,
so it is grounded by construction; "not found" says which reference lists were searched.
"""

from __future__ import annotations

import re
import time
from dataclasses import dataclass

from reader.audit.citations import content_stems, reference_list
from reader.audit.guards import BRACKET_CITE, bracket_numbers
from reader.crag.evidence import Candidate
from reader.crag.intent import CITED_BY, CITES, Intent
from reader.crag.pipeline import AskResult
from reader.ingest import links

MAX_LISTED = 40  # entries named in one answer; the rest are counted
_QUESTION_WORDS = set(
    """cite cites cited citing citation citations reference references referenced bibliography build
    builds built upon extend extends extended follow follows paper papers work works article articles
    library my our this its their does do did which what who whose how many any some all list show
    relate related relationship between each other connected graph network find tell give name""".split()
)
_STOP = {"the", "a", "an", "of", "in", "on", "for", "and", "to", "with", "by", "is", "are", "as", "at"}


@dataclass
class Named:
    paper_id: str
    title: str
    how: str  # short name | title | title words


def named_papers(question: str, papers: dict[str, str]) -> list[Named]:
    """The library papers the question names (`papers`: id -> title), best first."""
    text = f" {links.normalised(question)} "
    found: list[tuple[int, Named]] = []
    for pid, title in papers.items():
        short = links.short_name(title)
        if short and len(short) >= 3 and re.search(rf"(?<!\w){re.escape(short)}(?!\w)", question, re.I):
            found.append((3, Named(pid, title, "short name")))
        elif any(f" {key} " in text for key in links.title_keys(title)):
            found.append((2, Named(pid, title, "title")))
        else:
            words = [w for w in links.normalised(title).split() if w not in _STOP and len(w) > 2]
            pairs = [f" {a} {b} " for a, b in zip(words, words[1:])]
            if any(pair in text for pair in pairs):
                found.append((1, Named(pid, title, "title words")))
    return [n for _, n in sorted(found, key=lambda f: -f[0])]


_AFTER_VERB = re.compile(
    r"\b(?:cites?|cited|citing|build\s+on|builds\s+on|build\s+upon|extends?)\s+(.+?)\s*(?:\?|$)", re.I
)


def outside_name(question: str) -> str:
    """The work a cited-by question names when the library does not hold it: what follows the
    verb ("Do any of my papers cite BERT?" -> "BERT"), without an article or a trailing "paper"."""
    found = _AFTER_VERB.search(question)
    if not found:
        return ""
    name = re.sub(r"^(?:the|a|an)\s+", "", found.group(1).strip(" '\"“”"), flags=re.I)
    return re.sub(r"\s+(?:paper|work|article)$", "", name, flags=re.I).strip(" '\"“”")


def _purpose(question: str, named: list[Named]) -> set[str]:
    """The question's content stems that say what a citation is for ("baseline")."""
    names = set()
    for n in named:
        names |= content_stems(n.title) | content_stems(links.short_name(n.title))
    return content_stems(question) - content_stems(" ".join(_QUESTION_WORDS)) - names


def _source(entry: links.Entry, n: int, context: str = "") -> Candidate:
    text = entry.text + (f" — cited where the paper says: “{context}”" if context else "")
    candidate = Candidate(
        key=f"reference:{entry.reference_id}",
        text=text,
        paper_id=entry.citing_id,
        chunk_id=None,
        page_start=entry.page,
        page_end=entry.page,
        section="References",
        origin="citations",
        source_label=f"{entry.citing_title}, reference {entry.marker or n}, p. {entry.page}",
    )
    return candidate


def _contexts(session, paper_id: str) -> dict[str, list[str]]:
    """marker ("[12]") -> the paper's sentences citing it (numbered entries only)."""
    out: dict[str, list[str]] = {}
    for sentence in reference_list(session, paper_id).sentences:
        for found in BRACKET_CITE.finditer(sentence):
            for n in bracket_numbers(found.group(1)):
                out.setdefault(f"[{n}]", []).append(sentence)
    return out


def _cites(session, question: str, target: Named, named: list[Named]):
    entries = links.cites(session, target.paper_id)
    wanted = _purpose(question, named)
    if not wanted:
        chosen = [(e, "") for e in entries]
        head = f"{target.title} has {len(entries)} entries in its reference list"
    else:
        contexts = _contexts(session, target.paper_id)
        sentences = reference_list(session, target.paper_id).sentences
        chosen = []
        for e in entries:
            if wanted & content_stems(links.normalised(e.text)):
                chosen.append((e, ""))
                continue
            citing = (
                contexts.get(_bracketed(e.marker), [])
                if e.marker
                else _author_year_contexts(e.text, sentences)
            )
            near = [c for c in citing if wanted & content_stems(c)]
            if near:
                chosen.append((e, near[0]))
        head = f"{target.title} cites {len(chosen)} work{'s' if len(chosen) != 1 else ''} for this"
    if not chosen:
        what = " or ".join(sorted(wanted))
        return (
            f"No entry of {target.title}'s reference list ({len(entries)} entries) is cited for {what}.",
            [],
        )
    return head, chosen


_YEAR = re.compile(r"\b(1[89]\d\d|20\d\d)[a-z]?\b")


def _author_year_contexts(entry: str, sentences: list[str]) -> list[str]:
    """The paper's sentences citing an author-year entry: its first author's surname and its year
    ("Arman Cohan, … 2020." is cited as "Cohan et al., 2020")."""
    year = _YEAR.search(entry)
    first = re.split(r",| and ", entry, maxsplit=1)[0].strip().rstrip(".")
    surname = first.split()[-1] if first.split() else ""
    if not year or len(surname) < 2:
        return []
    return [s for s in sentences if surname in s and year.group(1) in s]


def _bracketed(marker: str) -> str:
    digits = re.sub(r"\D", "", marker or "")
    return f"[{digits}]" if digits else ""


def _cited_by(session, question: str, target: Named | None):
    if target is not None:
        entries = links.cited_by(session, target.paper_id)
        if not entries:
            return f"No paper of the library cites {target.title}.", []
        citing = sorted({e.citing_title for e in entries})
        return f"{_papers(len(citing))} of the library {_cite(len(citing))} {target.title}", [
            (e, "") for e in entries
        ]
    name = outside_name(question)
    entries = links.entries_naming(session, name) if name else []
    if not entries:
        return f"No reference entry of the library names {name}." if name else "", []
    citing = sorted({e.citing_title for e in entries})
    return f"{_papers(len(citing))} of the library {_cite(len(citing))} {name}", [(e, "") for e in entries]


def _papers(n: int) -> str:
    return f"{n} paper{'' if n == 1 else 's'}"


def _cite(n: int) -> str:
    return "cites" if n == 1 else "cite"


def _related(session, named: list[Named]):
    ids = {n.paper_id for n in named}
    edges = links.library_edges(session)
    if len(ids) >= 2:
        edges = [e for e in edges if e.citing_id in ids and e.cited_id in ids]
    elif ids:
        edges = [e for e in edges if e.citing_id in ids or e.cited_id in ids]
    if not edges:
        names = " and ".join(n.title for n in named) or "the library's papers"
        return f"No citation links {names} by their reference lists.", []
    return f"{len(edges)} citation link{'s' if len(edges) != 1 else ''} between papers of the library", [
        (e, "") for e in edges
    ]


def _lines(head: str, chosen: list[tuple[links.Entry, str]], kind: str) -> str:
    lines = [head + ":"]
    for n, (entry, _) in enumerate(chosen[:MAX_LISTED], 1):
        if kind == CITES:
            where = f" (in the library: {entry.cited_title})" if entry.cited_id else ""
            lines.append(f"- {entry.text[:200]}{where} [{n}]")
        else:
            lines.append(f"- {entry.citing_title} cites {entry.cited_title or entry.text[:120]} [{n}]")
    if len(chosen) > MAX_LISTED:
        lines.append(f"- and {len(chosen) - MAX_LISTED} more.")
    return "\n".join(lines)


def graph_answer(
    session, question: str, intent: Intent, paper_id: str | None, titles: dict[str, str]
) -> AskResult | None:
    """The answer from the citation graph, or None when the question names no paper it could
    be about (a cites question without a paper): the caller searches passages instead."""
    start = time.perf_counter()
    links.ensure_linked(session)
    named = named_papers(question, titles)
    scope = Named(paper_id, titles.get(paper_id, ""), "asked about") if paper_id else None
    if intent.kind == CITES:
        target = scope or (named[0] if named else None)
        if target is None:
            return None
        head, chosen = _cites(session, question, target, named)
    elif intent.kind == CITED_BY:
        others = [n for n in named if scope is None or n.paper_id != scope.paper_id]
        target = others[0] if others else (scope if not outside_name(question) else None)
        head, chosen = _cited_by(session, question, target)
        if target is not None and target.how == "title words" and outside_name(question):
            # two title words in a row are a weak sign: a work outside the library named in full wins
            head_outside, outside = _cited_by(session, question, None)
            if outside:
                head, chosen = head_outside, outside
        if not head:
            return None
    else:
        head, chosen = _related(session, named or ([scope] if scope else []))
    sources = [_source(e, n, context) for n, (e, context) in enumerate(chosen[:MAX_LISTED], 1)]
    answer = _lines(head, chosen, intent.kind) if chosen else head
    return AskResult(
        question=question,
        paper_id=paper_id,
        answer=answer,
        not_found=not chosen,
        grounded=True,
        grounded_reason="written by rule from the library's reference lists; nothing was generated",
        route="citations",
        confidence=1.0 if chosen else 0.0,
        sources=sources,
        graded=[],
        rewrites=[],
        llm_calls=0,
        tokens=0,
        seconds=time.perf_counter() - start,
        trace=["citations"],
        corrective_rounds=0,
        fallback_used=False,
        notes=[f"answered from the citation graph ({intent.kind.replace('_', ' ')})"],
    )
