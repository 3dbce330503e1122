"""What fills each column, by rule: sentences of the paper's abstract (its own statement of what it
does and finds) and of the stored synthesis under their headings, the datasets' sizes from the paper's passages (a number with a unit of data: sentences, images,
pairs ...), the baselines from the passages the search finds for a comparison.

Every function here takes plain data (texts, passages as Source) and returns the cell's value
with its candidate sources; nothing here calls an LLM or the database."""

from __future__ import annotations

import re
from collections.abc import Iterable

from reader.audit.evidence import best_first
from reader.audit.loop import MARK
from reader.audit.verify import EvidenceRef
from reader.deepread.writer import split_document
from reader.table.model import Source
from reader.text.rigour import DATASET_WORDS
from reader.text.split import split_sentences

# synthesis heading -> column, as prompts/_headings.j2 names them
SYNTHESIS_COLUMNS = {
    "task": "Problem",
    "method": "Method",
    "result": "Key results",
    "baselines": "Relation to prior work",
}
MAX_VALUE_CHARS = 400
MAX_DATASETS = 3

_BULLET = re.compile(r"^\s*(?:[-*•]|\d{1,2}[.)])\s+", re.M)
_BOLD = re.compile(r"\*\*(.+?)\*\*")
_DIGIT = re.compile(r"\d")
_REFERENCES = re.compile(r"^\s*(?:\d+\.?\s*)?(references|bibliography|参考文献)\b", re.I)

# --------------------------------------------------------------------- the synthesis


def synthesis_sections(final_text: str) -> dict[str, str]:
    """heading -> its text, the [待验证] marks, bullets and bold taken out."""
    clean = final_text.replace(MARK, "").replace(MARK.strip(), "")
    out = {}
    for heading, body in split_document(clean):
        body = _BOLD.sub(r"\1", _BULLET.sub("", body)).strip()
        if heading and body:
            out[heading.strip().strip(":").lower()] = body
    return out


def synthesis_sentence(sections: dict[str, str], heading: str, *, headline: bool = False) -> str:
    """The first sentence under `heading` (with `headline`: the one most like a headline result,
    `headline_score`, the first of the best); "" when the synthesis has no such heading."""
    sentences = [" ".join(s.split()) for s in split_sentences(sections.get(heading.lower(), ""))]
    sentences = [s for s in sentences if len(s) > 3]
    if headline and sentences:
        best = max(headline_score(s) for s in sentences)
        sentences = [s for s in sentences if headline_score(s) == best]
    return _trim(sentences[0]) if sentences else ""


# what a headline result says: a figure, and a word of outcome; a caption, a setting or a pointer
# to a table is none ("heat stress … was initiated 10 days after anthesis", "(B) Same analysis …")
_RESULT_FIGURE = re.compile(r"\d\s?%|\d\.\d|\b\d+(?:\.\d+)?\s?(?:points?|F1|BLEU|ROUGE|accuracy)\b", re.I)
_OUTCOME = re.compile(
    r"\b(?:outperform\w*|improv\w*|achiev\w*|reach\w*|reduc\w*|increas\w*|decreas\w*|gain\w*|"
    r"better|worse|higher|lower|best|surpass\w*|beat\w*|exceed\w*|accuracy|F1|scores?|error|correlat\w*)\b",
    re.I,
)
_CAPTION = re.compile(
    r"^\s*(?:\(?[A-H]\)|Table \d|Fig(?:ure|\.)? ?\d|Adapted\b)|\bare shown in\b|\bis shown in\b"
    r"|\b(?:upper|lower|left|right|top|bottom|inset) (?:plot|panel|row|graph)\b",
    re.I,
)


def headline_score(sentence: str) -> int:
    """How much a sentence reads as a headline result: a figure (2) and a word of outcome (1),
    less 2 for a caption or a pointer to where results are shown."""
    score = 2 * bool(_RESULT_FIGURE.search(sentence)) + bool(_OUTCOME.search(sentence))
    return score - 2 * bool(_CAPTION.search(sentence))


# --------------------------------------------------------------------- the abstract

