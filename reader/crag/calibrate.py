"""Run a labelled question set through the CRAG pipeline for a grid of settings, and choose one.

A setting is the routing rule with its thresholds (`Setting`): the count rule with a grade
threshold, or the confidence rule with a grade threshold, theta_high and theta_low. Every
setting answers every question (the response cache makes the calls settings share free), and
`recommend` picks the best accuracy, then the fewest LLM calls per question, then the
earlier setting in the grid.

A question file is JSONL, one object per line:

    {"id": "q01", "question": "...", "paper": "<file name or sha256> | null",
     "answer_paper": "<file name or sha256> | [<file name>, ...] | \"none\"",
     "expected_terms": ["<term>", ...]}

`paper` scopes the question to one paper (null: the whole library);
`answer_paper` is the paper whose text answers it, a list of papers when the
answer needs several (a two-paper question), or "none" when no paper in the
library can. `expected_terms` (optional, answerable questions only) lists short
strings a right answer must contain; "a|b" inside one term accepts either.

An answerable question counts as right when the answer is not the not-found
sentinel, cites at least one passage of every answer paper and contains every
expected term (see `term_found` for how tolerant that match is); an
unanswerable one when the answer is the sentinel.
"""

from __future__ import annotations

import dataclasses
import itertools
import json
import math
import re
import unicodedata
from collections import Counter
from collections.abc import Callable, Sequence
from dataclasses import dataclass, fields
from pathlib import Path

from reader.config import CragSettings
from reader.config.declare import registered
from reader.crag.pipeline import CragConfig, crag_config
from reader.errors import ReaderError


@dataclass
class LabelledQuestion:
    id: str
    question: str
    paper: str | None  # scope reference
    answer_papers: tuple[str, ...] = ()  # empty: no paper answers it
    expected_terms: tuple[str, ...] = ()

    @property
    def answerable(self) -> bool:
        return bool(self.answer_papers)

    @property
    def answer_paper(self) -> str | None:
        """The first answer paper (None when unanswerable)."""
        return self.answer_papers[0] if self.answer_papers else None


def _answer_papers(value, where: str) -> tuple[str, ...]:
    if value in (None, "", "none"):
        return ()
    if isinstance(value, str):
        return (value,)
    if isinstance(value, list) and value and all(isinstance(v, str) and v and v != "none" for v in value):
        return tuple(dict.fromkeys(value))
    raise ReaderError(
        f'{where}: "answer_paper" must be a file name, a non-empty list of file '
        f'names or "none" (got {value!r})'
    )


def _expected_terms(value, where: str) -> tuple[str, ...]:
    if value is None:
        return ()
    if isinstance(value, list) and all(
        isinstance(v, str) and any(part.strip() for part in v.split("|")) for v in value
    ):
        return tuple(value)
    raise ReaderError(f'{where}: "expected_terms" must be a list of non-empty strings (got {value!r})')


def load_questions(path: str | Path) -> list[LabelledQuestion]:
    path = Path(path)
    try:
        lines = path.read_text(encoding="utf-8").splitlines()
    except OSError as exc:
        raise ReaderError(f"{path}: cannot read the question file ({exc.strerror})") from exc
    out: list[LabelledQuestion] = []
    for n, line in enumerate(lines, 1):
        if not line.strip():
            continue
        where = f"{path}:{n}"
        try:
            row = json.loads(line)
            answer = row["answer_paper"]
            question = row["question"]
            if not isinstance(question, str) or not question.strip():
                raise TypeError('"question" must be a non-empty string')
            paper = row.get("paper")
            if paper is not None and not isinstance(paper, str):
                raise TypeError('"paper" must be a file name or null')
        except (json.JSONDecodeError, KeyError, TypeError, AttributeError) as exc:
            raise ReaderError(
                f'{where}: each line must be a JSON object with "question" and "answer_paper" ({exc})'
            ) from None
        answer_papers = _answer_papers(answer, where)
        terms = _expected_terms(row.get("expected_terms"), where)
        if terms and not answer_papers:
            raise ReaderError(f'{where}: "expected_terms" given for a question no paper answers')
        out.append(
            LabelledQuestion(
                id=str(row.get("id") or f"line{n}"),
                question=question,
                paper=paper,
                answer_papers=answer_papers,
                expected_terms=terms,
            )
        )
    if not out:
        raise ReaderError(f"{path}: no questions in the file")
    return out


