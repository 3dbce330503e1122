"""The words on a paper's pages, for the PDF viewer's text layer and its search.

A paper's words and their places (reader.ingest.pages.page_words) are read once, by a render
worker (reader/web/pdf.py), and kept beside its page images in
READER_HOME/pages/<paper id>/words.json. The viewer lays each page's lines over the page image
as transparent text, so the image stays what is seen and the text is what is selected; search
runs here, over the same words, and answers with their rectangles, so a match is highlighted
on the image as a passage is.
"""

from __future__ import annotations

import json
import os
import re
import threading
import unicodedata
from dataclasses import dataclass, field
from functools import lru_cache
from pathlib import Path

from reader.errors import PaperNotFound, ReaderError
from reader.web import pdf

MAX_QUERY_CHARS = 200
MAX_MATCHES = 1000  # counted all the same; only the first ones come with their rectangles


def _words_file(library, paper_id: str) -> Path:
    return library.home / "pages" / paper_id / "words.json"


@lru_cache(maxsize=8)
def _read_words(path: str, _mtime_ns: int) -> list[dict]:
    return json.loads(Path(path).read_text(encoding="utf-8"))


def _kept_words(library, paper_id: str) -> tuple[str, int]:
    """(the path of the paper's words.json, its mtime), read from the PDF (in a render worker)
    and written first if it is not there."""
    cached = _words_file(library, paper_id)
    try:
        return str(cached), cached.stat().st_mtime_ns
    except OSError:
        pass
    path, _ = pdf.paper_file(library, paper_id)
    pages = pdf.words_in_child(path)
    cached.parent.mkdir(parents=True, exist_ok=True)
    tmp = cached.with_suffix(f".{os.getpid()}.{threading.get_ident()}.part")
    tmp.write_text(json.dumps(pages, ensure_ascii=False, separators=(",", ":")), encoding="utf-8")
    tmp.replace(cached)
    return str(cached), cached.stat().st_mtime_ns


def paper_words(library, paper_id: str) -> list[dict]:
    """Every page's {"aspect", "words"} (reader.ingest.pages.page_words), page 1 first: read
    from the PDF once, in a render worker, then from READER_HOME/pages/<id>/words.json."""
    return _read_words(*_kept_words(library, paper_id))


def page_words_of(library, paper_id: str, page: int) -> dict:
    """One page's words: {"page", "pages", "aspect", "words": [[x0, y0, x1, y1, text, line], ...]}."""
    pages = paper_words(library, paper_id)
    if not 1 <= page <= len(pages):
        raise PaperNotFound(f"the paper has no page {page} (it has {len(pages)})")
    return {"page": page, "pages": len(pages), **pages[page - 1]}


# ---- search ----------------------------------------------------------------------------------


def _folded(text: str) -> str:
    """Case and width folded (`ＡＢＣ` and `abc` alike), whitespace runs as one space."""
    return " ".join(unicodedata.normalize("NFKC", text).casefold().split())


def _wide(char: str) -> bool:
    """A character of a script written without spaces (Chinese, Japanese): lines join without one."""
    return unicodedata.east_asian_width(char) in ("W", "F")


SOFT_HYPHEN = "\u00ad"


def page_text(words: list) -> tuple[str, list[tuple[int, int]]]:
    """A page's words as one folded string, and for each of its characters the (word, character
    of the word) it came from ((-1, 0) for a space put between words). A word ending a line in
    a hyphen joins the next line's word with a soft hyphen ("tempera-" "ture" is
    "tempera\u00adture": a search finds "temperature", and "n-gram" in "n-" "gram"), and lines
    of Chinese or Japanese join without a space."""
    chars: list[str] = []
    where: list[tuple[int, int]] = []
    for n, word in enumerate(words):
        text, line = word[4], word[5]
        following = words[n + 1] if n + 1 < len(words) else None
        broken = (
            following is not None
            and following[5] != line
            and len(text) > 1
            and text.endswith("-")
            and text[-2].isalpha()
            and following[4][:1].islower()
        )
        for i, char in enumerate(text):
            for folded in SOFT_HYPHEN if broken and i == len(text) - 1 else _folded(char) or " ":
                chars.append(folded)
                where.append((n, i))
        if following is None or broken:
            continue
        if following[5] != line and text and following[4] and _wide(text[-1]) and _wide(following[4][0]):
            continue
        chars.append(" ")
        where.append((-1, 0))
    return "".join(chars), where


@dataclass
class Match:
    page: int
    rects: list = field(default_factory=list)  # [[page, x0, y0, x1, y1], ...], one a line

    def to_json(self) -> dict:
        return {"page": self.page, "rects": self.rects}


def _match_rects(page_no: int, words: list, where: list, start: int, end: int) -> list[list[float]]:
    """The rectangles of characters start..end of a page's text: each word's part of the match
    (a share of its width as the share of its letters), neighbours on one line merged."""
    spans: dict[int, list[int]] = {}  # word -> [first char, last char]
    for n, i in where[start:end]:
        if n >= 0:
            first, last = spans.setdefault(n, [i, i])
            spans[n] = [min(first, i), max(last, i)]
    rects: list[list[float]] = []
    line = None
    for n in sorted(spans):
        x0, y0, x1, y1, text, word_line = words[n][:6]
        share = (x1 - x0) / max(1, len(text))
        left, right = x0 + share * spans[n][0], x0 + share * (spans[n][1] + 1)
        if rects and word_line == line:
            last = rects[-1]
            last[1], last[2] = min(last[1], left), min(last[2], y0)
            last[3], last[4] = max(last[3], right), max(last[4], y1)
        else:
            rects.append([page_no, left, y0, right, y1])
            line = word_line
    return [[r[0], *(round(v, 4) for v in r[1:])] for r in rects]


