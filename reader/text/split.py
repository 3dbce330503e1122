"""Split prose into sentences on sentence-final punctuation, Chinese and English.

The seed design is the regex `(?<=[。！？.!?])\\s*`. Used as is it cuts "0.3%"
into "0." and "3%" and breaks "et al.", "Fig. 2", "e.g.", "Eq. (3)" and
"i.e.", and a broken sentence makes the audit check fragments. So the same
regex finds the *candidate* boundaries and a few rules reject the false ones:

- Chinese 。！？ always end a sentence (with any closing quote or bracket).
- ASCII . ! ? end one only when whitespace, the end of the text or a CJK
  character follows: "0.3%", "e.g.," and "U.S." never split.
- "." after a known abbreviation ("et al.", "e.g.", "Fig.", "Eq.", "vs.")
  does not end a sentence. After an abbreviation that can also end one
  ("etc.", "no.", "hr.") the next word decides: a capital starts a new
  sentence ("The answer is no. We"), anything else continues ("No. 5",
  "no. of", "etc. and").
- A single capital ("J.", "P.F.") is an initial or a label. It is an
  initial before a lower-case word ("J. van Buel"), another initial ("A. B.
  Jones"), after one ("E. H. Hovy"), after a comma, a capital word or a
  word that introduces a name ("by J. Smith", "and W. Bruce Croft"). It is
  a label that ends the sentence after a label noun ("Appendix B. The",
  "type I. Then"), after any other lower-case word ("method A. Method B",
  "relation R. REALM") or before a word that only starts sentences
  ("Smith J. The"). A capital glued to what precedes it ("4˚C.") is a unit
  or a name, not an initial.
- Otherwise a full stop and a space end a sentence, also before a lower-case
  word ("the end. iPhone users", "0.3. pH was"): only an abbreviation, an
  initial, a dotted word ("a.m.") or an inline list number ("because 1.
  sometimes") keeps a lower-case word in the sentence.
- Line breaks end a sentence; markdown headings are not sentences, and list
  markers ("- ", "1. ") are not part of the sentence that follows them.

Every sentence returned is an exact substring of the input (see
`sentence_spans`), so a sentence can be found again in the text to mark it.
"""

from __future__ import annotations

import re
from collections.abc import Sequence

# The seed regex's punctuation, plus closing quotes/brackets that stay with the sentence.
_CANDIDATE = re.compile(r"[。！？.!?]+[\"'”’」』）)\]]*")
_CJK_END = set("。！？")
_CJK = re.compile(r"[\u3000-\u303f\u3400-\u9fff\uff00-\uffef]")
_WORD_BEFORE = re.compile(r"([^\W\d_](?:[^\W\d_]|\.)*)$")
_NEXT_WORD = re.compile(r"[^\S\r\n]*(\S+)")
_ENUMERATOR = re.compile(r"(?:^|(?<=[\s(]))\d{1,2}$")
_PREV_WORD = re.compile(r"(\S+)\s*$")
_LETTERS = re.compile(r"[^\W\d_]+")
_INITIALS = re.compile(r"[^\W\d_](?:\.[^\W\d_])*$")  # "J", "P.F", "I.M"
_INITIAL_TOKEN = re.compile(r"[^\W\d_](?:\.[^\W\d_])*\.[,;:]?$")  # "B.", "E.A.,"
# After the next word, signs that a capital was an initial: "N. Chomsky (1957)", "J. Smith's", "J. Doe et al."
_NAME_AFTER = re.compile(r"(?:[’']s\b|\s*\(\d{4}|\s+et al\b|,\s*\d{4})")

