"""Focused evidence: for each claim, the sentences of its passages that decide it.

A 300-token passage holds the sentence a claim rests on among a dozen others, and a 1.5B
verifier shown three such passages for four claims compares each claim with everything at
once. Here every claim gets its own search, and inside the passages found the sentences
that share the most (rare) words with the claim are kept, each with its neighbour on either
side, in the paper's order. The verifier reads less and reads what matters.
"""

from __future__ import annotations

import math
import re
from collections import Counter
from dataclasses import dataclass

from reader.audit.split import split_sentences
from reader.audit.verify import EvidenceRef
from reader.index.tokenize import tokenize

PASSAGES_PER_CLAIM = 3  # hits searched per claim
SENTENCES_PER_CLAIM = 2  # best sentences kept per claim, each with its neighbours
NEIGHBOURS = 1  # sentences kept on either side of a best sentence
MAX_CHARS = 2400  # the whole focused evidence of a batch


@dataclass
class _Sentence:
    ref: int  # which passage
    index: int  # position in the passage
    text: str
    tokens: set[str]


_NUMBER = re.compile(r"\d+(?:[.,]\d+)*")


def _terms(text: str) -> set[str]:
    """Search tokens, with numbers whole ("80.0", not "80" and "0")."""
    return {t for t in tokenize(text) if not t.isdigit()} | set(_NUMBER.findall(text))


def _sentences(passages: list[EvidenceRef]) -> list[_Sentence]:
    out = []
    for ref, passage in enumerate(passages):
        for index, text in enumerate(split_sentences(passage.text)):
            out.append(_Sentence(ref, index, text, _terms(text)))
    return out


def _weights(sentences: list[_Sentence]) -> dict[str, float]:
    """Inverse sentence frequency: a word in every sentence decides nothing."""
    df = Counter(t for s in sentences for t in s.tokens)
    n = len(sentences) or 1
    return {t: math.log(1 + n / d) for t, d in df.items()}


def focus(claims: list[str], passages_per_claim: list[list[EvidenceRef]]) -> list[EvidenceRef]:
    """The focused evidence for a batch: per claim, its best sentences (with neighbours) from
    its own passages; excerpts of one passage are merged and kept in the passage's order."""
    passages: list[EvidenceRef] = []
    seen: dict[tuple, int] = {}
    claim_refs: list[list[int]] = []
    for found in passages_per_claim:
        refs = []
        for p in found:
            key = (p.chunk_id, p.page_start, p.text[:80])
            if key not in seen:
                seen[key] = len(passages)
                passages.append(p)
            refs.append(seen[key])
        claim_refs.append(refs)
    sentences = _sentences(passages)
    weights = _weights(sentences)
    keep: set[tuple[int, int]] = set()
    for claim, refs in zip(claims, claim_refs):
        wanted = _terms(claim)
        scored = sorted(
            (sum(weights[t] for t in s.tokens & wanted), -s.ref, -s.index, s)
            for s in sentences if s.ref in refs
        )
        best = [s for score, _, _, s in reversed(scored[-SENTENCES_PER_CLAIM:]) if score > 0]
        if not best and refs:  # no word in common: the opening of the claim's best passage
            keep.update((refs[0], i) for i in range(SENTENCES_PER_CLAIM + 1))
        for s in best:
            for i in range(s.index - NEIGHBOURS, s.index + NEIGHBOURS + 1):
                keep.add((s.ref, i))
    out: list[EvidenceRef] = []
    budget = MAX_CHARS
    for ref, passage in enumerate(passages):
        parts = [s.text for s in sentences if s.ref == ref and (s.ref, s.index) in keep]
        if not parts or budget <= 0:
            continue
        text = " … ".join(_runs(sentences, ref, keep))[:budget]
        budget -= len(text)
        out.append(EvidenceRef(passage.chunk_id, passage.page_start, passage.page_end, text))
    return out


def _runs(sentences: list[_Sentence], ref: int, keep: set[tuple[int, int]]) -> list[str]:
    """Kept sentences of one passage, consecutive ones joined, gaps marked by the caller."""
    runs: list[list[str]] = []
    last = None
    for s in sentences:
        if s.ref != ref or (ref, s.index) not in keep:
            continue
        if last is not None and s.index == last + 1:
            runs[-1].append(s.text)
        else:
            runs.append([s.text])
        last = s.index
    return [" ".join(run) for run in runs]
