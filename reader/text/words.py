"""Words: the one word tokenizer every part of reader shares.

A word is a run of letters and digits, lower-cased after NFKC normalisation (so full-width
"ＢＥＲＴ" is "bert"); anything else, hyphens and underscores included, separates words. Scripts
written without spaces (CJK ideographs, kana, hangul) make no words: `runs` gives their runs
apart, for a caller that cuts them into bigrams (reader.index.tokenize). `stems` is the English
Snowball stemmer the search and the attribution check both use.
"""

from __future__ import annotations

import re
import unicodedata
from collections.abc import Sequence
from functools import lru_cache

# CJK ideographs (+ extension A, compatibility), kana and hangul: scripts written without spaces.
CJK_RANGES = "\u3040-\u30ff\u3400-\u4dbf\u4e00-\u9fff\uf900-\ufaff\uac00-\ud7af"
_RUN = re.compile(rf"(?P<cjk>[{CJK_RANGES}]+)|(?P<word>[^\W_{CJK_RANGES}]+)")


def runs(text: str) -> list[tuple[str, bool]]:
    """The text's words and CJK runs, lower-cased, in order: (run, is_cjk)."""
    text = unicodedata.normalize("NFKC", text).lower()
    return [(m.group(0), m.group("cjk") is not None) for m in _RUN.finditer(text)]


def words(text: str) -> list[str]:
    """The text's words, lower-cased, in order (CJK runs left out)."""
    return [run for run, cjk in runs(text) if not cjk]


@lru_cache(maxsize=1)
def _stemmer():
    import Stemmer

    return Stemmer.Stemmer("english")


def stems(words: Sequence[str]) -> list[str]:
    """The English (Snowball) stems of `words`, in order."""
    return _stemmer().stemWords(list(words)) if words else []


@lru_cache(maxsize=8192)
def zipf_en(word: str) -> float:
    """How common an English word is (wordfreq's Zipf scale: 3 = once per million words, 0 =
    unknown)."""
    from wordfreq import zipf_frequency

    return zipf_frequency(word, "en")