# "We propose SPECTER, …", "This paper shows how to assess …", "I review evidence …"; not the
# problem it introduces or the experiments it presents
_METHOD_CUE = re.compile(
    r"\b(?:we|this (?:paper|work|article|study|review|tutorial)|here,? we|I)\s+(?:\w+ly\s+)?"
    r"(?:[\w\s,]{0,80}?\band\s+)?"  # "We motivate this novel challenge … and propose a … approach"
    r"(?:(?:propose|present|introduce|describe|develop|design|build|review|use|apply|employ)s?|shows? how)\b"
    r"(?!\s+(?:the (?:problem|task|question)|(?:\w+\s+)?(?:experiments?|results?|findings|an? (?:analysis|survey|study))\b))",
    re.I,
)


MIN_HEADLINE = 3  # a figure and a word of outcome


def abstract_sentences(abstract: str) -> list[str]:
    return [" ".join(s.split()) for s in split_sentences(abstract or "") if len(s.split()) >= 4]


# "The problem the paper addresses is …", "The goal of this paper is …": the synthesis's Problem
# states the task; its first sentence is otherwise often the abstract's context ("For applications
# on scientific documents, … the embeddings power strong performance")
_TASK_STATED = re.compile(
    r"\b(?:address\w*|problem|goal|aim|objective|task|purpose|question|challeng\w*)\b", re.I
)
# what an abstract says is missing or hard: "… but these models … do not leverage …", "few
# solutions exist to address …", "remains unclear"
_GAP = re.compile(
    r"\b(?:but|however|yet|although|while)\b[^.;]*\b(?:do(?:es)? not|cannot|can ?not|fails? to|lacks?|"
    r"limits?|ignores?|overlooks?|neglects?)\b"
    r"|\bfew (?:solutions|methods|approaches|studies|works|tools) (?:exist|have|address)"
    r"|\b(?:a|the) lack of\b"
    r"|\bremains? (?:an? )?(?:open|challenging|difficult|unclear|unsolved|poorly understood|unknown)\b"
    r"|\b(?:is|are) (?:still )?(?:challenging|difficult|problematic|an open (?:problem|question)|"
    r"not well understood|poorly understood)\b",
    re.I,
)
MAX_TASK_CHARS = 400


def task(abstract: str, synthesis_first: str) -> tuple[str, bool]:
    """The task: the synthesis's first Problem sentence when it names the problem, goal or task;
    else the abstract's first sentence saying what is missing or hard; else that synthesis
    sentence. And whether it came from the abstract. On 50 abstracts of the training papers the gap
    rule fired on 14, and 11 of those were the paper's problem (read)."""
    if synthesis_first and _TASK_STATED.search(synthesis_first):
        return synthesis_first, False
    gap = next((s for s in abstract_sentences(abstract) if _GAP.search(s) and len(s) <= MAX_TASK_CHARS), "")
    return (_trim(gap), True) if gap else (synthesis_first, False)


def abstract_method(abstract: str) -> str:
    """The abstract's first sentence saying what the paper proposes, presents or does ("" if none)."""
    return next((_trim(s) for s in abstract_sentences(abstract) if _METHOD_CUE.search(s)), "")


def headline(abstract: str, synthesis_best: str) -> str:
    """The headline result: the abstract's sentence most like one (`headline_score`) when it names
    a figure and an outcome (MIN_HEADLINE) and the synthesis's best Key results sentence scores no
    higher; else that synthesis sentence when it names both; else none. Below that score, the
    abstract's best is as often a licence line or a subject code ("D.3.4") as a result (30 abstracts
    of the training papers), and the synthesis's a figure's caption ("the upper plot shows … 5–11 Hz")
    or a sentence of method with one word of outcome ("… an analysis matrix to score the elements")."""
    best = max(abstract_sentences(abstract), key=headline_score, default="")
    score = headline_score(best) if best else 0
    if score >= MIN_HEADLINE and score >= headline_score(synthesis_best or ""):
        return _trim(best)
    return synthesis_best if synthesis_best and headline_score(synthesis_best) >= MIN_HEADLINE else ""


# --------------------------------------------------------------------- datasets and sizes

