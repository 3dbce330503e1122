"""The restatement rule (reader.audit.restated) on copies of the shared papers' sentences.

    .venv/bin/python -m benchmarks.bench_restated            # 14 shared papers, ~1 minute

From each shared paper (parsed, no index), up to 40 body sentences (references left out) are
rewritten by the claim checker's rules (scripts.training.rewrites, seed 7): ways a writer copies a
sentence faithfully (as it stands, third person, a reporting frame, a clause dropped, synonyms)
and ways a copy turns false (a number changed or swapped, a name invented or moved, a relation
reversed, a negation added or removed). Each claim is looked for in its source's window (the
sentence with two neighbours on either side, as an excerpt shows it). Printed: per kind, the
share the rule passes as a restatement, with a 95% Wilson interval. A fabrication it passes
would skip the verifier: that share must stay at 0; the faithful copies it passes are verifier
calls saved. Also the dev set (eval/audit_dev.jsonl: faithful paraphrases and fabrications
written by hand) against its quotes.
"""

from __future__ import annotations

import json
import random
from collections import defaultdict
from pathlib import Path

from benchmarks.common import SHARED_PAPERS, wilson
from reader.audit.restated import restated_source
from reader.ingest.pdf import parse_pdf
from reader.text.split import split_sentences
from scripts.training import rewrites as rw
from scripts.training.claims import SKIP_SECTION, usable_sentence

ROOT = Path(__file__).resolve().parents[1]
PER_PAPER = 40
WINDOW = 2


def paper_sentences(path: Path) -> list[str]:
    parsed = parse_pdf(path)
    out = []
    for block in parsed.blocks:
        if block.kind not in ("body", "abstract") or SKIP_SECTION.search(block.section or ""):
            continue
        out.extend(" ".join(s.split()) for s in split_sentences(block.text))
    return out


def claims(sentences: list[str], rng: random.Random) -> list[tuple[str, str, int]]:
    """(kind, claim, index of its source) for a sample of the paper's usable sentences."""
    numbers, names = rw.paper_numbers(sentences), rw.paper_names(sentences)
    usable = [i for i, s in enumerate(sentences) if usable_sentence(s)]
    rng.shuffle(usable)
    makers = {
        "verbatim": lambda s: s,
        "third_person": lambda s: rw.third_person(s, rng),
        "reported": lambda s: rw.reported(s, rng),
        "compressed": lambda s: rw.compressed(s, rng),
        "synonyms": lambda s: rw.synonyms(s, rng),
        "changed_number": lambda s: rw.changed_number(s, rng),
        "swapped_number": lambda s: rw.swapped_number(s, numbers, rng),
        "invented_name": lambda s: rw.invented_name(s, ["Wavelet-GNN", "DeepTriage", "RoBERTa-XL"], rng),
        "moved_relation": lambda s: rw.moved_relation(s, names, rng),
        "reversed_relation": lambda s: rw.reversed_relation(s, rng),
        "negation": lambda s: rw.negation(s, rng),
    }
    out = []
    for i in sorted(usable[:PER_PAPER]):
        for kind, make in makers.items():
            claim = make(sentences[i])
            if claim and (kind == "verbatim" or claim != sentences[i]):
                out.append((kind, claim, i))
    return out


def main() -> None:
    rng = random.Random(7)
    passed: dict[str, list[int]] = defaultdict(lambda: [0, 0])
    for path in sorted(SHARED_PAPERS.glob("*.pdf")):
        sentences = paper_sentences(path)
        for kind, claim, i in claims(sentences, rng):
            window = " ".join(sentences[max(0, i - WINDOW) : i + WINDOW + 1])
            passed[kind][0] += restated_source(claim, [window]) is not None
            passed[kind][1] += 1
    dev = [json.loads(line) for line in (ROOT / "eval" / "audit_dev.jsonl").open(encoding="utf-8")]
    for row in dev:
        kind = "dev: faithful" if row["label"] == "supported" else "dev: fabricated"
        passed[kind][0] += restated_source(row["sentence"], [row["quote"]]) is not None
        passed[kind][1] += 1
    print("| claim | passed as a restatement | share [95% interval] |\n|---|---:|---|")
    for kind, (k, n) in passed.items():
        low, high = wilson(k, n)
        print(f"| {kind} | {k} of {n} | {k / max(n, 1):.2f} [{low:.2f}, {high:.2f}] |")


if __name__ == "__main__":
    main()
