"""Each heading's own material: the paper's sentences that carry what the heading is about.

The writer is asked for one heading at a time (reader.deepread.writer); beside the paper it is shown a
few sentences picked for that heading by rule — from the sections a heading draws on, those
with its cue words (a limitation for Open questions, a citation for Relation to prior work),
numbers first under Key results, after the main results table's headline row with its
data and metric where the paper has tables (`table_results`) — and, for the critique, facts
found by rule that a reviewer would check (is any variance reported, how large are the datasets, is there a limitations
section). No model is involved. A sentence already given to an earlier heading of the same
document is passed over while others are left, so the headings do not all draw on one
sentence, and a section's sentences count less for each one it has given already, so the
material spans the paper's sections rather than one.
"""

from __future__ import annotations

import re
from collections import Counter
from dataclasses import dataclass

from reader.text.grid import data_cell
from reader.text.split import split_sentences
from reader.text.tokens import estimate_tokens

# Section kinds, as reader.deepread ranks them (lower is read first when the paper is long).
ABSTRACT, INTRODUCTION, CONCLUSION, RESULTS, METHOD, CAPTIONS, OTHER, APPENDIX = range(8)

# A section's later sentences count this much less for each sentence it has given the heading
# (SPREAD) or an earlier heading of the document (SPREAD_USED): the material spans the paper.
SPREAD, SPREAD_USED = 1.0, 0.25
_NUMBER = re.compile(r"\d")
_CITATION = re.compile(r"\[\d[\d,;\s–-]*\]|\(\D{2,40}\d{4}[a-z]?\)|\bet al\b", re.I)


@dataclass(frozen=True)
class Rule:
    kinds: tuple[int, ...]  # the section kinds a heading draws on, the first preferred
    cue: re.Pattern
    numbers: bool = False  # sentences with numbers first (Key results)


def _cue(*words_: str) -> re.Pattern:
    return re.compile(r"\b(?:" + "|".join(words_) + r")", re.I)


RULES: dict[str, Rule] = {
    # synthesis
    "Problem": Rule(
        (ABSTRACT, INTRODUCTION),
        _cue(
            "problem", "challeng", "task", "goal", "aim", "question", "difficult", "however", "lack", "need"
        ),
    ),
    "Contributions": Rule(
        (ABSTRACT, INTRODUCTION, CONCLUSION),
        _cue(
            "we (?:propose|present|introduce|develop|show|describe|release|build|create)",
            "contribut",
            "novel",
            "first",
            "this paper",
            "this work",
            "this study",
        ),
    ),
    "Method": Rule(
        (METHOD, INTRODUCTION, ABSTRACT),
        _cue(
            "model",
            "method",
            "approach",
            "algorithm",
            "train",
            "architectur",
            "feature",
            "consist",
            "input",
            "output",
            "layer",
            "procedure",
            "step",
        ),
    ),
    "Key results": Rule(
        (ABSTRACT, RESULTS, CAPTIONS, CONCLUSION),
        _cue(
            "result",
            "outperform",
            "improv",
            "achiev",
            "accura",
            "score",
            "f1",
            "error",
            "gain",
            "than",
            "show",
            "found",
            "higher",
            "lower",
            "increas",
            "decreas",
            "reduc",
        ),
        numbers=True,
    ),
    "Relation to prior work": Rule(
        (OTHER, INTRODUCTION),
        _cue("previous", "prior", "earlier", "unlike", "existing", "related", "similar", "extend", "build"),
    ),
    "Open questions": Rule(
        (CONCLUSION, RESULTS, INTRODUCTION),
        _cue(
            "future",
            "limitation",
            "remain",
            "open",
            "not yet",
            "leave",
            "unclear",
            "further",
            "could",
            "would",
            "might",
        ),
    ),
    # critique
    "Strengths": Rule(
        (ABSTRACT, RESULTS, CONCLUSION),
        _cue(
            "outperform",
            "improv",
            "better",
            "state-of-the-art",
            "novel",
            "first",
            "efficient",
            "robust",
            "significant",
            "consistent",
        ),
    ),
    "Weaknesses": Rule(
        (CONCLUSION, RESULTS, METHOD),
        _cue(
            "limitation",
            "however",
            "fail",
            "error",
            "worse",
            "drop",
            "only",
            "small",
            "restrict",
            "assum",
            "cannot",
            "not",
        ),
    ),
    "Quality of the evidence": Rule(
        (RESULTS, CAPTIONS, METHOD),
        _cue(
            "dataset",
            "corpus",
            "evaluat",
            "test set",
            "sample",
            "participant",
            "annotat",
            "metric",
            "significan",
            "standard deviation",
            "baseline",
        ),
        numbers=True,
    ),
    "Missing experiments or baselines": Rule(
        (RESULTS, OTHER, CAPTIONS),
        _cue(
            "baseline", "compar", "than", "versus", "vs", "ablation", "et al", "previous", "state-of-the-art"
        ),
    ),
    "Overclaims": Rule(
        (ABSTRACT, CONCLUSION),
        _cue(
            "state-of-the-art",
            "significant",
            "outperform",
            "best",
            "first",
            "novel",
            "all",
            "always",
            "general",
            "robust",
            "substantial",
            "effective",
            "superior",
        ),
    ),
    "Threats to validity": Rule(
        (RESULTS, METHOD, CONCLUSION),
        _cue(
            "dataset",
            "corpus",
            "domain",
            "language",
            "annotat",
            "sample",
            "bias",
            "english",
            "split",
            "only",
            "assum",
            "manual",
            "noise",
        ),
    ),
}
_CRITIQUE_FACTS = {"Weaknesses", "Quality of the evidence", "Threats to validity"}