# ------------------------------------------------------------ expected terms

_NUMBER_WORDS = (
    "zero",
    "one",
    "two",
    "three",
    "four",
    "five",
    "six",
    "seven",
    "eight",
    "nine",
    "ten",
    "eleven",
    "twelve",
    "thirteen",
    "fourteen",
    "fifteen",
    "sixteen",
    "seventeen",
    "eighteen",
    "nineteen",
    "twenty",
)
_SCALES = {"k": "thousand", "m": "million", "b": "billion"}
_DASHES = "-\u2010\u2011\u2012\u2013\u2014\u2212"
# a comma or thin space between digit groups: "10,000" reads as "10000"
_GROUP_SEPARATOR = re.compile(r"(?<=\d)[,\u2009\u202f](?=\d{3}(?!\d))")
_PIECES = re.compile(r"[0-9]+|[a-z]+|[^\W\d_a-z]+|[\W_]+")


def _normalise(text: str) -> str:
    text = unicodedata.normalize("NFKC", text).lower().replace("\u00ad", "")
    return _GROUP_SEPARATOR.sub("", text)


def _kind(piece: str) -> str:
    if piece.isdigit():
        return "digit"
    if re.fullmatch(r"[a-z]+", piece):
        return "latin"
    if re.fullmatch(r"[\W_]+", piece):
        return "sep"
    return "other"  # CJK and other scripts: matched literally


def _term_regex(term: str) -> str:
    pieces = _PIECES.findall(_normalise(term).strip())
    while pieces and _kind(pieces[0]) == "sep":
        pieces.pop(0)
    while pieces and _kind(pieces[-1]) == "sep":
        pieces.pop()
    if not pieces:
        return r"(?!)"
    kinds = [_kind(p) for p in pieces]
    out: list[str] = []
    for i, (piece, kind) in enumerate(zip(pieces, kinds)):
        if i and kind != "sep" and kinds[i - 1] != "sep":
            out.append(r"\s?")  # "28.9M" also as "28.9 M", "ACE2005" as "ACE 2005"
        if kind == "sep":
            out.append(_separator_regex(piece, kinds[i - 1], kinds[i + 1]))
        elif kind == "digit":
            out.append(_digits_regex(pieces, kinds, i))
        elif kind == "latin":
            out.append(
                _word_regex(piece, kinds[i - 1] if i else None, kinds[i + 1] if i + 1 < len(kinds) else None)
            )
        else:
            out.append(re.escape(piece))
    lead = r"(?<![a-z0-9])" + (r"(?<!\d[.,])" if kinds[0] == "digit" else "")
    if kinds[-1] == "latin":
        trail = r"(?:e?s)?(?![a-z0-9])"  # plurals: "CRFs"
    elif kinds[-1] == "digit":
        trail = r"(?![a-z0-9])(?![.,]\d)"
    else:
        trail = ""
    return lead + "".join(out) + trail


def _separator_regex(piece: str, before: str, after: str) -> str:
    """Punctuation or space between two pieces of a term."""
    if before == after == "digit":  # inside a number: "27.2", "35:28", "40-90"
        mark = piece.strip()
        if mark == ".":
            return ""  # the fraction adds its own point
        if mark and all(c in _DASHES for c in mark):
            return rf"\s*[{_DASHES}]\s*"
        return r"\s*" + re.escape(mark) + r"\s*" if mark else r"\s+"
    return r"[\W_]{0,3}"  # between words: "Sent-BERT", "Sent BERT", "SentBERT"


