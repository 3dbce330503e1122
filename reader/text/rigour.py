"""The rigour checklist's rules: what a reviewer checks first, found by rule in a paper's sentences.

Thirteen items (ITEMS): the datasets and their sizes, the baselines compared, the metrics,
ablations, a variance / confidence interval / significance test, the number of runs or seeds,
hyperparameters, compute or hardware, code and data availability, a limitations section, an
ethics statement and the paper's own stated contributions. For each, `RULES[key]` says whether
one sentence states it (and what it says, as a short value); `CUES[key]` are the looser words a
passage that states it would use, which decide which passages an extraction prompt is asked
about (reader.checklist). Every sentence of the paper is read, the reference list aside, so a
"not found" from the rules is a claim about the whole text.

Plain functions over plain data; no model, no database.
"""

from __future__ import annotations

import re
import unicodedata
from collections.abc import Callable, Iterable
from dataclasses import dataclass

from reader.text.sections import is_reference_list
from reader.text.split import split_sentences


@dataclass(frozen=True)
class Item:
    key: str
    label: str  # as the note's table names it
    question: str  # what the extraction prompt asks of a passage
    query: str  # what the paper's index is searched for


# The words for a dataset, singular and plural, as a regular expression's alternatives: the
# checklist's cue and size rule (rigour_find, rigour_experiments), the deep read's check of a claimed
# presence (reader.deepread.checked) and the extraction table's sentences about data (reader.table.cells).
DATASET_WORDS = r"data ?sets?|corpus|corpora"

ITEMS = [
    Item(
        "datasets",
        "Datasets and sizes",
        "Which data does the paper evaluate on, and how large is it (a number of examples, sentences, "
        "documents, participants or samples)?",
        "dataset corpus training set test set consists of examples sentences documents participants samples",
    ),
    Item(
        "baselines",
        "Baselines compared",
        "Which other methods, systems or models (named) does the paper compare its own against?",
        "baselines we compare with previous methods state of the art systems outperform",
    ),
    Item(
        "metrics",
        "Metrics",
        "Which evaluation metrics or measures does the paper report its results in?",
        "evaluation metric accuracy F1 precision recall score measured correlation",
    ),
    Item(
        "ablations",
        "Ablations",
        "Does the paper remove or replace a part of its method to measure what that part contributes?",
        "ablation study removing component without variant performance drops",
    ),
    Item(
        "variance",
        "Variance, CI or significance",
        "Does the paper give a standard deviation, standard error, confidence interval, error bars or a "
        "significance test (p-value) for its results?",
        "standard deviation confidence interval significance test p-value error bars variance",
    ),
    Item(
        "runs",
        "Runs or seeds",
        "Over how many runs, random seeds, folds or replicates are the results obtained?",
        "runs random seeds averaged over repeated trials cross-validation replicates",
    ),
    Item(
        "hyperparameters",
        "Hyperparameters",
        "Which hyperparameters or settings (learning rate, batch size, epochs, sizes) does the paper give?",
        "hyperparameters learning rate batch size epochs dropout optimizer set to tuned",
    ),
    Item(
        "compute",
        "Compute and hardware",
        "On what hardware (GPUs, CPUs, memory) or with how much compute time were the experiments run?",
        "GPU CPU hardware memory training time hours machine cluster",
    ),
    Item(
        "code",
        "Code available",
        "Does the paper say its code, software or implementation is available, and where?",
        "code software implementation available github release open source",
    ),
    Item(
        "data",
        "Data available",
        "Does the paper say its data, dataset or annotations are available, and where?",
        "data availability dataset publicly available release annotations download",
    ),
    Item(
        "limitations",
        "Limitations section",
        "Does the paper discuss its own limitations?",
        "limitations of this work our approach is limited threats to validity",
    ),
    Item(
        "ethics",
        "Ethics statement",
        "Does the paper give an ethics statement (ethical considerations, review board approval, consent)?",
        "ethical considerations ethics statement institutional review board approval informed consent",
    ),
    Item(
        "contributions",
        "Stated contributions",
        "What does the paper itself state as its contributions?",
        "our contributions are we propose we present we introduce this paper",
    ),
]
ITEM_KEYS = [item.key for item in ITEMS]
BY_KEY = {item.key: item for item in ITEMS}