@lru_cache(maxsize=8)
def _texts(path: str, mtime_ns: int) -> list[tuple[str, list]]:
    """Each page's page_text, for the words.json at `path` as of `mtime_ns`."""
    return [page_text(page["words"]) for page in _read_words(path, mtime_ns)]


def find_in_pages(
    pages: list[dict], query: str, limit: int = MAX_MATCHES, texts: list | None = None
) -> tuple[int, list[Match]]:
    """(how many times `query` occurs, the first `limit` matches with their rectangles): case
    folded, any run of spaces as one, over each page's words (reader.ingest.pages.page_words;
    `texts`: their page_text, when already made)."""
    wanted = _pattern(query)
    if wanted is None:
        return 0, []
    count, matches = 0, []
    for page_no, page in enumerate(pages, start=1):
        words = page["words"]
        text, where = texts[page_no - 1] if texts is not None else page_text(words)
        for found in wanted.finditer(text):
            count += 1
            if len(matches) < limit:
                matches.append(
                    Match(page_no, _match_rects(page_no, words, where, found.start(), found.end()))
                )
    return count, matches


def _pattern(query: str) -> re.Pattern | None:
    """The folded query as a pattern in which a line end's hyphen (SOFT_HYPHEN) may come
    between any two characters, and a hyphen of the query matches one."""
    wanted = _folded(query)
    if not wanted:
        return None
    parts = ["[-\u00ad]" if char == "-" else re.escape(char) for char in wanted]
    return re.compile("\u00ad?".join(parts))


def checked_query(query: str) -> str:
    if not query.strip():
        raise ReaderError("give the words to search the paper for (?q=…)")
    if len(query) > MAX_QUERY_CHARS:
        raise ReaderError(f"the search is {len(query)} characters long; search for at most {MAX_QUERY_CHARS}")
    return query


def search_paper(library, paper_id: str, query: str) -> dict:
    """{"query", "count", "matches": [{"page", "rects"}], "truncated"}: where `query` occurs in
    the paper, page by page in the PDF's order of words."""
    query = checked_query(query)
    kept = _kept_words(library, paper_id)
    count, matches = find_in_pages(_read_words(*kept), query, texts=_texts(*kept))
    return {
        "query": query,
        "count": count,
        "matches": [m.to_json() for m in matches],
        "truncated": count > len(matches),
    }


# ---- the evidence sentence inside a passage ------------------------------------------------------

MAX_CLAIM_CHARS = 1000


def _content(text: str) -> set[str]:
    from reader.text.words import runs, stems

    found = set(stems([w for w, cjk in runs(text) if not cjk and len(w) > 2]))
    for run, cjk in runs(text):
        if cjk:  # Chinese and Japanese: their character pairs
            found |= {run[i : i + 2] for i in range(max(1, len(run) - 1))}
    return found


def evidence_sentence(passage: str, claim: str) -> str:
    """The sentence of `passage` that shares the most content words with `claim` (a sentence of
    the analysis); "" when none shares any."""
    from reader.text.split import sentence_spans

    wanted = _content(claim)
    best, best_score = "", 0.0
    for start, end in sentence_spans(passage):
        sentence = passage[start:end]
        have = _content(sentence)
        score = len(wanted & have) / (len(have) ** 0.5 or 1.0)
        if score > best_score:
            best, best_score = sentence, score
    return best


def _located(pages: list[dict], texts: list, sentence: str, on: set[int]) -> list:
    """Rectangles of `sentence` on the pages `on`: the whole sentence, else its longest start
    of at least 4 words found there (a footnote mark or a formula may break it off)."""
    from reader.text.copied import joined_lines

    words = joined_lines(" ".join(sentence.split())).split(" ")
    for n in [len(words)] + [n for n in (24, 16, 10, 6, 4) if n < len(words)]:
        wanted = _pattern(" ".join(words[:n]))
        for page_no in sorted(p for p in on if 1 <= p <= len(pages)):
            text, where = texts[page_no - 1]
            found = wanted.search(text) if wanted is not None else None
            if found:
                return _match_rects(page_no, pages[page_no - 1]["words"], where, found.start(), found.end())
    return []


def sentence_rects(library, paper_id: str, passage: str, passage_rects: list, claim: str) -> list:
    """Where the evidence sentence for `claim` stands inside a passage ([[page, x0, y0, x1, y1],
    ...], one a line), found on the passage's pages (and the page after, for a footnote set at a
    page's foot); [] when it cannot be placed."""
    sentence = evidence_sentence(passage, claim[:MAX_CLAIM_CHARS])
    if not sentence:
        return []
    try:
        kept = _kept_words(library, paper_id)
    except ReaderError:
        return []
    on = {r[0] for r in passage_rects} or set()
    return _located(_read_words(*kept), _texts(*kept), sentence, on | {p + 1 for p in on})
