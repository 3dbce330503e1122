"""Does a sentence name anything of the paper? "The paper provides a detailed evaluation of
the method" is true of every paper and says nothing; the audit would pass it.

A sentence is specific when it holds a number, a reference to a table, figure, section,
equation or appendix, a name the paper uses (an acronym, a mixed-case or hyphenated name such
as BiLSTM-CRF), or a word of the paper that is rare in English (Zipf frequency below
SPECIFIC_ZIPF, as wordfreq counts it). Text written without spaces is not judged.
The threshold was chosen on half A of eval/audit_dev.jsonl's faithful sentences and checked
on half B (benchmarks/bench_specific.py, docs/measurements/audit.md).
"""

from __future__ import annotations

import re

from reader.audit.guards import PaperFacts, norm_token, parse_numbers
from reader.text.words import CJK_RANGES, zipf_en

NOTHING_SPECIFIC = (
    "says nothing specific of the paper (no number, name, table, figure, section or term of it)"
)
SPECIFIC_ZIPF = 4.0
_REFERENCE = re.compile(
    r"\b(?:tables?|fig(?:ure)?s?\.?|sections?|sec\.|eq(?:uation)?s?\.?|appendix|appendices|§)\s*\(?[0-9A-Z]",
    re.I,
)
_NAME = re.compile(r"(?<![\w-])[A-Za-z][A-Za-z0-9]*(?:-[A-Za-z0-9]+)*(?![\w-])")
_CJK = re.compile(f"[{CJK_RANGES}]")


def _is_name(token: str) -> bool:
    """An acronym, a mixed-case or hyphenated name, or one with digits: BERT, SciBERT, GC-MS, T5."""
    rest = token[1:]
    return any(c.isupper() or c.isdigit() for c in rest) or ("-" in token and token[0].isupper())


def specific_terms(sentence: str, facts: PaperFacts, rare_zipf: float = SPECIFIC_ZIPF) -> list[str]:
    """What the sentence names of the paper: its numbers, references, names and rare words."""
    terms = [n.raw for n in parse_numbers(sentence)]
    terms += [m.group(0) for m in _REFERENCE.finditer(sentence)]
    for token in _NAME.findall(sentence):
        lower = token.lower()
        if _is_name(token) and norm_token(token) in facts.tokens:
            terms.append(token)
        elif len(token) >= 4 and f" {lower} " in facts.words_joined and zipf_en(lower) < rare_zipf:
            terms.append(token)
    return terms


def says_nothing_specific(sentence: str, facts: PaperFacts, rare_zipf: float = SPECIFIC_ZIPF) -> bool:
    if _CJK.search(sentence):
        return False
    return not specific_terms(sentence, facts, rare_zipf)