@dataclass(frozen=True)
class Passage:
    """A passage of the paper with where it is (chunk_id None: not a stored passage)."""

    text: str
    section: str = ""
    page_start: int = 1
    page_end: int = 1
    chunk_id: int | None = None


@dataclass(frozen=True)
class Sentence:
    text: str  # as the paper gives it, spaces made single
    passage: Passage

    @property
    def plain(self) -> str:
        """The text the rules read: ligatures and widths unified, a word broken at a line's end
        ("signifi- cantly") joined."""
        return matchable(self.text)


@dataclass(frozen=True)
class Found:
    """What a rule found for an item: the sentence that states it and a short value."""

    sentence: Sentence
    value: str
    kind: str = ""  # variance: "spread", "test" or "claim" (significance said, no test or spread)


def matched_by(pattern: re.Pattern[str]) -> Callable[[Sentence], Found | None]:
    """The rule that finds an item in a sentence `pattern` matches, with what it matched."""

    def rule(s: Sentence) -> Found | None:
        m = pattern.search(s.plain)
        return Found(s, m.group(0)) if m else None

    return rule


def matchable(text: str) -> str:
    text = unicodedata.normalize("NFKC", text)
    text = re.sub(r"^\d{1,2}(?=[A-Z][a-z])", "", text)  # a footnote's number glued on: "8This dataset"
    return re.sub(r"(?<=[a-z])- (?=[a-z])", "", text)


_HEADING_LINE = re.compile(
    r"^(?:\d+(?:\.\d+)*|[A-Z])\.?\s+(?:(?:[A-Z][\w-]*|and|of|for|the|in|with|to|on|an?)\s*){1,8}$|^(?:[A-Z][\w-]*\s*){1,4}$"
)
AUTHOR_CONTRIBUTIONS = re.compile(r"author(?:s'?)? contributions?|equal contribution", re.I)


def paper_sentences(passages: Iterable[Passage]) -> list[Sentence]:
    """Every sentence of the passages once (passages overlap), in paper order, the reference
    list left out; a sentence in two passages keeps the one on a single page."""
    out: list[Sentence] = []
    at: dict[str, int] = {}
    for passage in passages:
        if is_reference_list(passage.section):
            continue
        for raw in split_sentences(passage.text):
            text = " ".join(raw.split())
            if len(text) < 12 or _HEADING_LINE.match(text):
                continue
            if text in at:
                kept = out[at[text]].passage
                if kept.page_start != kept.page_end and passage.page_start == passage.page_end:
                    out[at[text]] = Sentence(text, passage)
                continue
            at[text] = len(out)
            out.append(Sentence(text, passage))
    return out


# ------------------------------------------------------------------ shared by the rules

NAME = re.compile(r"\b(?:[A-Z][a-z]*[A-Z0-9][\w+-]*|[A-Z]{2,}[\w+-]*|[A-Z][a-z]+(?:[ -][A-Z][a-z]+)+)\b")

CITATION = re.compile(r"\[\d[\d,;\s–-]*\]|\(\D{2,40}\d{4}[a-z]?\)|\bet al\b")

RELATED_SECTION = re.compile(r"related work|prior work|previous work|background|literature", re.I)

INTRO_SECTION = re.compile(r"introduction|^\W*1\W", re.I)

OURS = re.compile(r"\b(?:we|our|us)\b", re.I)

OTHERS_DATA = re.compile(r"\(\D{2,40}\d{4}[a-z]?\)|\bet al\b|\[\d", re.I)


def named(sentence: str) -> list[str]:
    skip = {"Table", "Figure", "Section", "Appendix", "We", "The", "Our", "In", "For", "This"}
    names = [n for n in NAME.findall(sentence) if n.split()[0] not in skip and not n.isdigit()]
    return list(dict.fromkeys(names))


def short(text: str, limit: int = 160) -> str:
    return text if len(text) <= limit else text[: limit - 1].rsplit(" ", 1)[0] + "…"