_VARIANCE = re.compile(
    r"±|\+/-|\bstandard deviation|\bstd\b|\bs\.d\.|\bconfidence interval|\bp\s*[<=≤]\s*0?\.\d|"
    r"\bstatistically significant|\bsignificant(?:ly)? (?:differ\w*|higher|lower|better|worse|at\b)|"
    r"\bvariance\b|\berror bars?\b|\bstandard error\b|\banova\b|\bt-test|\bwilcoxon\b|\bbootstrap",
    re.I,
)
# a journal's front matter inside a section: not something the paper says about its work
_BOILERPLATE = re.compile(
    r"^\W*(?:funding|editor|received|accepted|published|copyright|citation|data availability|"
    r"competing interests|author contributions|academic editor|open access|how to cite)\b|doi\.org|\bdoi:|"
    r"\b(?:editor|received|accepted|published|copyright)\s*:",
    re.I,
)
_DATA_SIZE = re.compile(
    r"\b(\d[\d,.]*)\s*(k|m|million|thousand)?\s+(?:sentences|documents|examples|pairs|images|participants|"
    r"subjects|articles|papers|tokens|words|samples|instances|questions|queries|users|patients|plants|"
    r"tweets|utterances|dialogues|citations|abstracts)\b",
    re.I,
)
LIMITATIONS = re.compile(r"limitation|threats? to validity|局限|不足", re.I)


def _is_data_size(sentence: str) -> bool:
    """Does the sentence give a collection's size ("9,815 sentences", "2 million pairs")? A count
    under 100 ("5 words to either side", "10 samples") is a setting, not a size."""
    for match in _DATA_SIZE.finditer(sentence):
        digits = match.group(1).replace(",", "").rstrip(".")
        try:
            count = float(digits)
        except ValueError:
            continue
        if match.group(2) or count >= 100:
            return True
    return False


def _sentences(sections, kinds: tuple[int, ...]) -> list[tuple[int, int, str, int]]:
    """(rank of its section kind, position, sentence, section's index) for the sections of these
    kinds."""
    out = []
    position = 0
    for index, section in enumerate(sections):
        if section.priority not in kinds:
            continue
        rank = kinds.index(section.priority)
        for sentence in split_sentences(section.text):
            flat = " ".join(sentence.split())
            if _BOILERPLATE.search(flat):
                continue
            if 6 <= len(flat.split()) <= 80 or (len(flat) >= 30 and re.search(r"[^\x00-\x7f]", flat)):
                out.append((rank, position, flat, index))
                position += 1
    return out


def heading_material(heading: str, sections, used: set[str], max_tokens: int) -> list[str]:
    """The sentences of `sections` (each with .title, .text, .priority) for `heading`, within
    `max_tokens`, in the paper's order; `used` (the sentences earlier headings were given) is
    updated. A heading without a rule gets the sentences that carry numbers or claims."""
    rule = RULES.get(heading, Rule((ABSTRACT, RESULTS, CONCLUSION), _cue("result", "show", "propos")))
    if max_tokens <= 0:  # a document written without material (reader.deepread.writer.WITH_MATERIAL)
        return []
    candidates = _sentences(sections, rule.kinds)
    scored = []
    taken: Counter = Counter()
    for _, _, sentence, section in candidates:
        if sentence in used:
            taken[section] += SPREAD_USED
    for rank, position, sentence, section in candidates:
        score = 2.0 * len(rule.cue.findall(sentence)[:2]) - 0.7 * rank
        if rule.numbers and _NUMBER.search(sentence):
            score += 3.0
        if heading == "Relation to prior work" and _CITATION.search(sentence):
            score += 2.0
        if sentence in used:
            score -= 4.0
        if score > 0:
            scored.append((score, position, sentence, section))
    chosen, spent = [], 0
    while scored:  # the best first, a section's score lowered by what it has given already
        best = max(scored, key=lambda s: (s[0] - taken[s[3]], -s[1]))
        scored.remove(best)
        _, position, sentence, section = best
        cost = estimate_tokens(sentence) + 2
        if spent + cost > max_tokens:
            continue
        chosen.append((position, sentence))
        spent += cost
        taken[section] += SPREAD
    picked = [s for _, s in sorted(chosen)]
    used.update(picked)
    return picked