# Never end a sentence after these (lower-cased, without the final dot).
_ABBREVIATIONS = {
    "e.g",
    "i.e",
    "et al",
    "al",
    "cf",
    "vs",
    "viz",
    "resp",
    "approx",
    "ca",
    "incl",
    "esp",
    "w.r.t",
    "a.k.a",
    "dr",
    "mr",
    "mrs",
    "ms",
    "prof",
    "st",
    "jr",
    "sr",
    "fig",
    "figs",
    "eq",
    "eqs",
    "sec",
    "secs",
    "tab",
    "tabs",
    "ref",
    "refs",
    "vol",
    "pp",
    "ch",
    "chap",
    "app",
    "appx",
    "alg",
    "thm",
    "def",
    "lem",
    "prop",
    "corr",
    "ex",
    "u.s",
    "u.k",
    "ph.d",
    "m.sc",
    "b.sc",
    "inc",
    "ltd",
    "co",
    "dept",
    "univ",
    "est",
    "eds",
    "ed",
    "mt",
    "jan",
    "feb",
    "mar",
    "apr",
    "jun",
    "jul",
    "aug",
    "sep",
    "sept",
    "oct",
    "nov",
    "dec",
    "proc",
    "procs",
    "ssp",
    "subsp",
    "spp",
    "cv",
    "a.m",
    "p.m",
}
# Abbreviations that may also end a sentence: one ends only before a capital.
_MAY_END = {
    "etc",
    "no",
    "nos",
    "avg",
    "ave",
    "max",
    "min",
    "std",
    "hr",
    "hrs",
    "yr",
    "yrs",
    "wk",
    "wks",
    "mo",
    "mos",
    "wt",
    "conc",
    "temp",
    "freq",
    "coef",
    "coeff",
    "excl",
    "abbr",
    "orig",
    "equiv",
    "expt",
    "misc",
    "ibid",
    "sq",
    "pt",
    "pts",
    "trans",
    "bib",
    "prec",
    "rec",
}
# Words after which a single capital is a label, not an initial ("Appendix B.", "type I.").
_LABEL_NOUNS = {
    "appendix",
    "annex",
    "table",
    "figure",
    "section",
    "chapter",
    "part",
    "type",
    "types",
    "method",
    "methods",
    "model",
    "models",
    "phase",
    "step",
    "stage",
    "class",
    "group",
    "case",
    "condition",
    "experiment",
    "setting",
    "variant",
    "version",
    "option",
    "plan",
    "scenario",
    "category",
    "level",
    "grade",
    "task",
    "dataset",
    "theorem",
    "lemma",
    "corollary",
    "definition",
    "hypothesis",
    "assumption",
    "problem",
    "question",
    "algorithm",
    "equation",
    "vitamin",
    "hepatitis",
    "matrix",
    "relation",
    "set",
    "system",
    "arm",
    "cohort",
    "site",
    "region",
    "zone",
    "team",
    "round",
    "track",
    "panel",
    "box",
    "column",
    "row",
    "item",
    "point",
    "protocol",
    "strategy",
    "configuration",
    "setup",
    "scheme",
    "form",
    "mode",
    "factor",
    "variable",
    "treatment",
    "sample",
    "subject",
    "participant",
    "patient",
    "annotator",
    "rater",
    "user",
    "speaker",
    "node",
    "letter",
    "exhibit",
    "study",
    "series",
    "list",
    "language",
    "domain",
    "corpus",
    "layer",
}
# Lower-case words that may stand before an initial ("by J. Smith", "and W. Bruce Croft").
_NAME_INTRO = {
    "and",
    "or",
    "nor",
    "by",
    "with",
    "without",
    "of",
    "from",
    "to",
    "as",
    "see",
    "cf",
    "thank",
    "thanks",
    "in",
    "on",
    "at",
    "for",
    "via",
    "including",
    "like",
    "than",
    "the",
    "between",
    "among",
    "versus",
    "vs",
    "after",
    "before",
    "against",
    "but",
    "also",
    "dear",
    "professor",
    "prof",
    "dr",
    "mr",
    "mrs",
    "ms",
    "sir",
    "author",
    "authors",
    "editor",
    "editors",
    "eds",
    "ed",
    "coauthor",
    "co-author",
    "colleague",
    "colleagues",
    "student",
    "advisor",
    "supervisor",
    "president",
    "director",
    "saint",
    "st",
    "de",
    "van",
    "von",
    "der",
    "den",
    "da",
    "di",
    "du",
    "del",
    "della",
    "le",
    "la",
    "al",
}
# Words that start sentences and are not surnames: after a capital, a new sentence.
_STARTERS = {
    "the",
    "this",
    "these",
    "those",
    "that",
    "then",
    "there",
    "thus",
    "therefore",
    "hence",
    "however",
    "moreover",
    "furthermore",
    "further",
    "also",
    "additionally",
    "in",
    "on",
    "at",
    "for",
    "to",
    "from",
    "by",
    "with",
    "without",
    "as",
    "we",
    "our",
    "it",
    "its",
    "they",
    "their",
    "he",
    "she",
    "his",
    "her",
    "a",
    "an",
    "all",
    "both",
    "each",
    "every",
    "some",
    "many",
    "most",
    "no",
    "not",
    "none",
    "one",
    "here",
    "such",
    "when",
    "while",
    "where",
    "whereas",
    "which",
    "what",
    "why",
    "how",
    "if",
    "since",
    "because",
    "although",
    "though",
    "unlike",
    "after",
    "before",
    "finally",
    "first",
    "second",
    "third",
    "next",
    "note",
    "overall",
    "instead",
    "indeed",
    "only",
    "even",
    "still",
    "yet",
    "but",
    "and",
    "or",
    "so",
    "similarly",
    "consequently",
    "specifically",
    "notably",
    "importantly",
    "results",
    "figure",
    "table",
    "i",
}
_HEADING = re.compile(r"#{1,6}\s")
_LIST_MARKER = re.compile(r"(?:[-*•+]\s+|\d{1,3}[.)]\s+|\(\d{1,3}\)\s+)")


