"""Tokens for the BM25 path: English words lower-cased, stop words dropped and
stemmed; Chinese (and other CJK) runs cut into overlapping character bigrams.

Bigrams need no dictionary and nothing downloaded at run time, and they match
Chinese words of any length as long as the query and the passage share them.
Mixed text ("BERT模型的注意力") yields both kinds of tokens.
"""

from __future__ import annotations

import re
import unicodedata
from functools import lru_cache

# CJK ideographs (+ extension A, compatibility), kana and hangul: scripts written without spaces.
_CJK = "\u3040-\u30ff\u3400-\u4dbf\u4e00-\u9fff\uf900-\ufaff\uac00-\ud7af"
_TOKEN_RE = re.compile(rf"(?P<cjk>[{_CJK}]+)|(?P<word>[^\W_{_CJK}]+)")


@lru_cache(maxsize=1)
def _stop_words() -> frozenset[str]:
    from bm25s.stopwords import STOPWORDS_EN

    return frozenset(STOPWORDS_EN)


@lru_cache(maxsize=1)
def _stemmer():
    import Stemmer

    return Stemmer.Stemmer("english")


def cjk_bigrams(run: str) -> list[str]:
    if len(run) == 1:
        return [run]
    return [run[i : i + 2] for i in range(len(run) - 1)]


def tokenize(text: str) -> list[str]:
    """The BM25 tokens of one text, in order (duplicates kept: they are term frequencies)."""
    text = unicodedata.normalize("NFKC", text).lower()
    stop = _stop_words()
    tokens: list[str] = []
    words: list[str] = []
    word_slots: list[int] = []
    for match in _TOKEN_RE.finditer(text):
        cjk = match.group("cjk")
        if cjk:
            tokens.extend(cjk_bigrams(cjk))
            continue
        word = match.group("word")
        if word in stop:
            continue
        word_slots.append(len(tokens))
        tokens.append(word)
        words.append(word)
    if words:
        for slot, stem in zip(word_slots, _stemmer().stemWords(words)):
            tokens[slot] = stem
    return tokens
