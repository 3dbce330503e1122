"""The figures of benchmarks.bench_notes: what a researcher would see in each document.

Per document: words, sentences, the share of distinct sentences (none repeating an earlier
one: reader.deepread.tidy's test), empty headings and bullets, the share of specific sentences
(reader.audit.specific), sentences in the first person ("we", "our": the paper's own words),
near-verbatim copies of one paper sentence (at least 80% of the words in the same order,
difflib), statements that a heading has nothing ("does not provide any ..."); per paper: the
abstract's numbers found under Key results (numbers of two or more characters, years and the
journal's front matter beside the abstract left out), the sections the documents draw on (a section
contributes when some sentence's closest paper sentence, sharing at least half its content
words, is in it), the results sections' numbers the documents give, the flagged ratio of the
first draft and of each iteration, rewrites, LLM calls, tokens and seconds.
"""

from __future__ import annotations

import difflib
import json
import re
import statistics
import tempfile
from dataclasses import dataclass, field
from pathlib import Path

from benchmarks.bench_context import numbers
from benchmarks.common import SHARED_PAPERS, wilson
from reader.audit.guards import PaperFacts
from reader.audit.loop import MARK as LOOP_MARK
from reader.audit.specific import says_nothing_specific
from reader.deepread.material import abstract_sentences
from reader.deepread.tidy import BULLET_MARK, content_key, repeats_earlier
from reader.text.split import split_sentences
from reader.text.words import words

MARK = LOOP_MARK.strip()
YEAR = re.compile(r"(?:19|20)\d\d")  # a year is no headline figure
COPY_RATIO = 0.8
_EMPTY_ITEM = re.compile(rf"^[ \t]*{BULLET_MARK}[ \t]*$", re.M)
_FIRST_PERSON = re.compile(r"\b(?:we|our|ours|us)\b", re.I)
_QUOTED = re.compile(r"“[^”]*”")  # the tool's quotes of the paper keep its "we"
_NOTHING_THERE = re.compile(
    r"\bdo(?:es)? not (?:provide|make|report|mention|discuss|include|present|identify|contain|have) any\b"
    r"|\bthere (?:are|is) no (?:missing|overclaim|threat|weakness)|\bno (?:overclaims|threats to validity)\b",
    re.I,
)
_RESULTS = re.compile(r"result|experiment|evaluation|ablation|实验|结果", re.I)
# what a reviewer can check: a number, a table or figure, the variance, the data's size, a baseline
_CHECKABLE = re.compile(
    r"\d|\b(?:table|figure|fig\.|section|variance|standard deviation|significan\w*|confidence|"
    r"baselines?|dataset|corpus|sample size|ablation\w*)\b",
    re.I,
)


def document_sentences(text: str) -> list[str]:
    """The document's sentences, without headings, marks and list markers."""
    body = "\n".join(
        line
        for line in text.replace(MARK, "").splitlines()
        if not re.match(r"^\s*(#{1,6}\s|\*\*[^*]+\*\*:?$)", line)
    )
    out = []
    for sentence in split_sentences(body):
        flat = re.sub(rf"^\s*{BULLET_MARK}\s+", "", " ".join(sentence.split()))
        if len(words(flat)) >= 2 or re.search(r"[\u4e00-\u9fff]{4}", flat):
            out.append(flat)
    return out


def section_text(text: str, heading: str) -> str:
    match = re.search(rf"^#+\s*{re.escape(heading)}\s*$(.*?)(?=^#+\s|\Z)", text, re.M | re.S)
    return match.group(1) if match else ""


@dataclass
class PaperText:
    """A paper as the measures need it: its sentences by section, numbers and facts."""

    sections: list[tuple[str, list[str]]]
    abstract: str
    results: str
    facts: PaperFacts
    keys: list[tuple[int, frozenset[str], list[str]]] = field(default_factory=list)

    def __post_init__(self):
        for i, (_, sentences) in enumerate(self.sections):
            for s in sentences:
                self.keys.append((i, content_key(s), words(s)))

    def closest(self, sentence: str) -> tuple[int | None, float, list[str]]:
        """(section index, share of the sentence's content words it has, its words) of the paper
        sentence sharing most content words with `sentence`."""
        key = content_key(sentence)
        best = (None, 0.0, [])
        for i, other, other_words in self.keys:
            share = len(key & other) / max(len(key), 1)
            if share > best[1]:
                best = (i, share, other_words)
        return best


