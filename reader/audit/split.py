"""Split prose into sentences on sentence-final punctuation, Chinese and English.

The seed design is the regex `(?<=[。！？.!?])\\s*`. Used as is it cuts "0.3%"
into "0." and "3%" and breaks "et al.", "Fig. 2", "e.g.", "Eq. (3)" and
"i.e.", and a broken sentence makes the audit check fragments. So the same
regex finds the *candidate* boundaries and a few rules reject the false ones:

- Chinese 。！？ always end a sentence (with any closing quote or bracket).
- ASCII . ! ? end one only when whitespace, the end of the text or a CJK
  character follows: "0.3%", "e.g.," and "U.S." never split.
- "." after a known abbreviation ("et al.", "e.g.", "Fig.", "Eq.", "vs.") or
  a single capital initial ("J. Smith") does not end a sentence, nor does one
  followed by a lower-case word ("etc. and").
- Line breaks end a sentence; markdown headings are not sentences, and list
  markers ("- ", "1. ") are not part of the sentence that follows them.

Every sentence returned is an exact substring of the input (see
`sentence_spans`), so a sentence can be found again in the text to mark it.
"""

from __future__ import annotations

import re

# The seed regex's punctuation, plus closing quotes/brackets that stay with the sentence.
_CANDIDATE = re.compile(r"[。！？.!?]+[\"'”’」』）)\]]*")
_CJK_END = set("。！？")
_CJK = re.compile(r"[\u3000-\u303f\u3400-\u9fff\uff00-\uffef]")
_WORD_BEFORE = re.compile(r"([A-Za-z][A-Za-z.]*)$")

# Never end a sentence after these (lower-cased, without the final dot).
_ABBREVIATIONS = {
    "e.g", "i.e", "et al", "al", "cf", "vs", "viz", "resp", "approx", "ca", "incl",
    "esp", "w.r.t", "a.k.a", "dr", "mr", "mrs", "ms", "prof", "st", "jr", "sr",
    "fig", "figs", "eq", "eqs", "sec", "secs", "tab", "tabs", "ref", "refs",
    "vol", "pp", "ch", "chap", "app", "appx", "alg", "thm", "def", "lem", "prop",
    "corr", "ex", "no", "nos", "u.s", "u.k", "ph.d", "m.sc", "b.sc", "inc", "ltd",
    "co", "dept", "univ", "est", "eds", "ed", "mt", "jan", "feb", "mar", "apr",
    "jun", "jul", "aug", "sep", "sept", "oct", "nov", "dec",
}
_HEADING = re.compile(r"#{1,6}\s")
_LIST_MARKER = re.compile(r"(?:[-*•+]\s+|\d{1,3}[.)]\s+|\(\d{1,3}\)\s+)")


def _is_boundary(text: str, start: int, end: int) -> bool:
    """Does the punctuation run text[start:end] end a sentence?"""
    punct = text[start:end]
    if any(ch in _CJK_END for ch in punct):
        return True
    after = text[end:end + 1]
    if after and not after.isspace() and not _CJK.match(after):
        return False  # "0.3%", "e.g.,", "U.S.A", "word.Next"
    if punct[0] != "." or punct.startswith(".."):
        return True  # "!" / "?" / an ellipsis followed by a space
    before = _WORD_BEFORE.search(text, 0, start)
    if before:
        word = before.group(1).lower()
        if word in _ABBREVIATIONS or word.rstrip(".") in _ABBREVIATIONS:
            return False
        if len(word) == 1 and before.group(1).isupper() and not after == "\n":
            return False  # an initial: "J. Smith"
        if word.endswith("et al") or text[max(0, start - 6):start].lower() == "et al":
            return False
    nxt = re.match(r"\s*(\S)", text[end:])
    if nxt and nxt.group(1).islower():
        return False  # "etc. and", "approx. three"
    return True


def _line_spans(text: str, lo: int, hi: int) -> list[tuple[int, int]]:
    """Sentence spans inside one line text[lo:hi] (no newline inside)."""
    spans: list[tuple[int, int]] = []
    start = lo
    for m in _CANDIDATE.finditer(text, lo, hi):
        if _is_boundary(text, m.start(), m.end()):
            spans.append((start, m.end()))
            start = m.end()
    spans.append((start, hi))
    out = []
    for s, e in spans:
        while s < e and text[s].isspace():
            s += 1
        while e > s and text[e - 1].isspace():
            e -= 1
        if s < e:
            out.append((s, e))
    return out


def sentence_spans(text: str) -> list[tuple[int, int]]:
    """(start, end) offsets of each sentence in `text`, in order."""
    spans: list[tuple[int, int]] = []
    pos = 0
    for line in text.splitlines(keepends=True):
        lo, hi = pos, pos + len(line.rstrip("\r\n"))
        pos += len(line)
        stripped = text[lo:hi].lstrip()
        lo = hi - len(stripped)
        if not stripped or _HEADING.match(stripped):
            continue
        marker = _LIST_MARKER.match(stripped)
        if marker:
            lo += marker.end()
        spans.extend(_line_spans(text, lo, hi))
    return [(s, e) for s, e in spans if any(ch.isalnum() for ch in text[s:e])]


def split_sentences(text: str) -> list[str]:
    """The sentences of `text`, punctuation kept, empty pieces dropped."""
    return [text[s:e] for s, e in sentence_spans(text)]


def first_sentence(text: str) -> str:
    """`text` up to the end of its first sentence (what a `[待验证] ` mark in front of it
    covers); the first line when no sentence is found."""
    sentences = split_sentences(text)
    if not sentences:
        return text.split("\n", 1)[0]
    first = sentences[0]
    end = text.find(first)
    return text[: end + len(first)] if end >= 0 else first
