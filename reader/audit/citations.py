"""Citation markers in generated sentences, resolved to the paper's reference entries, and the
attribution check.

    refs = ReferenceList.build(references=[(marker, text), ...], body=[passage text, ...])
    refs.resolve(sentence)      -> [Citation(marker, entries, missing)]
    refs.attribution(sentence)  -> ["[12]: cited for something the paper does not attribute to it …"]

A numbered marker ("[12]", "[3–5]", "[2, 7-9]") resolves to the entries numbered so in the
paper's reference list ("[12]" or "12." before the entry); an author–year citation
("Smith et al., 2020", "(Smith and Jones 2019)") to the entries that start with the surname
and carry the year. A marker that resolves to no entry is what the guards
(reader.audit.guards.check_sentence) already treat as unsupported.

The attribution check asks whether the paper itself cites the reference for what the sentence
says: it collects the paper's sentences that cite the reference (with the sentence before and
after) and looks for the claim's content words there. A claim sharing fewer than
MIN_SHARED content words (stems, function words left out) with every such context is reported
as "cited for something the paper does not attribute to it". Its false-flag rate on faithful
sentences is measured by benchmarks/attribution_check.py (docs/measurements/audit.md);
it is shown as a note beside the sentence, it does not make the sentence unsupported.
`unattributed` is the strict form that does: the claim shares not one content word with the
reference's own entry or with anything the paper says where it cites it (the deep read's audit
takes it as a guard reason).
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field

from reader.audit.guards import AUTHOR_YEAR, BRACKET_CITE, bracket_numbers, split_citations
from reader.text.split import split_sentences
from reader.text.words import stems, words

# a claim must share at least this many content stems with some context citing the reference
MIN_SHARED = 2
# a claim of at least this many content stems that shares none with the reference's entry and
# contexts is unsupported (the guard; docs/design/audit.md has its false-flag rate)
MIN_UNATTRIBUTED_WORDS = 3
# A claim that sets the paper against a cited work ("features not present in [1]", "unlike [3]",
# "outperforms [4]") needs the paper itself to compare or contrast where it cites the work.
CONTRAST_CLAIM = re.compile(
    r"\b(?:unlike|in contrast|contrary to|whereas|differs?|different from|not (?:present|found|available|"
    r"included|addressed|considered|covered|used)|absent|lacks?|lacking|fails? to|does not|do not|did not|"
    r"outperforms?|improves? (?:on|over|upon)|better than|superior to|beyond|more than|less than)\b",
    re.I,
)
CONTRAST_CONTEXT = re.compile(
    r"\b(?:unlike|in contrast|contrary|whereas|however|but|instead|rather than|differ\w*|not|no|never|"
    r"without|lack\w*|fail\w*|outperform\w*|better|worse|improv\w*|than|compar\w*|limit\w*|only|while|"
    r"although|beyond|extend\w*|superior|inferior|versus|vs)\b|n't\b",
    re.I,
)
# A claim that says what a cited work is ("[1], which describes a method for …", "[4] proposes …")
# needs some of those words in the work's entry or in the clause the paper cites it in: the
# paper's whole sentence is not enough ("… keeps the text …, which is what evidence search needs
# [1, 2]" cites [1] for what evidence search needs, not for keeping the text).
DESCRIBED = re.compile(
    r"(?P<marker>\[\d{1,3}(?:\s*[-–,;]\s*\d{1,3})*\])\s*,?\s*(?:which|that)?\s*"
    r"(?:describes?|proposes?|presents?|introduces?|develops?|provides?|discusses?|studies|focuses on|"
    r"addresses|explores?|is about|deals with)\b(?P<what>[^\[]+)",
    re.I,
)
MIN_DESCRIBED_WORDS = 2
# "(Downey et al., 2005), which introduced the concept of type checking using n-gram statistics and
# HMMs" of a paper that cites Downey et al. for redundancy-based assessment: what an author-year
# citation is said to have introduced, most of whose words the paper never says of it
INTRODUCED = re.compile(
    r"\b(?P<surname>[A-Z][\w'\-]+)(?:\s+et al\.?|\s+and\s+[A-Z][\w'\-]+)?,?\s*\(?(?P<year>\d{4})[a-z]?\)?\)?,?\s*"
    r"(?:which|who)\s+(?:first\s+)?(?:introduced|proposed|developed|pioneered)\b(?P<what>[^.;()]+)"
)
MIN_INTRODUCED_SHARE = 0.5
MIN_INTRODUCED_WORDS = 4
_CLAUSE_END = re.compile(r"[,;:]\s")
_ENTRY_NUMBER = re.compile(r"^\s*\[?(\d{1,3})[\].]?\s*$")
_NOT_NAMES = {"in", "table", "figure", "section", "since", "until", "from", "fig", "eq", "see"}
FUNCTION_WORDS = set(
    """
