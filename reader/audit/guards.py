"""Deterministic guards: things a sentence names that occur nowhere in the paper.

A small verifier model says YES too easily to a fluent sentence that shares
words with the evidence. Three kinds of detail are checkable without a model,
against everything the paper contains (text, captions, references, title,
abstract):

- numbers, normalised: "0.3%", "0.30 %", "1,200", "1.2k", "3×". A number in
  the sentence is found when some number in the paper rounds to it at the
  sentence's precision ("84.3" matches "84.27"); a percentage also matches the
  fraction ("84.3%" ~ "0.843"). Integers below 10 are not checked (counts,
  section numbers), nor is anything inside a name ("GPT-4", "ResNet-50").
- names: acronyms and named methods, datasets and baselines, i.e. tokens with
  two capitals or letters mixed with digits ("BERT", "NEXUS", "RoBERTa", "T5").
  Hyphenated names are found whole or by their name-like parts ("BERT-large").
  An acronym the sentence defines ("dendritic cells (DCs)") is found when its
  expansion is in the paper. Names written as plain words count too: a
  capitalised word in mid-sentence that is rare in English ("Okafor",
  "Paperwise"; wordfreq's Zipf frequency below 4.5) and an identifier no
  dictionary knows ("fast_align", "zhconv"). A name shortly after a negation
  ("does not compare with XLNet") is not checked: a critique may name what is
  missing.
- citation markers: "[12]", "[3, 5-7]", "(Smith et al., 2020)",
  "Smith and Jones (2019)": numbers must appear as markers in the paper, and an
  author-year citation needs its year among the first printed after the surname
  somewhere in the paper (a year printed before it is another work's).
- training: a sentence that has something trained, pre-trained or fine-tuned,
  about a paper whose text never speaks of training, tuning or supervision
  (the README's sample: "The method is trained on a set of 14 shared papers"
  of a rule-based ingest step).
- averages: a sentence that says the paper gives an average, mean or median of
  something the paper never averages (reader/audit/averages.py; the sample:
  "the average number of passages per paper" of a table giving their range).
- gains as levels: a figure given as a score or what something yields ("BLEU-4
  scores of around 2 BLEU points") that the paper prints only as a gain
  ("improvements of around 2 BLEU points over …"; reader/audit/gains.py).
- correlations as scores: a figure given as a score ("the average human score … is 0.89") that
  the paper prints only as a correlation or agreement ("0.89 Kendall's τ";
  reader/audit/correlations.py).
- open problems as results: "key results include the development of robust evaluation
  protocols" of a paper that names that development only as an open problem
  (reader/audit/open_problems.py).

With the paper's tables (PaperFacts.tables), a number a table cell holds is also checked against
the cell's row and column headers, and a difference, ratio or relative change the sentence states
is recomputed from the cells it rests on (reader/audit/table_checks.py); a derived number so
confirmed is not "a number not found in the paper".

`check_sentence` returns one reason per missing detail; an empty list means
the guards found nothing wrong.
"""

from __future__ import annotations

import bisect
import re
from dataclasses import dataclass, field

from reader.audit.averages import average_reasons
from reader.audit.correlations import correlation_as_score_reasons
from reader.audit.gains import gain_as_level_reasons
from reader.audit.metrics_named import method_as_metric_reasons
from reader.audit.open_problems import open_problem_as_result_reasons, plan_as_done_reasons
from reader.text.figures import cited_figures
from reader.text.words import zipf_en