_UNITS_EN = (
    r"sentence pairs|sentences|pairs|images|photos|pictures|documents|docs|tokens|words|examples|samples|"
    r"articles|utterances|questions|question-answer pairs|answers|instances|dialogues|dialogs|"
    r"conversations|tweets|reviews|videos|clips|hours|patients|participants|subjects|abstracts|papers|"
    r"records|queries|passages|triples|annotations|speakers|users|posts|comments|texts|paragraphs|"
    r"characters|entities|mentions|cases|scans|slides|recordings|molecules|proteins|genes|cells|"
    r"plants|accessions|genotypes|scenes|frames|objects|items|entries"
)
_SCALE = r"(?:[kKMB]|million|billion|thousand|hundred)"
_NUMBER = r"\d{1,3}(?:,\d{3})+(?:\.\d+)?|\d+(?:\.\d+)?"
_FILLER = r"(?!(?:we|they|of|the|and|were|are|was|is|from|in|on|for|to|with|by|at)\b)[A-Za-z][\w-]*\s+"
SIZE_EN = re.compile(
    rf"(?<![\w.])(?!(?:19|20)\d\d\b)(?:{_NUMBER})\s?(?:{_SCALE}\b)?\s*(?:{_FILLER}){{0,2}}?(?:{_UNITS_EN})\b",
    re.I,
)
SIZE_ZH = re.compile(rf"(?:{_NUMBER})\s*(?:万|千|亿)?\s*(?:余|多)?\s*(?:条|句|张|篇|对|段|个样本|幅|小时|例)")
# a sentence about data, so "trained for 10 hours" or "3 classes of the model" stays out
_DATA_CUE = re.compile(
    rf"\b({DATASET_WORDS}|benchmarks?|treebanks?|collections?|collected|training|train|"
    r"test|testing|dev|development|validation|splits?|annotated|labell?ed|consists?|contains?|"
    r"compris\w*|gathered|crawled|sampled|recruited|enrolled)\b|数据集|语料|训练|测试|标注|包含",
    re.I,
)
_DATA_WORD = r"(?:data ?set|dataset|corpus|benchmark|treebank|collection)"
_NAME_BEFORE = re.compile(rf"((?:[A-Z][\w.\-]*[ -]){{0,3}}[A-Z0-9][\w.\-]*)\s+((?i:{_DATA_WORD}))s?\b")
_ACRONYM = re.compile(r"\b([A-Z][a-z]*[A-Z0-9][\w\-]*)\b")
_NOT_NAMES = {
    "the",
    "our",
    "this",
    "these",
    "a",
    "an",
    "we",
    "in",
    "on",
    "for",
    "of",
    "and",
    "to",
    "with",
    "each",
}
_NOT_NAME_START = {"table", "figure", "fig.", "section", "appendix"}
_NOT_ACRONYMS = {"F1", "GPU", "GPUs", "CPU", "CPUs", "NLP", "AI", "ML", "API", "URL", "PDF", "GB", "TB", "MB"}


def _dataset_name(sentence: str) -> str:
    """The dataset's name in a sentence that gives a size: the capitalised words before
    "dataset" / "corpus" / "benchmark" ("the Penn Treebank", "WNUT-17 corpus"), else an
    acronym-like word ("SQuAD", "WMT14", "CIFAR-10"); "" when there is none."""
    for match in _NAME_BEFORE.finditer(sentence):
        words = match.group(1).split()
        while words and words[0].lower() in _NOT_NAMES:
            words = words[1:]
        if not words or words[0].lower() in _NOT_NAME_START:
            continue
        data_word = match.group(2)
        name = " ".join(words)
        return f"{name} {data_word}" if data_word[:1].isupper() else name
    for match in _ACRONYM.finditer(sentence):
        if match.group(1) not in _NOT_ACRONYMS:
            return match.group(1)
    return ""


_LEADING_NUMBER = re.compile(rf"({_NUMBER})\s?({_SCALE}\b|万|千|亿)?", re.I)
MIN_COUNT = 10  # "3 characters", "1 SEM across subjects": not the size of a dataset


def _a_count(size: str) -> bool:
    """Is the number a count of items: whole (0.971 examples is a ratio) unless scaled (1.5M),
    and at least MIN_COUNT?"""
    match = _LEADING_NUMBER.match(size)
    if match is None:
        return False
    number, scale = match.group(1).replace(",", ""), match.group(2)
    if scale:
        return True
    return "." not in number and int(number) >= MIN_COUNT