def load_paper(path: Path, tmp: str) -> PaperText:
    from reader.deepread.context import load_material
    from reader.ingest.pipeline import ingest_file
    from reader.store.db import open_database

    db = open_database(f"sqlite:///{tmp}/{path.stem}.db")
    result = ingest_file(path, db)
    with db() as session:
        material = load_material(session, result.paper_id)
    sections = [(s.title, [" ".join(x.split()) for x in split_sentences(s.text)]) for s in material.sections]
    abstract = " ".join(abstract_sentences(material.sections))
    results = " ".join(s.text for s in material.sections if _RESULTS.search(s.title))
    return PaperText(sections, abstract, results, PaperFacts.from_texts(material.facts_texts))


def measure_document(text: str, paper: PaperText) -> dict:
    sentences = document_sentences(text)
    keys, distinct, specific, first, copies, nothing, checkable = [], 0, 0, 0, 0, 0, 0
    drawn: set[int] = set()
    for s in sentences:
        key = content_key(s)
        distinct += not repeats_earlier(key, keys)
        keys.append(key)
        is_specific = not says_nothing_specific(s, paper.facts)
        specific += is_specific
        checkable += is_specific and bool(_CHECKABLE.search(s))
        first += bool(_FIRST_PERSON.search(_QUOTED.sub("", s)))
        nothing += bool(_NOTHING_THERE.search(s))
        section, share, closest_words = paper.closest(s)
        if section is not None and share >= 0.5:
            drawn.add(section)
        if closest_words and difflib.SequenceMatcher(None, words(s), closest_words).ratio() >= COPY_RATIO:
            copies += 1
    return {
        "words": len(words(text.replace(MARK, ""))),
        "sentences": len(sentences),
        "distinct": distinct,
        "specific": specific,
        "first_person": first,
        "copies": copies,
        "nothing_there": nothing,
        "checkable": checkable,
        "empty_items": len(_EMPTY_ITEM.findall(text))
        + len(re.findall(r"^#+\s.*\n\s*(?=^#+\s|\Z)", text, re.M)),
        "drawn": drawn,
    }


def measure_read(data: dict, paper: PaperText) -> dict:
    docs = {a["kind"]: a for a in data["analyses"]}
    measured = {kind: measure_document(a["final_text"], paper) for kind, a in docs.items()}
    drawn = set().union(*(m["drawn"] for m in measured.values()))
    text = " ".join(a["final_text"] for a in docs.values())
    headline = {n for n in numbers(paper.abstract) if not YEAR.fullmatch(n)}
    key_results = numbers(section_text(docs.get("synthesis", {}).get("final_text", ""), "Key results"))
    results = numbers(paper.results)
    return {
        "documents": measured,
        "first_ratio": {k: a["ratio_per_iteration"][0] for k, a in docs.items()},
        "ratios": {k: a["ratio_per_iteration"] for k, a in docs.items()},
        "rewrites": sum(a["regenerations"] for a in docs.values()),
        "headline": (len(headline & key_results), len(headline)),
        "sections": (len(drawn), len(paper.sections)),
        "results": (len(results & numbers(text)), len(results)),
        "calls": data["llm_calls"],
        "tokens": data["tokens"],
        "wall": data["wall"],
    }


def _share(k: int, n: int) -> str:
    lo, hi = wilson(k, n)
    return f"{k}/{n} = {k / max(n, 1):.2f} [{lo:.2f}, {hi:.2f}]"


def summary_of_documents(docs: list[dict]) -> dict[str, str]:
    keys = ("sentences", "distinct", "specific", "first_person", "copies", "nothing_there", "empty_items")
    total = {key: sum(d[key] for d in docs) for key in keys}
    n = total["sentences"]
    return {
        "words per document (median, min)": f"{statistics.median(d['words'] for d in docs):.0f}, "
        f"{min(d['words'] for d in docs)}",
        "documents with >= 500 words": f"{sum(d['words'] >= 500 for d in docs)}/{len(docs)}",
        "sentences": str(n),
        "distinct sentences": _share(total["distinct"], n),
        "specific sentences": _share(total["specific"], n),
        "first-person sentences": _share(total["first_person"], n),
        "near-verbatim copies": _share(total["copies"], n),
        "'nothing here' statements": str(total["nothing_there"]),
        "empty headings and bullets": str(total["empty_items"]),
    }


