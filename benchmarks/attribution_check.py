"""How often the attribution check (reader/audit/citations.py) fires on faithful sentences.

Faithful by construction: every sentence of a shared paper's body that cites numbered
references ("[12]", "[3–5]") whose entries are in the paper's reference list, or author–year
citations ("Smith et al. (2020)") that resolve to entries, says what the paper attributes to
them. Two conditions:

- verbatim: the sentence as the paper wrote it, checked against all the paper's contexts
  (its own among them): the best case, a generated sentence that copies the paper;
- own sentence left out: the same sentence checked against the paper's other contexts
  citing the reference (its own sentence blanked, its neighbours kept): close to the worst
  case of a faithful paraphrase that shares no words with the citing sentence itself.

    .venv/bin/python -m benchmarks.attribution_check [PAPERS_DIR]     # default ../shared/papers

And, to see whether it catches anything: a numbered marker swapped for another reference the
paper cites (misattributed by construction; it should fire).

The writer's form "…[n], which describes X" (`misdescribed`) is measured on claims made from
the paper: for each sentence citing one number, X is the clause it cites it in (the marker taken
out); faithful with the sentence's own clause among the clauses (verbatim) and without it (own
sentence left out), misattributed with the marker swapped as above.

Each condition is counted twice: the note (`attribution`) and the guard (`unattributed`: no
content word shared with the entry or the contexts), which makes a deep-read sentence
unsupported.

Prints n, flags and the Wilson 95% interval per condition, and the papers used.
"""

from __future__ import annotations

import re
import sys
from pathlib import Path

from benchmarks.common import SHARED_PAPERS, wilson  # the same 95% interval as the audit figures
from reader.audit.citations import MIN_DESCRIBED_WORDS, ReferenceList, cited_clause, content_stems
from reader.audit.guards import BRACKET_CITE, bracket_numbers
from reader.ingest.chunk import chunk_paper
from reader.ingest.pdf import parse_pdf


def faithful_sentences(pdf: Path) -> tuple[ReferenceList, list[str]]:
    parsed = parse_pdf(pdf, pdf.read_bytes())
    body = [
        c.text for c in chunk_paper(parsed) if not re.search(r"referenc|bibliograph", c.section or "", re.I)
    ]
    refs = ReferenceList.build([(r.marker, r.text) for r in parsed.references], body)
    numbered, author_year = [], []
    for sentence in refs.sentences:
        if len(sentence) < 40:
            continue
        numbers = set()
        for m in BRACKET_CITE.finditer(sentence):
            numbers |= bracket_numbers(m.group(1))
        if numbers:
            if all(n in refs.numbered for n in numbers):
                numbered.append(sentence)
            continue
        citations = refs.resolve(sentence)
        if citations and all(c.resolved for c in citations):
            author_year.append(sentence)
    return refs, list(dict.fromkeys(numbered)), list(dict.fromkeys(author_year))


def main() -> None:
    folder = Path(sys.argv[1]) if len(sys.argv) > 1 else SHARED_PAPERS
    counts: dict[tuple[str, str], list[int]] = {}
    used = []
    for pdf in sorted(folder.glob("*.pdf")):
        refs, numbered, author_year = faithful_sentences(pdf)
        if numbered or author_year:
            used.append(f"{pdf.name}: {len(numbered)} numbered, {len(author_year)} author-year")
        for kind, sentences in (("numbered", numbered), ("author-year", author_year)):
            for sentence in sentences:
                for name, exclude in (("verbatim", None), ("own sentence left out", sentence)):
                    count = counts.setdefault((kind, name), [0, 0])
                    count[0] += 1
                    count[1] += bool(refs.attribution(sentence, exclude=exclude))
                    guard = counts.setdefault((kind, f"{name}, guard"), [0, 0])
                    guard[0] += 1
                    guard[1] += bool(refs.unattributed(sentence, exclude=exclude))
        # the other side: a numbered marker swapped for another reference the paper cites
        # (half the list away) should fire
        cited = sorted(n for n in refs.numbered if refs.contexts.get(n))
        for sentence in numbered:
            numbers = set()
            for m in BRACKET_CITE.finditer(sentence):
                numbers |= bracket_numbers(m.group(1))
            if len(numbers) != 1 or len(cited) < 4:
                continue
            (n,) = numbers
            other = cited[(cited.index(n) + len(cited) // 2) % len(cited)] if n in cited else cited[0]
            swapped = BRACKET_CITE.sub(f"[{other}]", sentence)
            count = counts.setdefault(("numbered", "marker swapped (should fire)"), [0, 0])
            count[0] += 1
            count[1] += bool(refs.attribution(swapped))
            guard = counts.setdefault(("numbered", "marker swapped (should fire), guard"), [0, 0])
            guard[0] += 1
            guard[1] += bool(refs.unattributed(swapped))
            m = BRACKET_CITE.search(sentence)
            what = BRACKET_CITE.sub(" ", cited_clause(sentence, m.start(), m.end())).strip(" ,.;:")
            if len(content_stems(what)) < MIN_DESCRIBED_WORDS:
                continue
            for name, marker, exclude in (
                ("described, verbatim", n, None),
                ("described, own sentence left out", n, sentence),
                ("described, marker swapped (should fire)", other, None),
            ):
                claim = f"The paper builds on [{marker}], which describes {what}."
                count = counts.setdefault(("numbered", name), [0, 0])
                count[0] += 1
                count[1] += bool(refs.misdescribed(claim, exclude=exclude))
    print("papers:", "; ".join(used))
    for name in ("verbatim", "own sentence left out", "verbatim, guard", "own sentence left out, guard"):
        n = sum(v[0] for (_, c), v in counts.items() if c == name)
        k = sum(v[1] for (_, c), v in counts.items() if c == name)
        lo, hi = wilson(k, n)
        print(
            f"all, {name}: {k} of {n} faithful sentences flagged = {k / max(n, 1):.1%} "
            f"(95% Wilson interval {lo:.1%}–{hi:.1%})"
        )
    for (kind, name), (n, k) in sorted(counts.items()):
        lo, hi = wilson(k, n)
        print(
            f"{kind}, {name}: {k} of {n} sentences flagged = {k / max(n, 1):.1%} "
            f"(95% Wilson interval {lo:.1%}–{hi:.1%})"
        )


if __name__ == "__main__":
    main()
