"""What fills each column, by rule: sentences of the paper's abstract (its own statement of what it
does and finds) and of the stored synthesis under their headings, and the value of a rigour
checklist item (reader.text.rigour: the datasets and their sizes, the baselines …) with the
dataset's name read from the sentence that gives the size.

Every function here takes plain data (texts, checklist items) and returns a cell's value; nothing
here calls an LLM or the database."""

from __future__ import annotations

import re

from reader.audit.evidence import best_first
from reader.audit.loop import MARK
from reader.audit.verify import EvidenceRef
from reader.deepread.writer import split_document
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


def abstract_task(abstract: str, synthesis_first: str) -> str:
    """The task from the abstract, where the synthesis's first Problem sentence names no problem,
    goal or task: the abstract's first sentence saying what is missing or hard ("" when the
    synthesis's sentence names one, or the abstract says none). On 50 abstracts of the training
    papers the gap rule fired on 14, and 11 of those were the paper's problem (read)."""
    if synthesis_first and _TASK_STATED.search(synthesis_first):
        return ""
    gap = next((s for s in abstract_sentences(abstract) if _GAP.search(s) and len(s) <= MAX_TASK_CHARS), "")
    return _trim(gap)


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


# --------------------------------------------------------------------- a dataset's name

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


def _dataset_name(sentence: str, size: str = "") -> str:
    """The dataset's name in a sentence that gives a size: the capitalised words before
    "dataset" / "corpus" / "benchmark" ("the Penn Treebank", "WNUT-17 corpus"), else an
    acronym-like word ("SQuAD", "WMT14", "CIFAR-10") at most MAX_NAME_GAP words before `size`;
    "" when there is none. An acronym after the size names something else ("144 subjects …, of
    whom 36 were diagnosed with MCI", "720 images were collected using a CCD detector")."""
    for match in _NAME_BEFORE.finditer(sentence):
        words = match.group(1).split()
        while words and words[0].lower() in _NOT_NAMES:
            words = words[1:]
        if not words or words[0].lower() in _NOT_NAME_START:
            continue
        data_word = match.group(2)
        name = " ".join(words)
        return f"{name} {data_word}" if data_word[:1].isupper() else name
    at = sentence.find(size) if size else len(sentence)
    for match in _ACRONYM.finditer(sentence[: at if at >= 0 else len(sentence)]):
        gap = len(sentence[match.end() : at].split())
        if match.group(1) not in _NOT_ACRONYMS and (not size or gap <= MAX_NAME_GAP):
            return match.group(1)
    return ""


MAX_NAME_GAP = 6  # words between an acronym and the size it names ("MEN (Bruni et al., 2012), a 3,000 items")


# --------------------------------------------------------------------- from the rigour checklist

VALUE_ITEMS = ("metrics", "variance", "runs", "hyperparameters", "compute", "code", "data")


def checklist_value(key: str, item) -> str:
    """A cell's value from a checklist item (reader.checklist.ChecklistItem): the datasets as
    "name: size", the short value of an item that has one (metrics, variance, runs …), else the
    sentence that states it (baselines, ablations, limitations, ethics, contributions)."""
    from reader.text.rigour_experiments import data_sizes

    if key == "datasets":
        sizes = data_sizes(item.quote) or [v.strip() for v in item.value.split(";") if v.strip()]
        name = _dataset_name(item.quote, sizes[0] if sizes else "")
        return _trim("; ".join(f"{name}: {size}" if name else size for size in sizes[:MAX_DATASETS]))
    if key in VALUE_ITEMS and item.value:
        return _trim(item.value)
    return _trim(item.quote or item.value)


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
