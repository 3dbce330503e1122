"""Which rows and columns of a paper's table a sentence names (for reader/audit/table_checks.py).

A header names itself in a sentence by its words, compared as lower-case words with a plural's
"s" dropped ("titles" names "Title"): the whole header or any part of it (a multi-level header
"Citation prediction / Co-Cite / nDCG" has three parts), without marks, citations and years,
with and without what stands in parentheses, each of its comma-separated pieces ("Trie
dictionary based conversion, OpenCC" is named by "OpenCC"), abbreviations spelt out ("P", "R",
"prec.", "Acc.", "bib."; "overall" for "Total"; "five" for "5"), an acronym by the initials of the words it stands for ("SA" by "sentence
accuracy"), a row of "Ours" or "proposed" by "the proposed model", "the authors' model" and the
like, by a word that only that header of its kind has in the table and that names a thing (a
word with digits, a hyphen or an inner capital, or one rarer than Zipf 4.5: "multitask",
"2kenize", "co-read", not "with"), and by what the table's caption spells it out as ("Fleiss
kappa (F-κ)", "CLS: classification"). "The authors" names nothing. A part named only inside the longer name of another part does not count ("LM
adaptation" inside "AM+LM adaptation").
"""

from __future__ import annotations

import re
import unicodedata
from dataclasses import dataclass, field

from reader.text.grid import SEPARATOR, Cell, Table
from reader.text.words import zipf_en

_MARKS = re.compile(r"[*†‡§¶#♠♣♥♦✓✗]+|\[[\d,\s–-]+\]|\((?:19|20)\d\d[a-z]?\)")
_PARENS = re.compile(r"\([^)]*\)")
_WORDS = re.compile(r"[a-z0-9]+")
_ABBREVIATIONS = {
    "prec": "precision",
    "rec": "recall",
    "acc": "accuracy",
    "avg": "average",
    "p": "precision",
    "r": "recall",
    "bib": "bibliography",
}
_NUMBER_WORDS = {
    w: str(i) for i, w in enumerate("zero one two three four five six seven eight nine ten".split())
}
# a header a sentence names in other words ("overall" for a "Total" column)
_SAME = {"total": {"overall"}, "average": {"mean", "overall"}, "all": {"overall"}, "mean": {"average"}}
_OURS = re.compile(
    r"\b(?:ours|our\s+(?:model|method|system|approach)|the\s+proposed(?:\s+\w+)?|the\s+authors[’']?\s+"
    r"(?:model|method|system|approach)|their\s+(?:model|method|system|approach))\b",
    re.I,
)
_THE_AUTHORS = re.compile(r"\b(?:the|its|their|these|both)\s+authors?(?:[’']s?)?", re.I)
_OURS_LABEL = re.compile(r"\b(?:ours|our|proposed)\b", re.I)
_ACRONYM = re.compile(r"^[A-Z]{2,5}$")
# a word only one header has names it when it is rarer than this (wordfreq's Zipf scale)
OWN_WORD_ZIPF = 4.5


def words(text: str) -> str:
    """Lower-case words joined by single spaces (ligatures as their letters), a plural's "s"
    dropped."""
    tokens = [_NUMBER_WORDS.get(w, w) for w in _WORDS.findall(unicodedata.normalize("NFKC", text).lower())]
    return " ".join(w[:-1] if len(w) > 3 and w.endswith("s") and not w.endswith("ss") else w for w in tokens)


def label_forms(label: str) -> set[str]:
    """How a sentence may name a header part (see the module's docstring)."""
    base = _MARKS.sub(" ", label)
    pieces = [base, _PARENS.sub(" ", base)] + re.split(r"[,;]", base)
    forms = {words(p) for p in pieces}
    for form in list(forms):
        forms.add(" ".join(_ABBREVIATIONS.get(w, w) for w in form.split()))
    for form in list(forms):
        forms |= _SAME.get(form, set())
    if _OURS_LABEL.search(label):
        forms.add("ours")
    return {f for f in forms if len(f) >= 2 and not f.replace(" ", "").isdigit()}


def _names_a_thing(token: str) -> bool:
    if len(token) < 3:
        return False
    if "-" in token or any(c.isdigit() for c in token) or any(c.isupper() for c in token[1:]):
        return True
    return len(token) >= 4 and zipf_en(token.lower()) < OWN_WORD_ZIPF


def own_words(parts: list[str]) -> dict[str, set[str]]:
    """part -> the words that name a thing and that only it has among `parts` (a hyphenated word
    whole too: "co-read")."""
    tokens = {
        p: {w for w in re.findall(r"[A-Za-z0-9]+(?:-[A-Za-z0-9]+)*", _MARKS.sub(" ", p)) if _names_a_thing(w)}
        for p in parts
    }
    out = {}
    for p, own in tokens.items():
        others = {words(w) for q, ws in tokens.items() if q != p for w in ws}
        out[p] = {words(w) for w in own} - others
    return out