a about above after again against all also an and any are as at be because been before being below
between both but by can could did do does doing down during each few for from further had has have
having here how however if in into is it its itself more most much must no nor not of off on once only
or other our out over own same shall should so some such than that the their them then there these they
this those through thus to too under until up upon very via was we were what when where whether which
while who whom why will with within without would yet you your paper papers work works study studies
authors author propose proposed proposes show shows shown use used uses using based approach method
methods result results et al also previous prior earlier recent recently cite cited cites reference
""".split()
)


def content_stems(text: str) -> set[str]:
    """The stems of the text's content words: words (reader.text.words) of 3 or more characters
    that begin with a letter and are not function words."""
    return set(stems([w for w in words(text) if len(w) >= 3 and w[0].isalpha() and w not in FUNCTION_WORDS]))


@dataclass
class Citation:
    marker: str  # as written in the sentence
    entries: list[tuple[str, str]] = field(default_factory=list)  # (entry's marker or "", entry text)
    missing: list[str] = field(default_factory=list)  # numbers or names with no entry

    @property
    def resolved(self) -> bool:
        return bool(self.entries) and not self.missing


@dataclass
class ReferenceList:
    numbered: dict[int, tuple[str, str]]
    unnumbered: list[str]  # author-year entries' text
    contexts: dict[int, list[str]]  # reference number -> the paper's sentences citing it (with neighbours)
    sentences: list[str]  # the paper's body sentences (for author-year contexts)
    clauses: dict[int, list[str]] = field(default_factory=dict)  # number -> the clauses citing it

    @classmethod
    def build(cls, references: list[tuple[str, str]], body: list[str]) -> ReferenceList:
        numbered: dict[int, tuple[str, str]] = {}
        unnumbered: list[str] = []
        for marker, text in references:
            m = _ENTRY_NUMBER.match(marker or "")
            if m:
                numbered.setdefault(int(m.group(1)), (marker.strip(), " ".join(text.split())))
            else:
                unnumbered.append(" ".join(text.split()))
        sentences: list[str] = []
        for passage in body:
            sentences.extend(split_sentences(" ".join(passage.split())))
        contexts: dict[int, list[str]] = {}
        for i, sentence in enumerate(sentences):
            numbers: set[int] = set()
            for m in BRACKET_CITE.finditer(sentence):
                numbers |= bracket_numbers(m.group(1))
            if numbers:
                window = " ".join(sentences[max(0, i - 1) : i + 2])
                for n in numbers:
                    contexts.setdefault(n, []).append(window)
        clauses: dict[int, list[str]] = {}
        for sentence in sentences:
            for m in BRACKET_CITE.finditer(sentence):
                for n in bracket_numbers(m.group(1)):
                    clauses.setdefault(n, []).append(cited_clause(sentence, m.start(), m.end()))
        return cls(numbered, unnumbered, contexts, sentences, clauses)

    # ------------------------------------------------------------ resolving

    def _author_year_entries(self, surname: str, year: str, raw: str = "") -> list[str]:
        """The entries that name the surname near their start and hold the year, best first: the
        year's letter where the citation has one ("Mikolov et al. (2013a)" is "… 2013a. Efficient
        estimation …"), then the surname earliest (its first author before an entry where it is
        the last: "Andrea Frome, …, and Tomas Mikolov. 2013")."""
        name = _surname_word(surname)
        lettered = re.search(rf"{year}[a-z]\b", raw)
        found = [
            (text, at.start())
            for text in self.unnumbered + [t for _, t in self.numbered.values()]
            if (at := name.search(text[:120].lower())) and year in text
        ]
        found.sort(key=lambda f: (bool(lettered) and lettered.group(0) not in f[0], f[1]))
        return [text for text, _ in found]

    def resolve(self, sentence: str) -> list[Citation]:
        author_years, brackets, _ = split_citations(sentence)
        found: list[Citation] = []
        for marker in brackets:
            numbers = sorted(bracket_numbers(marker[1:-1]))
            citation = Citation(marker)
            for n in numbers:
                if n in self.numbered:
                    citation.entries.append(self.numbered[n])
                else:
                    citation.missing.append(str(n))
            found.append(citation)
        for raw, surname, year in author_years:
            if _not_a_citation(raw, surname):
                continue
            shown = _shown_marker(raw)
            entries = self._author_year_entries(surname, year, raw)
            found.append(Citation(shown, [("", t) for t in entries[:1]], [] if entries else [shown]))
        return found

    # ------------------------------------------------------------ attribution

    def _contexts_for(self, sentence: str) -> list[tuple[str, list[str], str]]:
        """(marker, the paper's contexts citing it, its entry's text) for each resolvable marker
        of the sentence."""
        author_years, brackets, _ = split_citations(sentence)
        out: list[tuple[str, list[str], str]] = []
        for marker in brackets:
            for n in sorted(bracket_numbers(marker[1:-1])):
                if n in self.numbered:
                    out.append((f"[{n}]", self.contexts.get(n, []), self.numbered[n][1]))
        for raw, surname, year in author_years:
            entries = [] if _not_a_citation(raw, surname) else self._author_year_entries(surname, year, raw)
            if not entries:
                continue
            out.append((_shown_marker(raw), self._naming(surname, year), entries[0]))
        return out

    def _naming(self, surname: str, year: str, skip: str | None = None) -> list[str]:
        """The paper's sentences that name the surname and the year (reference entries aside, and
        `skip`), each with the sentence before and after it."""
        name = _surname_word(surname)
        return [
            " ".join(self.sentences[max(0, i - 1) : i + 2])
            for i, s in enumerate(self.sentences)
            if name.search(s.lower()) and year in s and not _looks_like_entry(s) and s != skip
        ]

    def attribution(self, sentence: str, *, exclude: str | None = None) -> list[str]:
        """Notes for the markers the paper never cites near the claim's content ([] when none).
        `exclude` leaves one sentence of the paper out of the contexts (for measuring)."""
        _, _, rest = split_citations(sentence)
        claim = content_stems(rest)
        if not claim:
            return []
        need = min(MIN_SHARED, len(claim))
        notes = []
        for marker, contexts, _ in self._contexts_for(sentence):
            if exclude is not None:
                contexts = [c.replace(exclude, " ") for c in contexts]
            best = max((len(claim & content_stems(c)) for c in contexts), default=0)
            if best < need:
                where = (
                    "the paper cites it nowhere in its text"
                    if not contexts
                    else f"where the paper cites it, at most {best} of the claim's content words appear"
                )
                notes.append(f"{marker}: cited for something the paper does not attribute to it ({where})")
        return notes

    def unattributed(self, sentence: str, *, exclude: str | None = None) -> list[str]:
        """Guard reasons for the markers the claim shares not one content word with: neither
        with the paper's sentences citing the reference (and their neighbours) nor with the
        reference's own entry. Claims of fewer than MIN_UNATTRIBUTED_WORDS content words are
        not judged. `exclude` as in `attribution`."""
        _, _, rest = split_citations(sentence)
        claim = content_stems(rest)
        if len(claim) < MIN_UNATTRIBUTED_WORDS:
            return []
        reasons = []
        sets_against = bool(CONTRAST_CLAIM.search(rest))
        for marker, contexts, entry in self._contexts_for(sentence):
            if exclude is not None:
                contexts = [c.replace(exclude, " ") for c in contexts]
            if not any(claim & content_stems(text) for text in contexts + [entry]):
                reasons.append(
                    f"citation {marker}: the claim shares no word with the reference's entry or "
                    "with what the paper says where it cites it"
                )
            elif sets_against and not any(CONTRAST_CONTEXT.search(c) for c in contexts):
                reasons.append(
                    f"citation {marker}: the claim sets the paper against it, but nowhere the paper "
                    "cites it does the paper compare or contrast"
                )
        if not reasons:
            reasons += self.misdescribed(sentence, exclude=exclude)
        return reasons

    def misdescribed(self, sentence: str, *, exclude: str | None = None) -> list[str]:
        """Guard reasons for a numbered marker the claim says describes something (DESCRIBED) that
        shares no content word with the marker's entries or the clauses the paper cites them in,
        and for an author-year citation said to have introduced something (INTRODUCED) of whose
        words fewer than MIN_INTRODUCED_SHARE are in its entry or the paper's sentences naming it
        (with their neighbours)."""
        reasons = self._introduced_elsewhere(sentence, exclude)
        for m in DESCRIBED.finditer(sentence):
            what = content_stems(m.group("what"))
            numbers = [n for n in bracket_numbers(m.group("marker")[1:-1]) if n in self.numbered]
            if len(what) < MIN_DESCRIBED_WORDS or not numbers:
                continue
            said = [self.numbered[n][1] for n in numbers] + [
                c for n in numbers for c in self.clauses.get(n, []) if exclude is None or c not in exclude
            ]
            if not any(what & content_stems(text) for text in said):
                reasons.append(
                    f"citation {m.group('marker')}: the claim says what it describes, but neither its "
                    "entry nor the clauses the paper cites it in say so"
                )
        return reasons

    def _introduced_elsewhere(self, sentence: str, exclude: str | None) -> list[str]:
        reasons = []
        for m in INTRODUCED.finditer(sentence):
            what = content_stems(m.group("what"))
            entries = self._author_year_entries(m.group("surname"), m.group("year"), m.group(0))
            if len(what) < MIN_INTRODUCED_WORDS or not entries:
                continue
            said = entries[:1] + self._naming(m.group("surname"), m.group("year"), skip=exclude)
            known = set().union(*(content_stems(text) for text in said))
            if len(what & known) < MIN_INTRODUCED_SHARE * len(what):
                reasons.append(
                    f"citation {m.group('surname')} ({m.group('year')}): the claim says what it introduced, but "
                    "most of that is neither in its entry nor where the paper cites it"
                )
        return reasons


def _surname_word(surname: str) -> re.Pattern:
    """The surname as a word of lower-cased text: "Yan et al., 2021" is not "Yang Deng, …, 2021"."""
    return re.compile(rf"(?<!\w){re.escape(surname.lower())}(?!\w)")


def _shown_marker(raw: str) -> str:
    """An author-year citation as the note names it: "(Smith et al., 2020)" and "Frome et al.,
    2013)" (the end of a parenthesis of several) without their brackets, "Mikolov et al. (2013a)"
    whole."""
    shown = raw.strip(" ,;()")
    return shown + ")" if shown.count("(") > shown.count(")") else shown


def cited_clause(sentence: str, start: int, end: int) -> str:
    """The clause of the sentence around the marker at [start, end): from the comma, semicolon or
    colon before it to the one after it."""
    before = [m.end() for m in _CLAUSE_END.finditer(sentence, 0, start)]
    after = _CLAUSE_END.search(sentence, end)
    return sentence[before[-1] if before else 0 : after.start() if after else len(sentence)]


def _not_a_citation(raw: str, surname: str) -> bool:
    """ "ACE2005", "AGS 2000", "In 2019": a name glued to a year, an acronym, or an ordinary word."""
    return surname.lower() in _NOT_NAMES or surname.isupper() or bool(re.search(r"[A-Za-z]\d", raw))


def _looks_like_entry(sentence: str) -> bool:
    """A reference-list line that slipped into the body text: starts with a surname and initials."""
    return bool(re.match(r"^[A-Z][\w'’\-]+,\s+[A-Z]\.", sentence))


def reference_list(session, paper_id: str) -> ReferenceList:
    """The paper's reference entries and body passages from the database."""
    from sqlalchemy import select

    from reader.store.tables import Chunk, Reference

    references = session.execute(
        select(Reference.marker, Reference.text)
        .where(Reference.paper_id == paper_id)
        .order_by(Reference.ordinal)
    ).all()
    chunks = session.execute(
        select(Chunk.section, Chunk.text).where(Chunk.paper_id == paper_id).order_by(Chunk.ordinal)
    ).all()
    return references_from(references, chunks)