def _is_boundary(text: str, start: int, end: int) -> bool:
    """Does the punctuation run text[start:end] end a sentence?"""
    punct = text[start:end]
    if any(ch in _CJK_END for ch in punct):
        return True
    after = text[end : end + 1]
    if after and not after.isspace() and not _CJK.match(after):
        return False  # "0.3%", "e.g.,", "U.S.A", "word.Next"
    if punct[0] != "." or punct.startswith(".."):
        return True  # "!" / "?" / an ellipsis followed by a space
    nxt = _NEXT_WORD.match(text, end)
    if not nxt:
        return True  # the end of the line
    next_word = nxt.group(1)
    next_lower = next_word[0].islower()
    before = _WORD_BEFORE.search(text, max(0, start - 40), start)
    if not before:
        if next_lower and _ENUMERATOR.search(text, max(0, start - 4), start):
            return False  # an inline list: "wrong because 1. sometimes ..., 2. stylistic ..."
        return True  # after a number or a bracket: "0.3. pH was", "(2019). The"
    raw = before.group(1)
    word = raw.lower()
    if word in _ABBREVIATIONS or word.rstrip(".") in _ABBREVIATIONS:
        return False
    if word.endswith("et al") or text[max(0, start - 6) : start].lower() == "et al":
        return False
    if word in _MAY_END or (len(raw) == 1 and raw.islower()):
        # "no. We" ends, "No. 5", "no. of", "etc. and", "p. 12", "5 h. later" go on
        head = next_word.lstrip("\"'“‘")
        return bool(head) and (head[0].isupper() or bool(_CJK.match(head)))
    glued = before.start() > 0 and not (
        text[before.start() - 1].isspace() or text[before.start() - 1] in "([{“\"‘'"
    )
    if raw[0].isupper() and _INITIALS.match(raw) and not glued:
        return not _is_initial(text, before.start(), next_word, nxt.end())
    if next_lower and "." in word:
        return False  # a dotted word: "a.m. and", "n.s. at"
    return True  # also before a lower-case word: "the end. iPhone users"


def _is_initial(text: str, word_start: int, next_word: str, next_end: int) -> bool:
    """Is the capital (or dotted capitals) at word_start, followed by ". " and
    next_word, an initial ("J. Smith") rather than a label ending a sentence
    ("method A. Method B")?"""
    if _CJK.match(next_word):
        return False
    if next_word[0].islower() or not next_word[0].isalpha():
        return True  # "J. van Buel", "Smith, J. and", "E.A. (2013)"
    if _INITIAL_TOKEN.match(next_word):
        return True  # "A. B. Jones"
    prev = _PREV_WORD.search(text, max(0, word_start - 60), word_start)
    prev_word = prev.group(1) if prev else ""
    if _INITIAL_TOKEN.match(prev_word):
        return True  # "E. H. Hovy"
    letters = _LETTERS.match(prev_word)
    bare = letters.group(0) if letters and letters.end() == len(prev_word) else ""
    if bare.lower() in _LABEL_NOUNS:
        return False  # "Appendix B. The results", "type I. Then"
    starter = _LETTERS.match(next_word)
    if starter and starter.group(0).lower() in _STARTERS and starter.end() == len(next_word.rstrip(",;:")):
        return False  # "... Smith J. The effect"
    if bare and bare[0].islower() and bare not in _NAME_INTRO:
        # "method A. Method B", "relation R. REALM", unless a name follows: "linguist N. Chomsky (1957)"
        return bool(_NAME_AFTER.match(text, next_end)) or next_word.endswith(("’s", "'s"))
    return True  # "As J. Smith", "by J. Smith", "Emily M. Bender", "Smith, J. Jones"


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


_LABEL = re.compile(r"^\*\*([^\W\d_][^*\n\d]{0,50}?)\*\*\s*[:：]\s*(?=\S)")


def without_label(sentence: str) -> str:
    """The sentence without a leading bold list label ("**Page Splitting**: A block…"): a topic
    name the writer set before its claim, not part of it. A label with a digit, or one that
    leaves less than a short sentence, stays."""
    match = _LABEL.match(sentence)
    if not match or len(sentence) - match.end() < 12:
        return sentence
    return sentence[match.end() :]


GAP = " … "  # between kept sentences that were not adjacent in their text


def join_selected(sentences: Sequence[str], numbers: Sequence[int]) -> str:
    """The sentences with these 1-based numbers (ascending), adjacent ones joined by a space,
    the others by " … "."""
    parts: list[str] = []
    previous = None
    for n in numbers:
        if previous is not None:
            parts.append(" " if n == previous + 1 else GAP)
        parts.append(sentences[n - 1])
        previous = n
    return "".join(parts)