def dataset_sizes(passages: Iterable[tuple[str, Source]]) -> tuple[str, list[Source]]:
    """("name: size; name: size", the passages they come from) for the first MAX_DATASETS
    distinct sizes the paper gives in a sentence about data; passages: (section, passage) in
    paper order, the reference list skipped."""
    items: list[str] = []
    sources: list[Source] = []
    seen_sentences: set[str] = set()
    for section, passage in passages:
        if _REFERENCES.match(section or ""):
            continue
        for sentence in split_sentences(passage.text):
            sentence = " ".join(sentence.split())
            if sentence in seen_sentences:  # passages overlap: the same sentence twice
                continue
            seen_sentences.add(sentence)
            sizes = [m.group(0) for m in SIZE_EN.finditer(sentence)] + [
                m.group(0) for m in SIZE_ZH.finditer(sentence)
            ]
            sizes = [size for size in sizes if _a_count(size)]
            name = _dataset_name(sentence) if sizes else ""
            if not sizes or not (name or _DATA_CUE.search(sentence)):
                continue
            for size in sizes:
                item = f"{name}: {size}" if name else size
                if item in items:
                    continue
                items.append(item)
                if passage not in sources:
                    sources.append(passage)
                if len(items) == MAX_DATASETS:
                    return "; ".join(items), sources
    return "; ".join(items), sources


# --------------------------------------------------------------------- from the rigour checklist

VALUE_ITEMS = ("metrics", "variance", "runs", "hyperparameters", "compute", "code", "data")


def checklist_value(key: str, item) -> str:
    """A cell's value from a checklist item (reader.checklist.ChecklistItem): the datasets as
    "name: size", the short value of an item that has one (metrics, variance, runs …), else the
    sentence that states it (baselines, ablations, limitations, ethics, contributions)."""
    from reader.text.rigour_experiments import data_sizes

    if key == "datasets":
        sizes = data_sizes(item.quote) or [v.strip() for v in item.value.split(";") if v.strip()]
        name = _dataset_name(item.quote)
        return _trim("; ".join(f"{name}: {size}" if name else size for size in sizes[:MAX_DATASETS]))
    if key in VALUE_ITEMS and item.value:
        return _trim(item.value)
    return _trim(item.quote or item.value)


# --------------------------------------------------------------------- baselines

_PROSE_START = re.compile(r"[A-Z\u4e00-\u9fff“\"]")
_WORDS = re.compile(r"[^\W\d_]{2,}")
BASELINE_QUERY = "baselines we compare with previous methods and outperform the state of the art"
_BASELINE = re.compile(r"\bbaselines?\b|基线|对比方法", re.I)
_COMPARISON = re.compile(
    r"\bcompar\w*\s+(?:with|to|against)\b|\boutperform\w*|\bstate[- ]of[- ]the[- ]art\b|\bvs\.?\s|优于|相比",
    re.I,
)


def baseline_sentence(found: Iterable[Source]) -> tuple[str, list[Source]]:
    """The sentence naming the baselines among the passages a search found for them: the first
    that says "baseline", else the first comparison; ("", []) when none does."""
    best: tuple[int, str, Source] | None = None
    for rank, passage in enumerate(found):
        for sentence in split_sentences(passage.text):
            sentence = " ".join(sentence.split())
            if not _PROSE_START.match(sentence) or len(_WORDS.findall(sentence)) < 6:
                continue  # a table row ("Baseline Neural 84.6 85.8") or a fragment ("0.05, compared ...")
            score = 2 if _BASELINE.search(sentence) else 1 if _COMPARISON.search(sentence) else 0
            named = 1 if _ACRONYM.search(sentence) else 0
            key = score * 2 + named
            if score and (best is None or key > best[0]):
                best = (key, sentence, passage)
        if best is not None and best[0] >= 5:  # "baseline" and a name: look no further
            break
    if best is None:
        return "", []
    return _trim(best[1]), [best[2]]


def _trim(text: str) -> str:
    if len(text) <= MAX_VALUE_CHARS:
        return text
    return text[: MAX_VALUE_CHARS - 1].rsplit(" ", 1)[0] + "…"


def nearest_sentence(value: str, text: str, section: str = "") -> str:
    """The sentence of a passage that shares the most rare words with a cell's value (the
    first on a tie), whitespace tidied, without the passage's heading (`section`) where the
    passage runs it into its first sentence."""
    sentences = [" ".join(s.split()) for s in split_sentences(text)]
    heading = " ".join(section.split())
    if heading:
        sentences = [s.removeprefix(heading).strip() if s.startswith(heading + " ") else s for s in sentences]
    sentences = [s for s in sentences if len(s) > 3]
    if not sentences:
        return " ".join(text.split())
    return best_first(value, [EvidenceRef(None, 0, 0, s) for s in sentences])[0].text