_NUMBER = re.compile(
    r"(?<![\w.])(\d{1,3}(?:,\d{3})+|\d+)(?:\.(\d+))?"
    r"(?:\s?(%|×|x\b|X\b|times\b|[kK]\b|M\b|B\b)|\s(thousand|million|billion)\b)?",
    re.ASCII,
)
# the years printed next after a surname, before any other citation or sentence begins: "et al.,
# 2019, 2021", "(2019a)", ", Lueck. 2020"
_YEARS_AFTER = re.compile(r"[^;()\d]{0,300}?\(?((?:19|20)\d\d[a-z]?(?:\s*,\s*(?:19|20)\d\d[a-z]?)*)")
_NAME = re.compile(r"(?<![\w-])[A-Za-z][A-Za-z0-9]*(?:[-/][A-Za-z0-9]+)*(?![\w-])", re.ASCII)
BRACKET_CITE = re.compile(r"\[(\d{1,3}(?:\s*[-–,;]\s*\d{1,3})*)\]")
AUTHOR_YEAR = re.compile(
    r"(?P<name>[A-Z][A-Za-z'’\-]+)(?:\s+(?:et\s+al\.?|and\s+[A-Z][A-Za-z'’\-]+|&\s+[A-Z][A-Za-z'’\-]+))?"
    r",?\s*\(?(?P<year>(?:19|20)\d\d)[a-z]?\)?"
)
_WORD = re.compile(r"[A-Za-z0-9]+")
_PRINTED = re.compile(r"(?<![\w.])[\d,]*\.?\d+")

# Generic acronyms a critique may use without the paper having to contain them.
_GENERIC_NAMES = {
    "ai",
    "ml",
    "nlp",
    "llm",
    "llms",
    "sota",
    "gpu",
    "gpus",
    "cpu",
    "cpus",
    "tpu",
    "api",
    "url",
    "pdf",
    "ii",
    "iii",
    "iv",
    "vi",
    "vii",
    "viii",
    "ix",
    "xi",
    "ok",
    "eg",
    "ie",
    "usa",
    "us",
    "uk",
    "eu",
    "phd",
    "faq",
    "etc",
    "vs",
    "id",
    "ids",
    "os",
    "io",
}
_TRAINING_CLAIM = re.compile(r"\b(?:(?:pre|re)-?)?train(?:ed|ing|s)?\b|\bfine-?tun(?:ed|ing|es|e)\b", re.I)
# over the paper's lower-cased text; not "learn": reference titles say "Learning" of papers that
# train nothing (the README's sample cites "Self-RAG: Learning to retrieve…")
_PAPER_TRAINS = re.compile(r"train|fine-?tun|supervis")
_NEGATION = re.compile(
    r"\b(?:not|no|never|neither|nor|lacks?|lacking|missing|absent|without|omits?|omitted|"
    r"fails?\s+to|\w+n't)\b|未|没有|缺少|缺乏|忽略|忽视|并无",
    re.IGNORECASE,
)
NEGATION_REACH = 60  # characters before a name in which a negation exempts it
# "81.1M" and "81.1 million" are one number (the s2orc note's "81.1 million papers" of "81.1M")
_SCALE = {"k": 1e3, "K": 1e3, "M": 1e6, "B": 1e9, "thousand": 1e3, "million": 1e6, "billion": 1e9}
_MIN_UNMARKED_INT = 10


@dataclass(frozen=True)
class Number:
    value: float
    quantum: float  # the sentence's precision: 0.1 for "84.3", 100 for "1.2k"
    percent: bool
    raw: str


def numbers_at(text: str) -> list[tuple[int, Number]]:
    """Each number of the text with where it starts."""
    out = []
    for m in _NUMBER.finditer(text):
        whole, frac, unit = m.group(1), m.group(2), m.group(3) or m.group(4) or ""
        value = float(whole.replace(",", "") + ("." + frac if frac else ""))
        quantum = 10.0 ** -(len(frac) if frac else 0)
        scale = _SCALE.get(unit, 1.0)
        out.append((m.start(), Number(value * scale, quantum * scale, unit == "%", m.group(0).strip())))
    return out


def parse_numbers(text: str) -> list[Number]:
    return [n for _, n in numbers_at(text)]


