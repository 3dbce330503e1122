"""A sentence's numbers against the paper's tables: bound to their cell, arithmetic recomputed.

The guards (reader/audit/guards.py) call `table_findings` with the paper's tables (PaperFacts);
which rows and columns a sentence names is reader/audit/table_names.py's.

- **Bound numbers.** A number of the sentence that a cell holds (at the sentence's precision;
  "84.3%" also matches 0.843) is checked against the rows and columns the sentence names most
  in that table around it (from the number before it to the one after it; its rows from the
  whole sentence where that stretch names none): a cell holding it must stand in them. When it stands elsewhere, the cells the
  sentence does name there (the named rows in that cell's column, or the named columns in its
  row) are what it was meant to be, unless the sentence's other numbers are those ("0.61 against
  0.47 for the runner-up"): then the number is a row the sentence leaves unnamed. Otherwise the
  finding quotes the cell: `number 0.91 is "BERT" × "recall" in Table 2 (p. 5); the sentence
  names "RoBERTa"`. A number no cell holds, a number printed as it stands in the running text
  that a cell only holds rounded ("27.2" and a cell "27.19"), and a sentence that names nothing
  of the table are left to the other guards.
- **Arithmetic recomputed.** A difference, relative change, error reduction or ratio the
  sentence states (reader/audit/arithmetic.py) is recomputed by the safe evaluator from the cells
  it rests on: two named rows in a named column (each column without one), two named columns in
  a named row, or two cells its other numbers match in one row or column. A match confirms it
  and the computation is the evidence ("85.1 − 81.9 = 3.2 (Table 2, SQA, p. 5)"); none among
  cells it rests on makes it a finding with the nearest computation. A "best", "highest",
  "lowest" said of the one row the sentence names (not "Average" or "Total") holds when it is
  the column's extreme in some table the sentence names it in.

A sentence that names a table ("in Table 5") is checked against that table only.

Every finding is plain data: the reason (None for a confirmation), the evidence line, the page,
and where the numbers it accounts for start in the sentence (a derived number confirmed here is
not "a number not found in the paper").
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from itertools import combinations

from reader.audit.arithmetic import (
    BEST,
    DIFFERENCE,
    ERROR_REDUCTION,
    RELATIVE,
    ArithmeticClaimError,
    claims,
    evaluate,
    expressions,
    shown,
)
from reader.audit.table_names import Sentence, TableIndex, index_tables
from reader.text.grid import Cell

# the reason of a figure the table's cells do not give (a restated sentence of the paper that
# prints it stands, reader.audit.guards.check_sentence: an average of per-row gains is not the
# gain of the average row)
NOT_FROM_TABLE = "does not follow from the table it rests on"
_LOWER_BETTER = re.compile(
    r"\b(?:error|err|wer|cer|ter|loss|perplexity|ppl|rank|mae|rmse|mse|time|latency)\b", re.I
)
_SAYS_MIN = re.compile(r"\b(?:lowest|smallest|fewest|least)\b", re.I)
_SAYS_MAX = re.compile(r"\b(?:highest|largest|most)\b", re.I)
_TABLE_LABEL = re.compile(r"\bTable\s+\d{1,3}\b", re.I)
_NO_SUBJECT = re.compile(r"^(?:average|avg\.?|mean|total|overall|all|sum)$", re.I)

__all__ = ["Finding", "index_tables", "table_findings"]


@dataclass(frozen=True)
class Finding:
    reason: str | None  # the guard's reason; None: the sentence is confirmed by the cells
    evidence: str  # the cell or the computation, with its table and page
    page: int
    numbers: tuple[int, ...] = ()  # where the sentence's numbers it accounts for start
    claimed: str = ""  # the sentence's words it objects to: a number, or the word of a "best"


@dataclass(frozen=True)
class Number:
    start: int
    raw: str
    value: float
    quantum: float
    percent: bool


def holds(cell: Cell, n: Number) -> bool:
    """The cell holds the sentence's number at its precision (its sign aside: the sentence's
    numbers are read without one, "−0.45" as 0.45)."""
    value = abs(cell.value)
    slack = n.quantum / 2 + 1e-9 * max(1.0, abs(n.value))
    if abs(value - n.value) <= slack:
        return True
    return n.percent and abs(value - n.value / 100) <= slack / 100


def _exact(cell: Cell, n: Number) -> bool:
    """The cell prints the number as the sentence does (not only rounded to it)."""
    digits = n.raw.rstrip("%×xX ").split(".")
    return cell.number.decimals == (len(digits[1]) if len(digits) > 1 else 0)


def _core(raw: str) -> str:
    """The digits of a number as printed ("93%" -> "93", "1,200" -> "1,200")."""
    m = re.match(r"[\d,]*\.?\d+", raw)
    return m.group(0) if m else raw


def _place(index: TableIndex) -> str:
    return f"{index.table.label or 'a table'} (p. {index.table.page})"


def _quote(cell: Cell) -> str:
    return f'"{cell.row_header}" × "{cell.col_header}"'


def _meant(index: TableIndex, cell: Cell, rows: set[str], cols: set[str]) -> list[Cell]:
    """The cells the sentence names where a number standing in `cell` should have been: its named
    rows in its named columns (in the cell's column, or row, where it names only the other)."""
    places = [(r, c) for r in (rows or {cell.row_header}) for c in (cols or {cell.col_header})]
    return [c for r, k in places if (c := index.cell(r, k)) is not None]


def bound_number(
    n: Number, s: Sentence, own: Sentence, indexes, numbers: list[Number], printed: set[str]
) -> Finding | None:
    """The finding for one number of the sentence that some cell holds (None: nothing to say).
    `own`: the number's stretch of the sentence (from the number before it to the one after it),
    where the rows and columns it is bound to are named; the rows (the subject, often named once)
    from the whole sentence where the stretch names none, the columns too where it names
    nothing of the table."""
    others = [m for m in numbers if m.start != n.start]
    wrong: list[tuple[TableIndex, Cell, set[str], set[str]]] = []
    for index in indexes:
        holding = [c for c in index.numbers if holds(c, n)]
        if _core(n.raw) in printed:
            holding = [c for c in holding if _exact(c, n)]
        if not holding:
            continue
        rows, cols = index.named(own, "row_header"), index.named(own, "col_header")
        if not rows and not cols:
            cols = index.named(s, "col_header")
        rows = rows or index.named(s, "row_header")  # the subject, named once for the sentence
        if not rows and not cols:
            continue  # the sentence names nothing of this table: nothing to bind it to there
        fits = [
            c for c in holding if (not rows or c.row_header in rows) and (not cols or c.col_header in cols)
        ]
        if fits:
            cell = fits[0]
            return Finding(
                None, f"{_place(index)}: {_quote(cell)} = {cell.text}", index.table.page, (n.start,)
            )
        for cell in holding:
            meant = _meant(index, cell, rows, cols)
            if not meant or all(any(holds(c, m) for m in others) for c in meant):
                return None  # the named cells are the sentence's other numbers: this one is unnamed
        wrong.append((index, holding[0], rows, cols))
    if not wrong:
        return None
    index, cell, rows, cols = wrong[0]
    off = (sorted(rows) if cell.row_header not in rows else []) + (
        sorted(cols) if cell.col_header not in cols else []
    )
    names = ", ".join(f'"{x}"' for x in off)
    return Finding(
        f"number {n.raw} is {_quote(cell)} in {_place(index)}; the sentence names {names}",
        f"{_place(index)}: {_quote(cell)} = {cell.text}",
        index.table.page,
        (n.start,),
        n.raw,
    )


def _pairs(index: TableIndex, rows: set[str], cols: set[str], matched: list[Cell]):
    """Pairs of cells a stated change may rest on, with what they share (a column or a row)."""
    out = []
    if len(rows) >= 2:
        for col in sorted(cols) or sorted({c.col_header for c in index.numbers}):
            for a, b in combinations(sorted(rows), 2):
                if (x := index.cell(a, col)) and (y := index.cell(b, col)):
                    out.append((x, y, col))
    if len(cols) >= 2:
        for row in sorted(rows) or sorted({c.row_header for c in index.numbers}):
            for a, b in combinations(sorted(cols), 2):
                if (x := index.cell(row, a)) and (y := index.cell(row, b)):
                    out.append((x, y, row))
    for a, b in combinations(matched, 2):
        if a is not b and (a.col_header == b.col_header or a.row_header == b.row_header):
            out.append((a, b, a.col_header if a.col_header == b.col_header else a.row_header))
    return out


def _tolerance(kind: str, claimed: float, quantum: float) -> float:
    return quantum / 2 + (1e-9 if kind == DIFFERENCE else 0.005 * abs(claimed))


def _prints_beside(cell: Cell, raw: str) -> bool:
    """The cell prints the claimed change beside its value ("0.851 (39%)": a table that gives
    each row's reduction in parentheses) — the paper's own figure, whatever recomputing gives."""
    core = _core(raw)
    return bool(re.search(rf"\(\s*[-+−]?{re.escape(core)}\s*%?\s*\)", cell.text))


def recomputed(claim, s: Sentence, indexes, matched: dict[int, list[Cell]]) -> Finding | None:
    """The finding for one stated change: confirmed, wrong, or None (no cells it rests on)."""
    kinds = [claim.kind]
    if claim.kind == DIFFERENCE and s.text[claim.end : claim.end + 2].strip().startswith("%"):
        kinds += [RELATIVE, ERROR_REDUCTION]  # "improves by 4.5%": points or relative
    nearest = None
    for index in indexes:
        rows, cols = index.named(s, "row_header"), index.named(s, "col_header")
        scale = 1.0 if all(abs(c.value) <= 1 for c in index.numbers) else 100.0
        for a, b, shared in _pairs(index, rows, cols, matched.get(id(index), [])):
            if beside := next((c for c in (a, b) if _prints_beside(c, claim.raw)), None):
                line = f"{claim.raw} is printed beside {beside.text!r} ({index.table.label}, {shared}, p. {index.table.page})"
                return Finding(None, line, index.table.page, (claim.start,))
            for kind in kinds:
                for expression in expressions(kind, a.value, b.value, scale):
                    try:
                        value = evaluate(expression)
                    except ArithmeticClaimError:
                        continue
                    quantum = claim.quantum if kind == DIFFERENCE else min(claim.quantum, 0.1)
                    line = f"{expression} = {shown(value, quantum)} ({index.table.label}, {shared}, p. {index.table.page})"
                    gap = abs(value - claim.value)
                    if gap <= _tolerance(kind, claim.value, claim.quantum):
                        return Finding(None, line, index.table.page, (claim.start,))
                    if nearest is None or gap < nearest[0]:
                        nearest = (gap, line, index.table.page)
    if nearest is None:
        return None
    _, line, page = nearest
    return Finding(f"{claim.raw} {NOT_FROM_TABLE}: {line}", line, page, (claim.start,), claim.raw)


def _direction(word: str, col: str, sentence: str) -> str:
    """ "min" or "max": what the superlative asks of the column ("best" is the highest unless the
    column or the sentence names an error, a loss, a rank or a time; "worst" the other way)."""
    if _SAYS_MIN.search(word):
        return "min"
    if _SAYS_MAX.search(word):
        return "max"
    lower = bool(_LOWER_BETTER.search(col)) or bool(_LOWER_BETTER.search(sentence))
    if word.lower() == "worst":
        lower = not lower
    return "min" if lower else "max"


def best_claim(claim, s: Sentence, indexes) -> Finding | None:
    """ "the best"/"highest"/"lowest" of the one row the sentence names, against the columns its
    clause names (else the sentence's: "… Precision 98.0 (the best of 6), Recall 98.0 (the worst
    of 6)" says each of its own column): it holds when the row is a column's extreme in some
    table that names it."""
    missed = None
    clause = Sentence.of(_clause(s.text, claim.start))
    for index in indexes:
        rows = {r for r in index.named(s, "row_header") if not _NO_SUBJECT.match(r.split(" / ")[-1].strip())}
        if len(rows) != 1:
            continue
        (row,) = rows
        cols = index.named(clause, "col_header") or index.named(s, "col_header")
        for col in sorted(cols) or sorted({c.col_header for c in index.numbers if c.row_header == row}):
            values = [c for c in index.numbers if c.col_header == col]
            own = index.cell(row, col)
            if len(values) < 3 or own is None:
                continue
            wants = _direction(claim.raw, col, s.text)
            extreme = (min if wants == "min" else max)(values, key=lambda c: c.value)
            where = f"{index.table.label} (p. {index.table.page}), {col}"
            if own.value == extreme.value:
                word = "lowest" if wants == "min" else "highest"
                return Finding(
                    None, f'{where}: "{row}" {own.text} is the {word} of the column', index.table.page
                )
            if missed is None:
                line = f'{where}: "{extreme.row_header}" has {extreme.text}, "{row}" {own.text}'
                missed = Finding(
                    f"'{claim.raw}' does not hold: {line}", line, index.table.page, (), claim.raw
                )
    return missed


def _clause(sentence: str, at: int) -> str:
    """The stretch of the sentence around position `at` between its commas, semicolons and colons
    (outside parentheses)."""
    depth, cuts = 0, []
    for i, ch in enumerate(sentence):
        depth += {"(": 1, ")": -1}.get(ch, 0)
        if ch in ",;:" and depth <= 0:
            cuts.append(i)
    start = max((c + 1 for c in cuts if c < at), default=0)
    end = min((c for c in cuts if c >= at), default=len(sentence))
    return sentence[start:end]


# the unit a change is stated in, right after its number
_UNIT_AFTER = re.compile(r"\s*(%|points?|pp|percent(?:age points?)?|times|bleu|f1|accuracy)\b")


def _stated_in_text(claim, sentence: str, text: str) -> str:
    """The claimed change with the word after it ("6 points", "4.5%") where the paper's running
    text (`text`, lower case) prints it so: the paper's own figure, whatever recomputing a table
    gives ("outperforms previous … approaches by 6 points in accuracy" of 2kenize, whose table's
    closest pair differs by 4); "" when it does not."""
    after = _UNIT_AFTER.match(sentence[claim.end :].lower())
    if not after or not text:
        return ""
    said = f"{claim.raw}{'' if after.group(1) == '%' else ' '}{after.group(1)}"
    found = re.search(rf"(?<![\d.]){re.escape(claim.raw)}\s*{re.escape(after.group(1))}\b", text)
    return said if found else ""


def table_findings(
    sentence: str, rest: str, numbers, indexes: list[TableIndex], printed=frozenset(), text: str = ""
) -> list[Finding]:
    """What the tables say about a sentence (see the module's docstring). `rest`: the sentence
    with names and citations blanked (its claims are read there); `numbers`: its checkable
    numbers as (start, raw, value, quantum, percent); `printed`: the numbers as the paper's
    running text prints them; `text`: that text, lower case (a change it states is not
    recomputed)."""
    if not indexes:
        return []
    s = Sentence.of(sentence)
    named = {m.group(0).lower() for m in _TABLE_LABEL.finditer(sentence)}
    if named & {(i.table.label or "").lower() for i in indexes}:  # "in Table 5": that table only
        indexes = [i for i in indexes if (i.table.label or "").lower() in named]
    numbers = [Number(*n) for n in numbers]
    stated = claims(rest)
    claimed = {c.start for c in stated}
    plain = [n for n in numbers if n.start not in claimed]
    matched = {id(index): [c for c in index.numbers for n in plain if holds(c, n)] for index in indexes}
    found: list[Finding] = []
    for claim in stated:
        finding = (
            best_claim(claim, s, indexes) if claim.kind == BEST else recomputed(claim, s, indexes, matched)
        )
        if finding is not None and finding.reason and claim.kind != BEST:
            if said := _stated_in_text(claim, s.text, text):
                finding = Finding(None, f"the paper's text states “{said}”", finding.page, (claim.start,))
        if finding is not None:
            found.append(finding)
        elif claim.kind != BEST:  # no cells it rests on: its number is bound like any other
            plain += [n for n in numbers if n.start == claim.start]
    starts = sorted(n.start for n in numbers)
    for n in plain:
        before = max((m.start + len(m.raw) for m in numbers if m.start < n.start), default=0)
        after = min((m for m in starts if m > n.start), default=len(sentence))
        own = Sentence.of(sentence[before:after])
        finding = bound_number(n, s, own, indexes, plain, printed)
        if finding is not None:
            found.append(finding)
    return found