def references_from(references: list[tuple[str, str]], chunks: list[tuple[str, str]]) -> ReferenceList:
    """The ReferenceList of a paper's (marker, entry) references and (section, text) passages:
    the passages of its reference section are not body."""
    body = [
        text
        for section, text in chunks
        if not re.search(r"referenc|bibliograph|literature cited|参考文献", section or "", re.I)
    ]
    return ReferenceList.build([(m, t) for m, t in references], body)


def markers_in(sentence: str) -> bool:
    return bool(BRACKET_CITE.search(sentence) or AUTHOR_YEAR.search(sentence))


@dataclass
class CitedReference:
    """One marker used in a text, what it resolves to, and the attribution note (if any)."""

    marker: str
    entries: list[str]  # the reference entries' text
    missing: list[str]
    notes: list[str]
    checks: list[str] = field(default_factory=list)  # an outside lookup's word on each entry (export)
    # the citation card (`with_library`): the cited papers the library holds ({"paper_id", "title",
    # "abstract"}), and for an entry it does not, the identifiers to import it by (DOI, arXiv id)
    library: list[dict] = field(default_factory=list)
    add: list[str] = field(default_factory=list)

    def to_json(self) -> dict:
        return {
            "marker": self.marker,
            "entries": self.entries,
            "missing": self.missing,
            "notes": self.notes,
            "checks": self.checks,
            "library": self.library,
            "add": self.add,
        }