_FIGURE = re.compile(r"\d+(?:[.,]\d+)*%?")
_YEAR = re.compile(r"(?:19|20)\d\d")


def ordered_figures(text: str) -> list[str]:
    """The numbers `text` gives, in order and once each, years and single digits (list items
    "(2)", footnote marks) left out."""
    found = (n.rstrip(".,") for n in _FIGURE.findall(text))
    return list(dict.fromkeys(n for n in found if len(n.rstrip("%")) >= 2 and not _YEAR.fullmatch(n)))


def figures(text: str) -> set[str]:
    """The numbers `text` gives, as `ordered_figures`."""
    return set(ordered_figures(text))


def abstract_sentences(sections) -> list[str]:
    """The abstract's sentences, without the front matter a journal prints beside it (citation
    line, DOI, dates, licence)."""
    return [sentence for _, _, sentence, _ in _sentences(sections, (ABSTRACT,))]


def missing_headlines(body: str, sections, limit: int = 4) -> list[str]:
    """The abstract's sentences whose figures (its headline results) `body` does not give, then,
    where neither gives a figure with the metric it is in, the results' sentences that do (a
    metric's name and a decimal or a percentage, one naming its data first), at most `limit`:
    what a reader expects to find under Key results, each figure with its metric and data."""
    from reader.text.rigour_experiments import metric_names

    given = figures(body)
    out = []
    for sentence in abstract_sentences(sections):
        own = figures(sentence)
        if own and not own <= given:
            out.append(sentence)
            given |= own
    measured = [s for s in [body, *out] if metric_names(s) and _RESULT_FIGURE.search(s)]
    if not measured:
        results = [
            s
            for _, _, s, _ in _sentences(sections, (RESULTS, CAPTIONS))
            if metric_names(s) and _RESULT_FIGURE.search(s) and not figures(s) <= given
        ]
        results.sort(key=lambda s: not _DATA_NAMED.search(s))  # the ones naming their data first
        out += results[:HEADLINE_RESULTS]
    return out[:limit]


HEADLINE_RESULTS = 2  # results' sentences with a metric and its figure, when nothing else gives one
_RESULT_FIGURE = re.compile(r"\d+\.\d+|\d+(?:\.\d+)?\s?%")
_DATA_NAMED = re.compile(
    r"\b(?:on|for|in) (?:the )?(?:[A-Z][\w-]*\d*|[A-Z]{2,}[\w-]*)(?: (?:[A-Z][\w-]*|data ?set|corpus|test set))*\b|"
    r"\b(?:data ?set|corpus|test set|benchmark)\b",
)


_BODY = (RESULTS, METHOD, CAPTIONS, CONCLUSION, INTRODUCTION)  # the sections that report the work


def section_sentences(sections, kinds: tuple[int, ...] | None = None) -> list[str]:
    """The sentences of the sections of these kinds (all when None), spaces made single."""
    chosen = [s for s in sections if kinds is None or s.priority in kinds]
    return [" ".join(x.split()) for s in chosen for x in split_sentences(s.text)]


def variance_sentence(sentences: list[str]) -> str | None:
    """The first sentence that gives a variance, an interval or a significance test."""
    return next((s for s in sentences if _VARIANCE.search(s)), None)


def critique_facts(heading: str, sections) -> list[str]:
    """What a reviewer would check, found by rule in the paper's text, for the critique headings
    that weigh the evidence: the data's sizes and, under Quality of the evidence, the variance or
    significance the paper reports. (What the paper lacks, the tool states itself:
    reader.deepread.checked.)"""
    if heading not in _CRITIQUE_FACTS:
        return []
    sentences = section_sentences(sections, _BODY)
    facts = []
    variance = variance_sentence(sentences)
    if variance is not None and heading == "Quality of the evidence":
        facts.append(f"Variance or significance is mentioned: {variance}")
    return facts + [f"Data size: {s}" for s in [s for s in sentences if _is_data_size(s)][:2]]


# ------------------------------------------------------------------ Key results from the tables