def _is_name(token: str) -> bool:
    """Two capitals, or letters then digits: "BERT", "RoBERTa", "T5"; a hyphenated
    token when one of its parts is ("BERT-large", not "anti-interleukin-2")."""
    parts = re.split(r"[-/]", token)
    if len(parts) > 1:
        return any(_is_name(p) for p in parts if p)
    if not token[:1].isalpha():
        return False
    capitals = sum(1 for c in token if c.isupper())
    return capitals >= 2 or any(c.isdigit() for c in token)


def _defined_acronyms(sentence: str) -> dict[str, str]:
    """Acronyms the sentence defines, with their expansion:
    "dendritic cells (DCs)" -> {"DCs": "dendritic cells"}."""
    defined = {}
    for m in re.finditer(r"\(([A-Za-z][A-Za-z0-9-]{1,11})\)", sentence):
        acronym = m.group(1)
        letters = [c.lower() for c in acronym.rstrip("s") if c.isalpha()]
        words = re.findall(r"[A-Za-z][A-Za-z0-9]*", sentence[: m.start()])
        for k in range(len(letters), min(len(letters) + 3, len(words)) + 1):
            initials = iter(w[0].lower() for w in words[-k:])
            if words[-k][0].lower() == letters[0] and all(ch in initials for ch in letters):
                defined[acronym] = " ".join(words[-k:]).lower()
                break
    return defined


def norm_token(token: str) -> str:
    return re.sub(r"[-/_]", "", token.lower())


def bracket_numbers(inner: str) -> set[int]:
    nums: set[int] = set()
    for part in re.split(r"\s*[,;]\s*", inner):
        bounds = re.split(r"\s*[-–]\s*", part)
        if len(bounds) == 2 and all(b.isdigit() for b in bounds):
            lo, hi = int(bounds[0]), int(bounds[1])
            if 0 <= hi - lo <= 50:
                nums.update(range(lo, hi + 1))
        elif part.isdigit():
            nums.add(int(part))
    return nums