def _parts(header: str) -> list[str]:
    return [p for p in header.split(SEPARATOR) if p.strip()]


@dataclass
class Sentence:
    """A sentence as the header matching reads it."""

    text: str
    words: str  # " w1 w2 … " (see words())
    ours: bool  # it speaks of the paper's own method ("the proposed model")

    @classmethod
    def of(cls, text: str) -> Sentence:
        # "the authors report" names no row called "author"
        return cls(text, f" {words(_THE_AUTHORS.sub(' ', text))} ", bool(_OURS.search(text)))

    def spans(self, form: str) -> list[tuple[int, int]]:
        out, at = [], self.words.find(f" {form} ")
        while at >= 0:
            out.append((at, at + len(form) + 2))
            at = self.words.find(f" {form} ", at + 1)
        return out

    def initials(self, acronym: str) -> list[tuple[int, int]]:
        """Where consecutive words start with the acronym's letters ("sentence accuracy": SA)."""
        letters = acronym.lower()
        tokens = self.words.split()
        starts, pos = [], 1
        for t in tokens:
            starts.append(pos)
            pos += len(t) + 1
        out = []
        for i in range(len(tokens) - len(letters) + 1):
            window = tokens[i : i + len(letters)]
            if all(len(t) > 1 for t in window) and "".join(t[0] for t in window) == letters:
                out.append((starts[i] - 1, starts[i + len(letters) - 1] + len(window[-1]) + 1))
        return out


@dataclass
class TableIndex:
    """A table's cells and how each header part may be named."""

    table: Table
    cells: list[Cell]
    numbers: list[Cell]  # the cells that hold a number
    forms: dict[str, set[str]] = field(default_factory=dict)  # header part -> its forms

    def cell(self, row: str, col: str) -> Cell | None:
        return next((c for c in self.numbers if c.row_header == row and c.col_header == col), None)

    def named(self, s: Sentence, kind: str) -> set[str]:
        """The row (kind "row_header") or column ("col_header") headers the sentence names most:
        those with the most parts named; set() for none."""
        headers = sorted({getattr(c, kind) for c in self.numbers})
        found: list[tuple[int, int, str]] = []
        for header in headers:
            for part in _parts(header):
                forms = self.forms.get(part, set())
                for form in forms:
                    found += [(a, b, part) for a, b in s.spans(form)]
                if _ACRONYM.match(part.strip()):
                    found += [(a, b, part) for a, b in s.initials(part.strip())]
                if s.ours and "ours" in forms:
                    found.append((-1, -1, part))
        named_parts = {
            part
            for a, b, part in found
            if not any(a2 <= a and b <= b2 and b2 - a2 > b - a for a2, b2, p2 in found if p2 != part)
        }
        best, out = 0, set()
        for header in headers:
            n = sum(1 for part in _parts(header) if part in named_parts)
            if n > best:
                best, out = n, {header}
            elif n == best and n:
                out.add(header)
        return out


_SPELT_BEFORE = re.compile(r"((?:[A-Za-z][\w-]*\s+){0,2}[A-Za-z][\w-]*)\s*\(([^()]{1,12})\)")
_SPELT_AFTER = re.compile(r"(?:^|[\s,;.(])([^\s,;:()]{1,12}):\s+([A-Za-z][\w -]{2,40}?)(?=[,;.)]|$)")


def caption_names(caption: str) -> dict[str, str]:
    """Abbreviations the caption spells out: "Fleiss kappa (F-κ)", "CLS: classification" ->
    {"f-κ": "Fleiss kappa", "cls": "classification"}."""
    out = {}
    for m in _SPELT_BEFORE.finditer(caption):
        out.setdefault(m.group(2).strip().lower(), m.group(1))
    for m in _SPELT_AFTER.finditer(caption):
        out.setdefault(m.group(1).strip().lower(), m.group(2))
    return out


def index_tables(tables: list[Table]) -> list[TableIndex]:
    out = []
    for table in tables:
        cells = table.cells()
        index = TableIndex(table, cells, [c for c in cells if c.number is not None])
        spelt = caption_names(table.caption)
        for kind in ("row_header", "col_header"):
            parts = sorted({p for c in cells for p in _parts(getattr(c, kind))})
            for part, own in own_words(parts).items():
                long = spelt.get(part.strip().lower())
                extra = label_forms(long) if long else set()
                index.forms[part] = index.forms.get(part, set()) | label_forms(part) | own | extra
        out.append(index)
    return out