# a caption that speaks of results; a column whose lowest value is its best; the paper's own row
_RESULTS_CAPTION = re.compile(
    r"result|performance|accura|compar|evaluat|score|\bf1\b|bleu|rouge|precision|recall|test set", re.I
)
_LOWER_BETTER = re.compile(
    r"error|loss|perplex|\bppl\b|\b[wc]er\b|\brank|time|latency|\bmae\b|\brmse\b|\bmse\b|distance|\bs\b", re.I
)
_OURS = re.compile(r"\bours\b|\bproposed\b|\bour\b", re.I)
HEADLINE_COLUMNS = 4  # of the headline row's cells, given to the writer


def _numeric_body(table) -> list:
    """The body cells with a number, in columns whose rows can be compared: most of the
    column's cells are numbers, all of one kind (percentages or not). A column of mixed measures
    ("14 of 14", "96.6%", "44 to 112" under "Value") has no best row."""
    body = [c for c in table.cells() if c.row >= table.header_rows and c.col_header]
    columns: dict[str, list] = {}
    for cell in body:
        columns.setdefault(cell.col_header, []).append(cell)
    out = []
    for column in columns.values():
        numbers = [c for c in column if c.number is not None]
        if len(numbers) >= 0.75 * len(column) and len({c.number.percent for c in numbers}) == 1:
            out += numbers
    return sorted(out, key=lambda c: (c.row, c.col))


def main_results_table(tables):
    """The paper's main results table: among the tables with numbers, one whose caption speaks of
    results (the first such where several do equally), else the one with the most numbers; None
    without tables of numbers."""
    scored = [
        (bool(_RESULTS_CAPTION.search(t.caption or "")), min(len(cells), 12), -i, t)
        for i, t in enumerate(tables)
        if len(cells := _numeric_body(t)) >= 2
    ]
    return max(scored, key=lambda s: s[:3])[3] if scored else None


def _best_per_column(cells) -> dict[str, set[int]]:
    """For each column header, the rows holding its best value (the lowest for an error or a time)."""
    columns: dict[str, list] = {}
    for cell in cells:
        columns.setdefault(cell.col_header, []).append(cell)
    best: dict[str, set[int]] = {}
    for header, column in columns.items():
        if len(column) < 2:
            continue
        pick = min if _LOWER_BETTER.search(header) else max
        top = pick(c.value for c in column)
        best[header] = {c.row for c in column if c.value == top}
    return best


def headline_row(table) -> list:
    """The cells of the table's headline row: the row best in the most columns (the paper's own,
    "Ours" or "proposed", among equals; the later among equals), [] without one."""
    cells = _numeric_body(table)
    best = _best_per_column(cells)
    rows: dict[int, list] = {}
    for cell in cells:
        rows.setdefault(cell.row, []).append(cell)
    if not rows or not best:
        return []

    def score(row: int) -> tuple:
        wins = sum(1 for winners in best.values() if row in winners)
        return wins, bool(_OURS.search(rows[row][0].row_header)), row

    return rows[max(rows, key=score)]


def table_results(tables) -> list[str]:
    """What the Key results heading is given from the tables: the main results table's headline row
    with its data and metric (its column headers) and its caption, as one line; [] without one.
    "Table 2 (p. 5, Accuracy of three models on SQA and WikiQA): Ours has SQA / Accuracy 85.1
    (the best of 3), WikiQA / Accuracy 80.3 (the best of 3), F1 0.94 (the best of 3)." """
    table = main_results_table(tables)
    row = headline_row(table) if table is not None else []
    if not row or data_cell(row[0].row_header):
        return []  # a row named by a number (a threshold, a size) is a setting, not a system
    body = _numeric_body(table)
    best = _best_per_column(body)
    counts = Counter(c.col_header for c in body)
    parts = []
    for cell in row[:HEADLINE_COLUMNS]:
        mark = (
            f" (the best of {counts[cell.col_header]})" if cell.row in best.get(cell.col_header, ()) else ""
        )
        parts.append(f"{cell.col_header} {cell.text}{mark}")
    caption = " ".join((table.caption or "").split())
    caption = re.sub(r"^(?:Table|TABLE|Tab\.)\s*\S+?[.:|]?\s+", "", caption)
    # its first sentence: a second would end the line's sentence inside the parentheses ("… long-form
    # summaries. 73% of the papers do not …")
    caption = re.split(r"(?<=[.!?])\s+(?=[A-Z0-9])", caption)[0][:160]
    where = f"{table.label} (p. {table.page}, {caption})" if caption else f"{table.label} (p. {table.page})"
    return [f"{where}: {row[0].row_header} has {', '.join(parts)}."]