def summary(rows: list[dict]) -> dict[str, str]:
    first_ok = sum(1 for r in rows for ratio in r["first_ratio"].values() if ratio <= 0.3)
    critiques = [r["documents"]["critique"] for r in rows if "critique" in r["documents"]]
    return {
        "papers": str(len(rows)),
        **summary_of_documents([d for r in rows for d in r["documents"].values()]),
        "critique sentences tied to a checkable point": _share(
            sum(d["checkable"] for d in critiques), sum(d["sentences"] for d in critiques)
        ),
        "abstract numbers under Key results": _share(
            sum(r["headline"][0] for r in rows), sum(r["headline"][1] for r in rows)
        ),
        "sections contributing": _share(
            sum(r["sections"][0] for r in rows), sum(r["sections"][1] for r in rows)
        ),
        "results numbers given": _share(
            sum(r["results"][0] for r in rows), sum(r["results"][1] for r in rows)
        ),
        "first drafts with flagged ratio <= 0.3": f"{first_ok}/{sum(len(r['first_ratio']) for r in rows)}",
        "rewrites per paper (mean)": f"{statistics.mean(r['rewrites'] for r in rows):.1f}",
        "LLM calls per paper (mean)": f"{statistics.mean(r['calls'] for r in rows):.1f}",
        "tokens per paper (mean)": f"{statistics.mean(r['tokens'] for r in rows):,.0f}",
        "seconds per paper (median, max)": f"{statistics.median(r['wall'] for r in rows):.0f}, {max(r['wall'] for r in rows):.0f}",
    }


def badness(document: dict) -> float:
    n = max(document["sentences"], 1)
    return (
        (n - document["distinct"]) / n
        + (n - document["specific"]) / n
        + document["copies"] / n
        + document["first_person"] / n
        + 0.2 * document["empty_items"]
        + 0.2 * document["nothing_there"]
        + (0.5 if document["words"] < 500 else 0.0)
    )


def report(save: Path, papers: list[str]) -> None:
    arms = [a for a in ("baseline", "current", "endpoint") if (save / a).is_dir()]
    measured: dict[str, dict[str, dict]] = {arm: {} for arm in arms}
    with tempfile.TemporaryDirectory() as tmp:
        for name in papers:
            reads = {
                arm: save / arm / f"{name}.json" for arm in arms if (save / arm / f"{name}.json").exists()
            }
            if not reads:
                continue
            paper = load_paper(SHARED_PAPERS / name, tmp)
            for arm, path in reads.items():
                data = json.loads(path.read_text(encoding="utf-8"))
                measured[arm][name] = {**measure_read(data, paper), "data": data}
    print("per paper: words critique/synthesis · distinct · specific · copies · first-draft ratio c/s · s")
    for name in papers:
        for arm in arms:
            r = measured[arm].get(name)
            if r is None:
                continue
            c, s = r["documents"].get("critique", {}), r["documents"].get("synthesis", {})
            n = (c.get("sentences", 0) + s.get("sentences", 0)) or 1
            print(
                f"  {name[:40]:40} {arm:8} {c.get('words', 0):4}/{s.get('words', 0):<4} "
                f"{(c.get('distinct', 0) + s.get('distinct', 0)) / n:.2f} "
                f"{(c.get('specific', 0) + s.get('specific', 0)) / n:.2f} "
                f"{(c.get('copies', 0) + s.get('copies', 0)) / n:.2f} "
                f"{r['first_ratio'].get('critique', 0):.2f}/{r['first_ratio'].get('synthesis', 0):.2f} "
                f"{r['wall']:5.0f}"
            )
    both = [name for name in papers if all(name in measured[arm] for arm in arms)]
    for label, names in (("papers read by every arm", both), ("all papers of each arm", None)):
        print(f"\n{label}:")
        summaries = {
            arm: summary([measured[arm][n] for n in (names or measured[arm])])
            for arm in arms
            if (names or measured[arm])
        }
        if not summaries:
            continue
        keys = next(iter(summaries.values())).keys()
        print(f"  {'':42} " + " | ".join(f"{arm:34}" for arm in summaries))
        for key in keys:
            print(f"  {key:42} " + " | ".join(f"{summaries[arm][key]:34}" for arm in summaries))
    if "current" in measured and measured["current"]:
        worst = sorted(
            (
                (badness(d), name, kind)
                for name, r in measured["current"].items()
                for kind, d in r["documents"].items()
            ),
            reverse=True,
        )[:3]
        for score, name, kind in worst:
            text = next(
                a["final_text"] for a in measured["current"][name]["data"]["analyses"] if a["kind"] == kind
            )
            print(f"\n---- worst current documents: {name}, {kind} (badness {score:.2f}) ----\n{text}")