def _digits_regex(pieces: list[str], kinds: list[str], i: int) -> str:
    """A run of digits: a fraction's digits with any trailing zeros, a small whole number also
    as a word, anything else as it stands."""
    piece = pieces[i]
    prev_kind = kinds[i - 1] if i else None
    next_kind = kinds[i + 1] if i + 1 < len(kinds) else None
    inside_number_before = prev_kind == "sep" and i >= 2 and kinds[i - 2] == "digit"
    inside_number_after = next_kind == "sep" and i + 2 < len(kinds) and kinds[i + 2] == "digit"
    if inside_number_before and pieces[i - 1].strip() == ".":  # a fraction: "0.80" ~ "0.8"
        kept = piece.rstrip("0")
        return rf"\.{kept}0*" if kept else r"(?:\.0+)?"
    if (
        piece == str(int(piece))
        and int(piece) < len(_NUMBER_WORDS)
        and not inside_number_before
        and not inside_number_after
        and prev_kind in (None, "sep")
        and next_kind in (None, "sep")
    ):
        return f"(?:{piece}|{_NUMBER_WORDS[int(piece)]})"  # "6" ~ "six"
    return piece


def _word_regex(piece: str, prev_kind: str | None, next_kind: str | None) -> str:
    """A Latin word: a number word also as digits, a scale after a number also in full."""
    if piece in _NUMBER_WORDS:
        return f"(?:{piece}|{_NUMBER_WORDS.index(piece)})"
    if piece in _SCALES and prev_kind == "digit" and next_kind is None:
        return f"(?:{piece}|{_SCALES[piece]})"
    return re.escape(piece)


def term_found(term: str, answer: str) -> bool:
    """Whether `answer` contains `term`: case-insensitive; surrounding punctuation, spaces or hyphens
    between words ("Sent-BERT" ~ "Sent BERT"), thousands separators ("10,000" ~ "10000"),
    trailing decimal zeros ("0.80" ~ "0.8"), "81.1M" ~ "81.1 million" and small numbers written as
    words ("six" ~ "6") tolerated; "a|b" accepts either. A term never matches inside a longer
    word or number ("39" is not in "139" or "0.39"); CJK text next to a term is no obstacle."""
    text = _normalise(answer)
    return any(re.search(_term_regex(part), text) for part in term.split("|") if part.strip())


def missing_terms(terms, answer: str) -> list[str]:
    return [term for term in terms if not term_found(term, answer or "")]


def percentile(values: Sequence[float], q: float) -> float:
    """Nearest-rank percentile (q in 0..100); 0.0 for no values."""
    if not values:
        return 0.0
    ordered = sorted(values)
    rank = max(1, math.ceil(q / 100 * len(ordered)))
    return ordered[rank - 1]


def _resolve(ref: str | None, library: dict[str, str], qid: str) -> str | None:
    if ref is None:
        return None
    if ref in library:
        return library[ref]
    raise ReaderError(
        f"question {qid}: paper {ref!r} is not in the library; "
        f"ingest it first (reader ingest ../shared/papers/)"
    )


def score_outcome(q: LabelledQuestion, expected_id, result) -> dict:
    """`expected_id`: the library id of the answer paper, a list of them (every one must be cited),
    or None for an unanswerable question."""
    cited = sorted({s.paper_id for s in result.sources if s.paper_id})
    if expected_id is None:
        expected = []
    elif isinstance(expected_id, str):
        expected = [expected_id]
    else:
        expected = list(expected_id)
    missing = missing_terms(q.expected_terms, result.answer) if q.answerable else []
    cites_all = bool(expected) and all(pid in cited for pid in expected)
    if q.answerable:
        right = (not result.not_found) and cites_all and not missing
    else:
        right = result.not_found
    return {
        "id": q.id,
        "answerable": q.answerable,
        "right": right,
        "not_found": result.not_found,
        "route": result.route,
        "confidence": result.confidence,
        "grounded": result.grounded,
        "cited_papers": cited,
        "cites_answer_papers": cites_all if q.answerable else None,
        "terms_right": (not missing) if q.answerable and q.expected_terms else None,
        "missing_terms": missing,
        "llm_calls": result.llm_calls,
        "seconds": round(result.seconds, 2),
        "fallback_used": result.fallback_used,
        "answer": result.answer,
        "quoted": result.quoted,
        # what the answer was written from: a refusal with evidence in hand is the writer's
        "evidence": [
            {"paper_id": c.paper_id, "pages": c.pages, "text": (c.refined or c.text)[:400]}
            for c in result.sources
        ],
        # the separation figure: how sure the grader was of its best passage
        "best_p_yes": max(
            (c.grade.p_yes for c in result.graded if c.grade is not None and c.grade.p_yes is not None),
            default=None,
        ),
    }


