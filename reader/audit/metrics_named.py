"""A method named as a metric: "The evaluation metrics used (e.g., BM25 distance) …" of a paper that
ranks its extractions by "the BM25 distance metric" and evaluates them by the area under the
precision/recall curve; "The authors report metrics such as ROUGE, BERTScore, BM25, SIM, DPR …" of
a paper whose Table 4 compares those as algorithms for aligning summaries to their sources.

    method_as_metric_reasons(sentence, facts) -> ["names BM25 as a metric, but the paper never
        evaluates with it: “… we rank extractions by decreasing values of the bm25 distance
        metric …”"]

A sentence names metrics when "metric(s)" is followed by "such as", "including", "like", "(e.g.",
"used (e.g.", "include" or a colon, then a list, or by "are" and a name. Each name of the list (a word with a
capital letter or a digit) is the paper's metric when it is a metric's name
(reader.text.rigour_experiments.metric_names: F1, BLEU, ROUGE, accuracy …) or when a sentence of
the paper that holds it speaks of evaluating, reporting, scores or results, or lists it as a metric
itself. A name the paper's text does not print but a table names as a row (never as a column) is
a system the table measures, not a metric; a name the paper does not print at all is left to the
name guard. A metric's name is the paper's unless every sentence printing it cites other work and
no table names it ("the evaluation metrics used (e.g., AUC)" of a paper that speaks of AUC only as
what earlier evaluations reached).
"""

from __future__ import annotations

import re

from reader.text.rigour_experiments import metric_names

_LIST_AFTER = re.compile(
    r"\bmetrics?\s*(?:used\s*)?(?:\(\s*(?:e\.g\.|such as|including)|such as|including|like|:|include|"
    r"(?:are|were)\s+(?=(?-i:[A-Z0-9])))",
    re.I,
)
_LIST_END = re.compile(r"[.;)]\s|[.;)]$|\band (?:evaluat|compar|show|find|report)\w*", re.I)
_NAME = re.compile(r"\b[A-Za-z][\w-]*(?:[A-Z0-9][\w-]*)\b")
# a table's cells as the text prints them, not a sentence: six numbers or more
_TABLE_DUMP = re.compile(r"(?:\d[\d.,%]*\D+){6}")
_LOOSE_NAME = re.compile(r"[\w-]+")
_EVALUATES = re.compile(r"\b(?:evaluat\w*|report\w*|results?|scores?|measured|in terms of)\b")


def _listed_part(sentence: str) -> str:
    """The stretch of the sentence after its "metrics such as", up to where the list ends."""
    m = _LIST_AFTER.search(sentence)
    if m is None:
        return ""
    rest = sentence[m.end() :]
    end = _LIST_END.search(rest)
    return rest[: end.start()] if end else rest


def _listed_names(sentence: str) -> list[str]:
    """The names the sentence lists as metrics (words with a capital or a digit)."""
    return [
        n
        for n in _NAME.findall(_listed_part(sentence))
        if len(n) >= 2 and (n[0].isupper() or any(c.isdigit() for c in n))
    ]


def method_as_metric_reasons(sentence: str, facts) -> list[str]:
    """Why a name the sentence lists as a metric is no metric of the paper ([] when each is);
    `facts`: reader.audit.guards.PaperFacts (its text as printed, lower case)."""
    listed = list(dict.fromkeys(_listed_names(sentence)))
    if not listed:
        return []
    metrics = [n for n in listed if metric_names(n)]
    others = [n for n in listed if n not in metrics]
    sentences = [s for s in re.split(r"(?<=[.!?])\s+", facts.flat) if not _TABLE_DUMP.search(s)]
    return _others_metric_reasons(metrics, sentences, facts.tables) + _not_metric_reasons(
        others, sentences, facts.tables
    )


def _as_word(name: str) -> re.Pattern:
    """The name as a word of the lower-cased text ("f1" not in "f1-score")."""
    return re.compile(rf"(?<![\w-]){re.escape(name.lower())}(?![\w-])")


# a citation as the lower-cased text prints it: "(chen et al., 2019", "wang et al. 2019", "[4, 5]"
_CITES = re.compile(
    r"\bet al\.?,?\s*\(?(?:19|20)\d\d|\(\s*[a-z][\w'’-]+(?:\s+and\s+[a-z][\w'’-]+)?,?\s+(?:19|20)\d\d"
    r"|\[\d{1,3}(?:\s*[-–,;]\s*\d{1,3})*\]"
)


def _others_metric_reasons(names: list[str], sentences: list[str], tables) -> list[str]:
    """A metric's name the paper prints only in sentences citing other work, and no table of it
    names: the metric of earlier evaluations ("extremely high (99%+) AUC scores are already possible
    on these data … (Chen et al., 2019 …)", SPECTER), not the paper's."""
    out = []
    for name in names:
        word = _as_word(name)
        holding = [s for s in sentences if word.search(s)]
        if holding and all(_CITES.search(s) for s in holding) and not _in_a_table(word, tables):
            at = word.search(holding[0]).start()
            shown = ("…" if at > 80 else "") + holding[0][max(0, at - 80) : at + 80].strip()
            out.append(
                f"names {name} as the paper's metric, but the paper speaks of it only of other work: “{shown}…”"
            )
    return out


def _in_a_table(word: re.Pattern, tables) -> bool:
    return any(word.search(str(c).lower()) for t in tables for row in t.rows for c in row if c)


def _not_metric_reasons(names: list[str], sentences: list[str], tables) -> list[str]:
    """Why each name that is no metric's name is no metric of the paper ([] when it is one)."""
    unused, quote = [], ""
    for name in names:
        word = _as_word(name)
        holding = [s for s in sentences if word.search(s)]
        if holding and not any(_EVALUATES.search(s) or _lists_it(s, name) for s in holding):
            unused.append(name)
            quote = quote or holding[0].strip()
        elif not holding and (row := _a_tables_row(word, tables)):
            unused.append(name)
            quote = quote or row
    if not unused:
        return []
    if len(unused) == 1:
        return [f"names {unused[0]} as a metric, but the paper never evaluates with it: “{quote[:160]}”"]
    names = ", ".join(unused[:-1]) + " and " + unused[-1]
    return [f"names {names} as metrics, but the paper never evaluates with them: “{quote[:160]}”"]


def _lists_it(paper_sentence: str, name: str) -> bool:
    """The paper's sentence (lower case) lists the name as a metric itself."""
    return name.lower() in (n.lower() for n in _LOOSE_NAME.findall(_listed_part(paper_sentence)))


def _a_tables_row(word: re.Pattern, tables) -> str:
    """Where a table names the word as a row, never as a column (a system its columns measure):
    "Table 4, a row; its columns: R@3, R@5, R@10"; "" when none does."""
    for table in tables:
        header, body = table.rows[: table.header_rows], table.rows[table.header_rows :]
        columns = [c for row in header for c in row[1:] if c]
        if any(word.search(c.lower()) for c in columns):
            continue
        if any(row and word.search(row[0].lower()) for row in body):
            return f"{table.label}, a row; its columns: {', '.join(dict.fromkeys(columns))}"
    return ""
