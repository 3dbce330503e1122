"""Focused evidence: for each claim, the sentences of its passages that decide it.

A 300-token passage holds the sentence a claim rests on among a dozen others, and a 1.5B
verifier shown three such passages for four claims compares each claim with everything at
once. Here every claim gets its own search, and inside the passages found the sentences
that share the most (rare) words with the claim are kept, each with its neighbour on either
side, in the paper's order. The verifier reads less and reads what matters: the audit shows
it each claim with its own excerpts under it (`excerpts`, bounded by `claim_evidence`);
`focus`, one union of a batch's best sentences, serves the extraction table and the benchmarks.
"""

from __future__ import annotations

import math
import re
from collections import Counter

from reader.audit.verify import EvidenceRef
from reader.index.tokenize import tokenize
from reader.text.split import join_selected, split_sentences

SENTENCES_PER_CLAIM = 2  # best sentences kept per claim, each with its neighbours
NEIGHBOURS = 1  # sentences kept on either side of a best sentence
MAX_CHARS = 2400  # the whole focused evidence of a batch

_NUMBER = re.compile(r"\d+(?:[.,]\d+)*")


def _terms(text: str) -> set[str]:
    """Search tokens, with numbers whole ("80.0", not "80" and "0")."""
    return {t for t in tokenize(text) if not t.isdigit()} | set(_NUMBER.findall(text))


def _unique_passages(
    passages_per_claim: list[list[EvidenceRef]],
) -> tuple[list[EvidenceRef], list[list[int]]]:
    """The distinct passages, and for each claim the positions of its own among them."""
    passages: list[EvidenceRef] = []
    position: dict[tuple, int] = {}
    claim_refs = []
    for found in passages_per_claim:
        refs = []
        for p in found:
            key = (p.chunk_id, p.page_start, p.text[:80])
            if key not in position:
                position[key] = len(passages)
                passages.append(p)
            refs.append(position[key])
        claim_refs.append(refs)
    return passages, claim_refs


def focus(claims: list[str], passages_per_claim: list[list[EvidenceRef]]) -> list[EvidenceRef]:
    """The focused evidence for a batch: per claim, its best sentences (with neighbours) from
    its own passages; excerpts of one passage are merged and kept in the passage's order."""
    passages, claim_refs = _unique_passages(passages_per_claim)
    sentences = [split_sentences(p.text) for p in passages]
    terms = [[_terms(s) for s in passage] for passage in sentences]
    df = Counter(t for passage in terms for sentence in passage for t in sentence)
    n = sum(len(passage) for passage in terms) or 1
    weight = {t: math.log(1 + n / d) for t, d in df.items()}  # a word in every sentence decides nothing
    keep: set[tuple[int, int]] = set()  # (passage, sentence index)
    for claim, refs in zip(claims, claim_refs):
        wanted = _terms(claim)
        scored = sorted(
            (sum(weight[t] for t in terms[ref][i] & wanted), -ref, -i)
            for ref in set(refs)
            for i in range(len(sentences[ref]))
        )
        best = [(-ref, -i) for score, ref, i in scored[-SENTENCES_PER_CLAIM:] if score > 0]
        if not best and refs:  # no word in common: the opening of the claim's best passage
            keep.update((refs[0], i) for i in range(SENTENCES_PER_CLAIM + 1))
        keep.update((ref, i + d) for ref, i in best for d in range(-NEIGHBOURS, NEIGHBOURS + 1))
    out: list[EvidenceRef] = []
    budget = MAX_CHARS
    for ref, passage in enumerate(passages):
        kept = [i + 1 for i in range(len(sentences[ref])) if (ref, i) in keep]
        if not kept or budget <= 0:
            continue
        text = join_selected(sentences[ref], kept)[:budget]
        budget -= len(text)
        out.append(EvidenceRef(passage.chunk_id, passage.page_start, passage.page_end, text))
    return out