def cited_references(refs: ReferenceList, sentences: list[str]) -> list[CitedReference]:
    """The markers of these sentences in order of first use, each with its entries and notes."""
    seen: dict[str, CitedReference] = {}
    for sentence in sentences:
        if not markers_in(sentence):
            continue
        notes = refs.attribution(sentence)
        for citation in refs.resolve(sentence):
            cited = seen.get(citation.marker)
            if cited is None:
                cited = seen[citation.marker] = CitedReference(
                    citation.marker, [text for _, text in citation.entries], list(citation.missing), []
                )
            for note in notes:
                if note not in cited.notes and _note_for(note, citation):
                    cited.notes.append(note)
    return list(seen.values())


def _note_for(note: str, citation: Citation) -> bool:
    head = note.split(":", 1)[0]
    if head.startswith("["):
        return (
            int(head[1:-1]) in bracket_numbers(citation.marker[1:-1])
            if citation.marker.startswith("[")
            else False
        )
    return head == citation.marker


def with_library(session, paper_id: str, citations: list[CitedReference]) -> list[CitedReference]:
    """Each cited reference's card: the library paper its entries name (the citation graph,
    reader.ingest.links), with its title and abstract; for an entry the library does not hold, its
    DOI or arXiv id, to import it by."""
    from sqlalchemy import select

    from reader.ingest.identifiers import arxiv_id
    from reader.ingest.links import cites, ensure_linked
    from reader.ingest.pages import find_doi
    from reader.store.tables import Paper

    if not citations:
        return citations
    ensure_linked(session)
    by_text = {" ".join(e.text.split()): e for e in cites(session, paper_id)}
    for cited in citations:
        for text in cited.entries:
            entry = by_text.get(" ".join(text.split()))
            if entry is not None and entry.cited_id:
                abstract = session.scalar(select(Paper.abstract).where(Paper.id == entry.cited_id)) or ""
                cited.library.append(
                    {"paper_id": entry.cited_id, "title": entry.cited_title, "abstract": abstract}
                )
                continue
            ident = find_doi([text]) or (f"arXiv:{arxiv_id(text)}" if arxiv_id(text) else "")
            if ident:
                cited.add.append(ident)
    return citations