@dataclass
class PaperFacts:
    """What the paper contains, indexed for the guards; `tables`, the paper's tables as cells
    (reader.text.grid.Table), for the checks of reader.audit.table_checks."""

    numbers: list[float] = field(default_factory=list)  # sorted
    tokens: set[str] = field(default_factory=set)  # normalised words and adjacent pairs
    citation_numbers: set[int] = field(default_factory=set)
    text_lower: str = ""
    words_joined: str = ""  # lower-case words separated by single spaces
    tables: list = field(default_factory=list)
    printed: set[str] = field(default_factory=set)  # numbers as the texts (not the tables) print them
    # the paper's figures by number ("3"): (page, caption), from its figure captions
    figures: dict[str, tuple[int, str]] = field(default_factory=dict)
    figures_named: set[str] = field(default_factory=set)  # "Figure 3" in the paper's own texts
    _table_index: list | None = field(default=None, repr=False, compare=False)
    _flat: str | None = field(default=None, repr=False, compare=False)

    @property
    def flat(self) -> str:
        """The text as printed, lower case, its whitespace runs one space each (built once): what
        the guards that read phrases around a figure search (gains, correlations, open problems)."""
        if self._flat is None:
            self._flat = " ".join(self.text_lower.split())
        return self._flat

    def table_index(self) -> list:
        """The tables indexed for reader.audit.table_checks, built once."""
        if self._table_index is None:
            from reader.audit.table_names import index_tables

            self._table_index = index_tables(self.tables)
        return self._table_index

    @classmethod
    def from_texts(
        cls, texts: list[str], tables: list | None = None, figures: dict | None = None
    ) -> PaperFacts:
        """The facts of these texts; `tables` (reader.text.grid.Table) adds their cells' texts too;
        `figures` ({"3": (page, caption)}) are the paper's figures a sentence may cite."""
        tables = list(tables or [])
        printed = {m.group(0) for t in texts if t for m in _PRINTED.finditer(t)}
        texts = list(texts) + [" ".join(cell for row in t.rows for cell in row) for t in tables]
        joined = "\n".join(t for t in texts if t)
        numbers = sorted({n.value for n in parse_numbers(joined)})
        tokens: set[str] = set()
        for line in joined.splitlines():
            words = _WORD.findall(line)
            for raw in _NAME.findall(line):
                tokens.add(norm_token(raw))
                tokens.update(norm_token(p) for p in re.split(r"[-/]", raw))
            for a, b in zip(words, words[1:]):
                tokens.add(norm_token(a + b))  # "BERT large" found for "BERT-large"
            tokens.update(norm_token(w) for w in words)
        cites: set[int] = set()
        for m in BRACKET_CITE.finditer(joined):
            cites |= bracket_numbers(m.group(1))
        for m in re.finditer(r"(?m)^\s*\[?(\d{1,3})[\].]\s", joined):  # reference list entries
            cites.add(int(m.group(1)))
        lower = joined.lower()
        words_joined = " " + " ".join(re.findall(r"[a-z0-9]+", lower)) + " "
        named = set(cited_figures(joined)) if figures else set()
        return cls(numbers, tokens, cites, lower, words_joined, tables, printed, dict(figures or {}), named)

    def has_number(self, n: Number) -> bool:
        candidates = [(n.value, n.quantum)]
        if n.percent:
            candidates.append((n.value / 100, n.quantum / 100))
        for value, quantum in candidates:
            slack = quantum / 2 + 1e-9 * max(1.0, abs(value))
            i = bisect.bisect_left(self.numbers, value - slack)
            if i < len(self.numbers) and self.numbers[i] <= value + slack:
                return True
        return False

    def has_name(self, token: str) -> bool:
        norm = norm_token(token)
        if norm in self.tokens or norm in _GENERIC_NAMES:
            return True
        if (norm.endswith("s") and norm[:-1] in self.tokens) or norm + "s" in self.tokens:
            return True  # plural on either side: "LLMs", "iPSC" ~ "iPSCs"
        parts = [p for p in re.split(r"[-/]", token) if p]
        if len(parts) > 1:
            return all(self.has_name(p) for p in parts if _is_name(p))
        return False

    def has_phrase(self, phrase: str) -> bool:
        """The words in this order, ignoring case, hyphens and line breaks."""
        words = re.findall(r"[a-z0-9]+", phrase.lower())
        return bool(words) and " ".join(words) in self.words_joined

    def has_author_year(self, surname: str, year: str) -> bool:
        """The paper cites the surname with this year: somewhere the first years printed after the
        surname ("Zamani et al., 2020", "Zamani … Lueck. 2020.", "Smith, 2019, 2021") include it. A
        year printed before it ("(Aliannejadi et al., 2019, 2021; Zamani et al., 2020)") is another
        work's."""
        for m in re.finditer(rf"(?<![a-z]){re.escape(surname.lower())}(?![a-z])", self.text_lower):
            years = _YEARS_AFTER.match(self.text_lower, m.end())
            if years and year in re.findall(r"(?:19|20)\d\d", years.group(1)):
                return True
        return False


def split_citations(sentence: str) -> tuple[list[tuple[str, str, str]], list[str], str]:
    """(author-year citations, bracket markers, the sentence with citations blanked)."""
    author_years: list[tuple[str, str, str]] = []
    brackets: list[str] = []
    spans: list[tuple[int, int]] = []
    for m in BRACKET_CITE.finditer(sentence):
        brackets.append(m.group(0))
        spans.append(m.span())
    for m in AUTHOR_YEAR.finditer(sentence):
        author_years.append((m.group(0), m.group("name"), m.group("year")))
        spans.append(m.span())
    blanked = list(sentence)
    for s, e in spans:
        blanked[s:e] = " " * (e - s)
    return author_years, brackets, "".join(blanked)