_DEFAULT = CragSettings()
_DECLARED = {entry.path[-1]: entry.declaration for entry in registered(CragSettings)}
# the grid's dimensions, as `grid` and `reader calibrate` name them, and the setting each varies,
# in the order the grid nests them (the first setting of a tie is recommended)
DIMENSIONS = {
    "graders": "grader",
    "theta_highs": "theta_high",
    "theta_lows": "theta_low",
    "refusals": "refusal",
    "ungrounded": "ungrounded",
    "quote_thresholds": "quote_threshold",
    "answer_p_yes": "answer_p_yes",
}
# settings that apply only under another's value; otherwise they keep their default
_APPLIES = {
    "theta_high": ("routing", "confidence"),
    "theta_low": ("routing", "confidence"),
    "answer_p_yes": ("refusal", "p_yes"),
    "evidence_p_yes": ("refusal", "p_yes"),
    "grader_low": ("grader", True),
    "grader_high": ("grader", True),
}


@dataclass(frozen=True)
class Setting(CragSettings):
    """One point of the grid: the question pipeline's settings (reader.config.CragSettings:
    routing, threshold, theta_high, theta_low, quote_threshold, who may refuse, what an
    unsupported answer becomes, the "p_yes" rule's thresholds), with its label and JSON."""

    def applies(self, name: str) -> bool:
        """Whether the setting `name` takes part here (the thetas only in confidence routing …)."""
        condition = _APPLIES.get(name)
        return condition is None or getattr(self, condition[0]) == condition[1]

    @property
    def label(self) -> str:
        quote = "off" if self.quote_threshold is None else f"{self.quote_threshold:g}"
        who = {
            "grader": ", grader refuses",
            "p_yes": f", answers at P(YES) {self.answer_p_yes:g} from {self.evidence_p_yes:g}",
        }
        rest = (
            f"quote {quote}"
            + who.get(self.refusal, "")
            + (", unsupported withheld" if self.ungrounded == "refuse" else "")
        )
        if self.grader:
            rest += f", relevance grader {self.grader_low:g}–{self.grader_high:g}"
        if self.routing == "confidence":
            return f"confidence {self.threshold:g} / {self.theta_high:g} / {self.theta_low:g}, {rest}"
        return f"counts {self.threshold:g}, {rest}"

    def config(self) -> CragConfig:
        return crag_config(self)

    def to_json(self) -> dict:
        """Every declared CRAG setting that takes part in this point, by name."""
        return {f.name: getattr(self, f.name) for f in fields(CragSettings) if self.applies(f.name)}


def _given(name: str, values) -> tuple:
    """The values of one setting the grid varies: its default when none are given; a value its
    declaration does not offer is refused."""
    if values is None:
        return (getattr(_DEFAULT, name),)
    choices = getattr(_DECLARED[name].parse, "choices", None)
    unknown = sorted(set(values) - set(choices)) if choices else []
    if unknown:
        raise ReaderError(f"unknown {name} {', '.join(unknown)}: use {', '.join(choices)} or several")
    return tuple(values)


