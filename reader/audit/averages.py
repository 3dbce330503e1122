"""A sentence that says the paper gives an average (a mean, a median) of something it never
averages: "The authors also provide … the average number of passages per paper" of a paper whose
table gives "Passages per paper: 44 to 112" and a median only of coverage.

    average_reasons(sentence, facts)
        -> ["says “average number of passages per paper”, but the paper gives no average, mean or
            median of it"]

What is averaged is named by the first words after "average" / "mean" / "median" ("the average
number of passages per paper" -> number, passages, paper; "a median of 27.2 BLEU" -> BLEU). The
paper gives an average of one of them when its text has the statistic word followed by it within
three plain words ("average number of passages", "mean speed"), or with only figures and linking
words between ("a median of 27.2 BLEU"), or has it followed by "on average" / "an average"
("reduces error by an average of 39%"). A table with a row or column named by the statistic alone
("Average", "Mean") averages whatever it reports, so such a paper is never contradicted: a
table's figures are not tied to one word here. "On average" in the sentence is not a claim of a
reported statistic.
"""

from __future__ import annotations

import re
import unicodedata

_CLAIMED = re.compile(r"(?<!\bon )\b(average|mean|median)\s+((?:[\w\-/.%]+\s+){0,6}[\w\-/.%]+)", re.I)
# words that name nothing averaged ("a plain average of the six …", "a mean across 10 seeds")
_FUNCTION = set(
    """of the these those a an per in on for across over from with and or all each different is was were
    are at around about plain simple overall two three four five six seven eight nine ten""".split()
)
THINGS = 3  # the first words after the statistic that may name what is averaged
_BARE_STATISTIC = re.compile(r"^\s*(?:average|avg\.?|mean|median)\s*$", re.I)
MIN_PREFIX = 5  # "passages" and "passage", "reduction" and "reduces" meet at "passa", "reduc"


def averaged_things(sentence: str) -> tuple[str, list[str]] | None:
    """(the phrase, the first THINGS words after the statistic that may name what is averaged) of
    a sentence that says a mean, average or median of something ("the average number of passages
    per paper" -> "average number of passages per paper", [number, passages, paper]); None when it
    says none."""
    sentence = unicodedata.normalize("NFKC", sentence)
    for m in _CLAIMED.finditer(sentence):
        before = sentence[: m.start()].split()[-1:]
        if re.match(r"means?\s+(?:that|to)\b", sentence[m.start() :], re.I) or (
            m.group(1).lower() == "mean" and before and before[0].lower() in ("we", "i", "they", "you")
        ):
            continue  # "this means that", "by polymorphism we mean …": the verb
        words = [w for w in re.findall(r"[A-Za-z][\w\-]*", m.group(2)) if w.lower() not in _FUNCTION]
        if words:
            return m.group(0).rstrip(".,;:"), words[:THINGS]
    return None


def tables_average(tables) -> bool:
    """Some table (reader.text.grid.Table) has a row or column named by the statistic alone."""
    for table in tables or []:
        for row in table.rows:
            if row and _BARE_STATISTIC.match(row[0] or ""):
                return True
        for row in table.rows[: max(1, table.header_rows)]:
            if any(_BARE_STATISTIC.match(cell or "") for cell in row):
                return True
    return False


_LINKS = (
    r"(?:of|is|was|were|are|at|around|about|the|a|an|in|per|and|on|for|to|from|these|those|across|over|"
    r"with|two|three|four|five|six|seven|eight|nine|ten)"
)


def words_of(text_lower: str) -> str:
    """The text's lower-case words and numbers, each between single spaces."""
    return " " + " ".join(re.findall(r"[a-z0-9]+", unicodedata.normalize("NFKC", text_lower))) + " "


def paper_averages(words: str, thing: str) -> bool:
    """The paper's words (`words_of` its text) give an average of `thing`: the statistic then up to
    three plain words and the thing ("average number of passages"); or then only figures and
    linking words ("a median of 27.2 BLEU", "an average of 630 in the 15 states", "average 26ms");
    or the thing then "on average" / "an average" ("reduces error by an average of 39%")."""
    first = re.findall(r"[a-z0-9]+", unicodedata.normalize("NFKC", thing).lower())
    if not first:
        return True
    stem = re.escape(first[0][:MIN_PREFIX])
    statistic = r" (?:averag\w*|mean|median|avg)"
    near = (
        rf"{statistic} (?:[a-z]+ ){{0,3}}?{stem}"
        rf"|{statistic} (?:(?:{_LINKS}|\d+) ){{0,6}}?(?:\d+)?{stem}"
        rf"| {stem}\w* (?:[a-z]+ ){{0,3}}?(?:on average|averaged|an average|the average)"
    )
    return re.search(near, words) is not None


def average_reasons(sentence: str, facts) -> list[str]:
    """Why the sentence's average is not the paper's ([] when it is, or when it says none);
    `facts`: reader.audit.guards.PaperFacts."""
    claimed = averaged_things(sentence)
    if claimed is None or tables_average(facts.tables):
        return []
    phrase, things = claimed
    words = words_of(facts.text_lower)
    if any(paper_averages(words, thing) for thing in things):
        return []
    return [f"says “{phrase}”, but the paper gives no average, mean or median of it"]