EXCERPT_SENTENCES = 1  # best sentences per excerpt for the claim checker, each with its neighbours
EXCERPT_CHARS = 600  # one passage's excerpt for the claim checker: about 130 tokens


def excerpts(
    claim: str,
    passages: list[EvidenceRef],
    per_passage: int = EXCERPT_SENTENCES,
    max_chars: int = EXCERPT_CHARS,
) -> list[EvidenceRef]:
    """The claim's own evidence, one excerpt per passage: in each passage the `per_passage`
    sentences that share the most rare words with the claim, each with its neighbours, in the
    passage's order (two adjacent sentences a claim fuses are the best one and its neighbour). The claim checker scores every excerpt on its own and keeps the best
    (as MiniCheck and SummaC do), so a claim never loses its passage to a neighbour's."""
    sentences = [split_sentences(p.text) for p in passages]
    terms = [[_terms(s) for s in passage] for passage in sentences]
    df = Counter(t for passage in terms for sentence in passage for t in sentence)
    n = sum(len(passage) for passage in terms) or 1
    weight = {t: math.log(1 + n / d) for t, d in df.items()}
    wanted = _terms(claim)
    out: list[EvidenceRef] = []
    for passage, its_sentences, its_terms in zip(passages, sentences, terms):
        if not its_sentences:
            continue
        scored = sorted(
            ((sum(weight[t] for t in s & wanted), -i) for i, s in enumerate(its_terms)), reverse=True
        )
        best = [-i for score, i in scored[:per_passage] if score > 0] or [0]
        text = ""
        for n_best in range(len(best), 0, -1):  # fewer best sentences until the excerpt fits
            keep = sorted(
                {
                    i + d
                    for i in best[:n_best]
                    for d in range(-NEIGHBOURS, NEIGHBOURS + 1)
                    if 0 <= i + d < len(its_sentences)
                }
            )
            text = join_selected(its_sentences, [i + 1 for i in keep])
            if len(text) <= max_chars:
                break
        if len(text) > max_chars:  # the best sentence alone, then its passage cut short
            text = its_sentences[best[0]][:max_chars]
        out.append(EvidenceRef(passage.chunk_id, passage.page_start, passage.page_end, text))
    return out


def claim_evidence(found: list[EvidenceRef], claim: str = "", max_chars: int = 700) -> list[EvidenceRef]:
    """What the verifier is shown under one claim: its excerpts in the order given (the best
    first), each kept while all fit in `max_chars` (the verifier's
    Capabilities.claim_evidence_chars); the first always, made to fit around the `claim`'s best
    sentence (as `excerpts` does), or cut. A claim of a batch no longer shares one budget with the
    others, so a late claim keeps its quote."""
    out: list[EvidenceRef] = []
    budget = max_chars
    for e in found:
        if out and len(e.text) > budget:
            continue
        text = (
            e.text if len(e.text) <= budget or not claim else excerpts(claim, [e], max_chars=budget)[0].text
        )
        text = text[:budget]
        out.append(EvidenceRef(e.chunk_id, e.page_start, e.page_end, text))
        budget -= len(text)
        if budget <= 0:
            break
    return out


def best_first(claim: str, found: list[EvidenceRef]) -> list[EvidenceRef]:
    """The claim's excerpts, the one whose best sentence shares the most rare words with the
    claim first (ties keep the search's order). The search ranks whole passages, and the one it
    puts first is often not the one holding the claim's sentence: the page opens the first."""
    sentences = [split_sentences(e.text) for e in found]
    terms = [[_terms(s) for s in its] for its in sentences]
    df = Counter(t for its in terms for sentence in its for t in sentence)
    n = sum(len(its) for its in terms) or 1
    weight = {t: math.log(1 + n / d) for t, d in df.items()}
    wanted = _terms(claim)

    def score(its_terms: list[set[str]]) -> float:
        return max((sum(weight[t] for t in s & wanted) for s in its_terms), default=0.0)

    order = sorted(range(len(found)), key=lambda i: (-score(terms[i]), i))
    return [found[i] for i in order]