def _point(routing: str, threshold: float, chosen: dict) -> Setting | None:
    """The setting for one combination: a value that does not apply falls back to its default;
    None when theta_low is not below theta_high."""
    point = Setting(routing=routing, threshold=threshold, **chosen)
    defaults = {name: getattr(_DEFAULT, name) for name in chosen if not point.applies(name)}
    point = dataclasses.replace(point, **defaults)
    return point if point.theta_low < point.theta_high or routing == "counts" else None


def grid(
    thresholds: Sequence[float],
    *,
    routings: Sequence[str] | None = None,
    keep_thresholds: Sequence[float] | None = None,
    **dimensions: Sequence | None,
) -> list[Setting]:
    """Every combination of the values given for the CRAG settings (`DIMENSIONS`: graders,
    theta_highs, theta_lows, refusals, ungrounded, quote_thresholds, answer_p_yes), theta_low
    below theta_high; the count rule ignores the thetas and only the "p_yes" refusal rule takes
    `answer_p_yes` (each above the configured evidence threshold). A dimension not given (None)
    takes the default setting's value (reader.config.CragSettings).
    The confidence rule keeps passages by P(YES), on another scale than the count rule's parsed
    grades (0.8 / 0.4 / 0.2), so it takes its thresholds from `keep_thresholds` when given.
    The quote threshold changes no LLM call (it only decides what a refusal becomes), so with the
    response cache on its values cost nothing beyond the first."""
    unknown = sorted(set(dimensions) - set(DIMENSIONS))
    if unknown:
        raise TypeError(f"grid() has no dimension {', '.join(unknown)}")
    values = {name: _given(name, dimensions.get(dimension)) for dimension, name in DIMENSIONS.items()}
    low = [a for a in values["answer_p_yes"] if not _DEFAULT.evidence_p_yes <= a <= 1.0]
    if low:
        raise ReaderError(
            f"--answer-p-yes {', '.join(f'{a:g}' for a in low)}: give probabilities between "
            f"the evidence threshold {_DEFAULT.evidence_p_yes:g} and 1"
        )
    points = [
        _point(routing, threshold, dict(zip(values, combination)))
        for routing in _given("routing", routings)
        for threshold in (keep_thresholds if routing == "confidence" and keep_thresholds else thresholds)
        for combination in itertools.product(*values.values())
    ]
    out = list(dict.fromkeys(point for point in points if point is not None))  # in order, once each
    if not out:
        raise ReaderError("the grid is empty: give theta_low values below theta_high")
    return out


def summarise(setting: Setting | float, rows: list[dict]) -> dict:
    setting = setting if isinstance(setting, Setting) else Setting(threshold=setting)
    answerable = [r for r in rows if r["answerable"]]
    unanswerable = [r for r in rows if not r["answerable"]]
    answered = [r for r in rows if not r["not_found"]]
    with_terms = [r for r in answerable if r.get("terms_right") is not None]

    def share(part, whole):
        return round(len(part) / len(whole), 3) if whole else None

    return {
        "threshold": setting.threshold,
        "setting": setting.to_json(),
        "label": setting.label,
        "n": len(rows),
        "routes": dict(Counter(r["route"] for r in rows)),
        "answer_accuracy": share([r for r in answerable if r["right"]], answerable),
        "refusal_accuracy": share([r for r in unanswerable if r["right"]], unanswerable),
        "accuracy": share([r for r in rows if r["right"]], rows),
        # answerable questions with expected terms whose answer holds all of them (cited or not)
        "terms_right": share([r for r in with_terms if r["terms_right"]], with_terms),
        "grounded_rate_of_answers": share([r for r in answered if r["grounded"]], answered),
        "llm_calls_mean": round(sum(r["llm_calls"] for r in rows) / len(rows), 2) if rows else 0,
        "latency_p50_s": percentile([r["seconds"] for r in rows], 50),
        "latency_p95_s": percentile([r["seconds"] for r in rows], 95),
        "questions": rows,
    }


def recommend(summaries: Sequence[dict]) -> dict | None:
    """The best accuracy, then the fewest calls per question, then the earliest in the grid."""
    if not summaries:
        return None
    return min(
        enumerate(summaries),
        key=lambda item: (-(item[1]["accuracy"] or 0.0), item[1]["llm_calls_mean"], item[0]),
    )[1]


