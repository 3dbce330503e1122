"""A result the paper gives for one named system, said of another: "REALM reduces error by 46% on
average" of a paper where 46% is what HMM-T gains over N-GRAMS.

    owners = NumberOwners.of(paper_sentences)
    owners.contradicting("REALM reduces extraction error by 46% on average.")
        -> ["the paper gives 46% for HMM-T, N-GRAMS, not for REALM: “HMM-T outperforms …”"]

A figure is a percentage or a decimal ("46%", "0.851"); a name is a word of two or more capitals
("REALM", "HMM-T", "SciBERT"). Each figure of the paper is owned by the names of the sentence that
gives it and of the sentence before (and by the parts of hyphenated names: "CRF-CI" is also
"CRF"). A claim that names systems the paper names and gives a figure
the paper gives only in sentences owned by other names, none of the claim's, is contradicted. A
figure given in a sentence without names (or in a table row with all of them) settles nothing.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

from reader.deepread.checked import quoted

NAME = re.compile(r"\b(?=[\w\-]*[A-Z][\w\-]*[A-Z])[A-Z][A-Za-z0-9]*(?:-[A-Za-z0-9]+)*\b")
# Not reader.audit.guards.numbers_at: that parser also reads integers, thousands, scales ("1.2k",
# "3.5x") and a version's "1.2", and gives values, so "0.85" and "0.850" would be one figure; here a
# figure is a percentage or a decimal, matched as written.
FIGURE = re.compile(r"(?<![\w.])\d+(?:\.\d+)?\s?%|(?<![\w.])\d*\.\d+(?![\w.%])")


def _figures(sentence: str) -> set[str]:
    """The sentence's figures; one that opens it is a section's number ("4.2 Entity Extraction")."""
    return {m.group(0).replace(" ", "") for m in FIGURE.finditer(sentence) if sentence[: m.start()].strip()}


def _names(sentence: str) -> set[str]:
    """The names of the sentence and their hyphenated parts ("CRF-CI" is also "CRF")."""
    found = set(NAME.findall(sentence))
    return found | {part for name in found for part in name.split("-") if NAME.fullmatch(part)}


@dataclass(frozen=True)
class NumberOwners:
    """figure -> the name sets of the sentences that give it, with the sentence; and every name."""

    owners: dict[str, tuple[tuple[frozenset[str], str], ...]]
    names: frozenset[str]

    @classmethod
    def of(cls, sentences: list[str]) -> NumberOwners:
        owners: dict[str, list[tuple[frozenset[str], str]]] = {}
        names: set[str] = set()
        previous: set[str] = set()
        for sentence in sentences:
            here = _names(sentence)
            names |= here
            for figure in _figures(sentence):
                owners.setdefault(figure, []).append((frozenset(here | previous), sentence))
            previous = here
        return cls({f: tuple(o) for f, o in owners.items()}, frozenset(names))

    def contradicting(self, sentence: str) -> list[str]:
        """The reason a claim gives a figure of other systems ([] when it names none the paper
        names, or some sentence giving the figure names one of them, or one names nothing)."""
        claimed = set(NAME.findall(sentence)) & self.names
        if not claimed:
            return []
        for figure in _figures(sentence):
            given = self.owners.get(figure, ())
            if given and all(names and not names & claimed for names, _ in given):
                others = sorted({name for _, said in given for name in NAME.findall(said)})
                return [
                    f"the paper gives {figure} for {', '.join(others[:4])}, not for "
                    f"{', '.join(sorted(claimed))}: {quoted(given[0][1])}"
                ]
        return []
