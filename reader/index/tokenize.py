"""Tokens for the BM25 path: words (reader.text.words) with stop words dropped and
stemmed; Chinese (and other CJK) runs cut into overlapping character bigrams.

Bigrams need no dictionary and nothing downloaded at run time, and they match
Chinese words of any length as long as the query and the passage share them.
Mixed text ("BERT模型的注意力") yields both kinds of tokens.
"""

from __future__ import annotations

from functools import lru_cache

from reader.text.words import runs, stems


@lru_cache(maxsize=1)
def _stop_words() -> frozenset[str]:
    from bm25s.stopwords import STOPWORDS_EN

    return frozenset(STOPWORDS_EN)


def cjk_bigrams(run: str) -> list[str]:
    if len(run) == 1:
        return [run]
    return [run[i : i + 2] for i in range(len(run) - 1)]


def tokenize(text: str) -> list[str]:
    """The BM25 tokens of one text, in order (duplicates kept: they are term frequencies)."""
    stop = _stop_words()
    tokens: list[str] = []
    word_slots: list[int] = []
    for run, cjk in runs(text):
        if cjk:
            tokens.extend(cjk_bigrams(run))
        elif run not in stop:
            word_slots.append(len(tokens))
            tokens.append(run)
    for slot, stem in zip(word_slots, stems([tokens[i] for i in word_slots])):
        tokens[slot] = stem
    return tokens