def run_calibration(
    questions: Sequence[LabelledQuestion],
    thresholds: Sequence[float | Setting],
    run_one: Callable[[str, str | None, object], object],
    *,
    library: dict[str, str],
    on_progress: Callable[[str], None] | None = None,
    on_row: Callable[[Setting, dict], None] | None = None,
) -> dict:
    """`run_one(question, paper_id, config) -> AskResult` for every setting (a bare number is
    the count rule at that grade threshold); returns the report as a dict, with the
    recommended setting. Questions run one after another, each through every setting, so a run
    cut short has every setting's answer for the questions it reached (`on_row` sees each)."""
    resolved = [
        (
            q,
            _resolve(q.paper, library, q.id),
            [_resolve(ref, library, q.id) for ref in q.answer_papers] or None,
        )
        for q in questions
    ]
    settings = [t if isinstance(t, Setting) else Setting(threshold=t) for t in thresholds]
    rows: dict[Setting, list[dict]] = {setting: [] for setting in settings}
    for n, (q, scope, expected) in enumerate(resolved, 1):
        for setting in settings:
            result = run_one(q.question, scope, setting.config())
            row = score_outcome(q, expected, result)
            rows[setting].append(row)
            if on_row:
                on_row(setting, row)
            if on_progress:
                mark = "ok" if row["right"] else "WRONG"
                on_progress(
                    f"[{n}/{len(resolved)}] {q.id} {setting.label}: "
                    f"{result.route}, {mark}, {result.seconds:.1f} s"
                )
    report: dict = {
        "n_questions": len(questions),
        "thresholds": [summarise(setting, rows[setting]) for setting in settings],
    }
    best = recommend(report["thresholds"])
    report["recommended"] = best["setting"] if best else None
    return report


def format_report(report: dict) -> str:
    def pct(value):
        return "-" if value is None else f"{value:.0%}"

    lines = [
        f"{report['n_questions']} questions",
        "setting (routing threshold [/ high / low])  routes (correct/ambiguous/incorrect)  answer acc  "
        "terms  refusal acc  overall  grounded  calls/q  p50 s  p95 s",
    ]
    for t in report["thresholds"]:
        routes = t["routes"]
        route_text = f"{routes.get('correct', 0)}/{routes.get('ambiguous', 0)}/{routes.get('incorrect', 0)}"
        label = t.get("label") or f"counts {t['threshold']:g}"
        lines.append(
            f"{label:<42}  {route_text:<36}  {pct(t['answer_accuracy']):<10}  "
            f"{pct(t.get('terms_right')):<5}  {pct(t['refusal_accuracy']):<11}  {pct(t['accuracy']):<7}  "
            f"{pct(t['grounded_rate_of_answers']):<8}  {t['llm_calls_mean']:<7}  "
            f"{t['latency_p50_s']:<5}  {t['latency_p95_s']}"
        )
    best = recommend(report["thresholds"])
    if best is not None:
        lines.append(
            f"recommended: {best['label']} (best accuracy {pct(best['accuracy'])}, "
            f"then fewest calls {best['llm_calls_mean']}/question)"
        )
    return "\n".join(lines)


@dataclass
class CalibrationReport:
    """run_calibration's report with the two ways `reader calibrate` prints it."""

    data: dict

    def to_json(self) -> dict:
        return self.data

    def text(self) -> str:
        return format_report(self.data)


def select_questions(
    questions: list[LabelledQuestion], source: str, ids: list[str] | None = None, limit: int | None = None
) -> list[LabelledQuestion]:
    """The questions with these ids (all when None), at most `limit` of them."""
    if ids:
        unknown = sorted(set(ids) - {q.id for q in questions})
        if unknown:
            raise ReaderError(f"{source}: no question with id {', '.join(unknown)}")
        questions = [q for q in questions if q.id in ids]
    return questions[:limit]