_PLAIN_WORD = re.compile(r"(?<![\w-])[A-Za-z][A-Za-z_]*[A-Za-z](?![\w-])")
# Below this Zipf frequency (wordfreq: 3 = once per million words) a capitalised word in mid-sentence
# is taken for a name; ordinary words (and common names such as Google or English) are above it.
PLAIN_NAME_ZIPF = 4.5


def _starts_sentence(text: str, position: int) -> bool:
    before = text[:position].rstrip()
    return not before or before[-1] in ".!?:;\"“‘'(。！？：；-•*#" or before[-1].isdigit()


def _looks_like_plain_name(token: str, *, sentence_initial: bool) -> bool:
    """A name written as an ordinary word: "Okafor", "Paperwise" in mid-sentence, or an identifier
    no dictionary knows ("fast_align", "zhconv"). Acronym-like names are checked by _is_name."""
    if _is_name(token) or len(token) < 3:
        return False
    if "_" in token:
        return True
    if token[0].isupper() and token[1:].islower():
        return not sentence_initial and zipf_en(token.lower()) < PLAIN_NAME_ZIPF
    return token.islower() and len(token) >= 4 and zipf_en(token) == 0.0


def worth_checking(n: Number) -> bool:
    """Small bare integers are counts and section numbers; everything else is checked."""
    has_unit = n.raw[-1:] in "%×xX" or n.raw.endswith("times") or n.raw[-1:] in _SCALE
    return has_unit or "." in n.raw or n.value >= _MIN_UNMARKED_INT


def _negated(sentence: str, position: int) -> bool:
    return bool(_NEGATION.search(sentence, max(0, position - NEGATION_REACH), position))


def check_sentence(sentence: str, facts: PaperFacts, *, restates: str = "") -> list[str]:
    """Reasons this sentence names something the paper does not contain ([] when none).
    `restates`: the paper's sentence it restates, if any: what that sentence prints is the paper's
    own claim, not contradicted by a reading of its tables (2kenize's "the best existing converter,
    OpenCC" is best in an error density, where lower is better; s2orc's "GROBID … an F1 of 0.89"
    is not Table 6's 0.89)."""
    author_years, brackets, rest = split_citations(sentence)
    reasons = _citation_reasons(author_years, brackets, facts) + _name_reasons(sentence, rest, facts)
    reasons += _figure_reasons(sentence, facts) + _training_reasons(sentence, rest, facts)
    reasons += average_reasons(sentence, facts) + gain_as_level_reasons(sentence, facts)
    reasons += correlation_as_score_reasons(sentence, facts) + open_problem_as_result_reasons(sentence, facts)
    reasons += plan_as_done_reasons(sentence, facts) + method_as_metric_reasons(sentence, facts)
    rest = _without_names(rest)
    accounted: set[int] = set()
    if facts.tables:
        findings = _table_findings(sentence, rest, facts)
        reasons += [f.reason for f in findings if f.reason and not _prints(restates, f.claimed)]
        accounted = {start for f in findings for start in f.numbers}
    for start, n in numbers_at(rest):
        if not worth_checking(n) or start in accounted:
            continue
        if not facts.has_number(n):
            reasons.append(f"number {n.raw} not found in the paper")
    return reasons


def _prints(text: str, words: str) -> bool:
    """`text` prints `words` as a whole ("0.89" not inside "0.891", "best" not in "bestow")."""
    return bool(words) and re.search(rf"(?<![\w.]){re.escape(words)}(?!\w|\.\d)", text, re.I) is not None


def _citation_reasons(author_years, brackets, facts: PaperFacts) -> list[str]:
    """A bracketed number or an author and year the paper's references do not have."""
    reasons = []
    for marker in brackets:
        missing = sorted(n for n in bracket_numbers(marker[1:-1]) if n not in facts.citation_numbers)
        if missing:
            reasons.append(f"citation {marker} not found in the paper")
    for raw, surname, year in author_years:
        if surname.lower() in {"in", "table", "figure", "section", "since", "until", "from"}:
            continue
        if not facts.has_author_year(surname, year):
            shown = raw.strip(" ,")
            if shown.count("(") > shown.count(")"):
                shown += ")"
            reasons.append(f"citation '{shown}' not found in the paper")
    return reasons


def _figure_reasons(sentence: str, facts: PaperFacts) -> list[str]:
    """A figure the sentence cites that the paper does not have ("Figure 7" of a paper with
    Figures 1-4): no caption of it, and the paper's text never names it (a caption the parser
    missed is still named in the text). Only where the paper's figure captions are known: a
    paper without any has no say."""
    if not facts.figures:
        return []
    return [
        f"Figure {number} not found in the paper (its figures: {', '.join(facts.figures)})"
        for number in cited_figures(sentence)
        if number not in facts.figures and number not in facts.figures_named
    ]


def figure_evidence(sentence: str, facts: PaperFacts) -> list[tuple[int, str]]:
    """The captions of the figures the sentence cites that the paper has: [(page, caption)]."""
    return [facts.figures[n] for n in cited_figures(sentence) if n in facts.figures]


def _name_reasons(sentence: str, rest: str, facts: PaperFacts) -> list[str]:
    """A name in `rest` (the sentence without its citations) the paper does not use.

    A sentence saying something is absent ("no comparison with XLNet") may name what the paper
    lacks: a name shortly after a negation is not checked. An acronym the sentence defines is
    found when its expansion is in the paper."""
    reasons = []
    defined = _defined_acronyms(sentence)
    names_seen: set[str] = set()
    for m in _NAME.finditer(rest):
        token = m.group(0)
        if not _is_name(token) or token in names_seen or _negated(sentence, m.start()):
            continue
        names_seen.add(token)
        if facts.has_name(token) or (token in defined and facts.has_phrase(defined[token])):
            continue
        reasons.append(f"name '{token}' not found in the paper")
    for m in _PLAIN_WORD.finditer(rest):
        token = m.group(0)
        if token in names_seen or _negated(sentence, m.start()):
            continue
        names_seen.add(token)
        if _looks_like_plain_name(token, sentence_initial=_starts_sentence(rest, m.start())) and not (
            facts.has_name(token) or facts.has_phrase(token)
        ):
            reasons.append(f"name '{token}' not found in the paper")
    return reasons


def _training_reasons(sentence: str, rest: str, facts: PaperFacts) -> list[str]:
    """A sentence that has something trained or fine-tuned, about a paper that never speaks of
    training, tuning or supervision (a small writer lends every method a training set)."""
    m = _TRAINING_CLAIM.search(rest)
    if not m or _negated(sentence, m.start()) or _PAPER_TRAINS.search(facts.text_lower):
        return []
    return [f"says something is {m.group(0).lower()}, but the paper never speaks of training"]


def _without_names(text: str) -> str:
    """Names blanked out: digits glued to words are part of a name, not numbers ("GPT-4",
    "interleukin-2")."""
    return _NAME.sub(
        lambda m: (
            " " * len(m.group(0))
            if _is_name(m.group(0)) or any(c.isdigit() for c in m.group(0))
            else m.group(0)
        ),
        text,
    )


def _table_findings(sentence: str, rest: str, facts: PaperFacts) -> list:
    from reader.audit.table_checks import table_findings

    numbers = [
        (start, n.raw, n.value, n.quantum, n.percent) for start, n in numbers_at(rest) if worth_checking(n)
    ]
    return table_findings(sentence, rest, numbers, facts.table_index(), facts.printed, facts.flat)


def table_evidence(sentence: str, facts: PaperFacts) -> list:
    """What the paper's tables say of the sentence (reader.audit.table_checks.Finding: a cell or a
    computation, confirming it or not), as check_sentence reads it; [] without tables."""
    if not facts.tables:
        return []
    return _table_findings(sentence, _without_names(split_citations(sentence)[2]), facts)
