"""Make the relevance grader's training pairs from the papers in ../shared/papers-train/ (only those).

Every paper is ingested into a scratch home, exactly as `reader ingest` does. From its passages
(references and front matter left out) up to --per-paper sentences are taken (those with numbers
or names first) and each gives one question by the rules of scripts/training/questions.py. The
question is searched in its paper's index as `reader ask` searches (fused BM25 and dense, top
--top), and every passage is shown to the grader as its window that shares most words with the
question (reader.grader.model.windows; the grader keeps a passage's best window):

- label 1: the question and the window of its own passage that holds its sentence;
- label 0: a retrieved passage that is not its own and holds neither the answer nor the sentence
  (the index's near miss); the question made unanswerable (a name the paper never uses) and its
  own window; a question of another paper and this paper's best hit for it.

A seeded shuffle sets --val-papers papers apart for early stopping. Writes JSON lines, xz-packed
(the fields `claim` and `evidence` are the question and the window, as scripts.training.train reads):

    .venv/bin/python scripts/make_grader_data.py --out scripts/data/grader_pairs.jsonl.xz
"""

from __future__ import annotations

import argparse
import json
import lzma
import os
import random
import sys
import time
from collections import Counter
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
TRAIN_PAPERS = ROOT.parent / "shared" / "papers-train"


def best_window(question: str, text: str) -> str:
    from reader.grader.model import windows
    from scripts.training.questions import content_words

    wanted = {w.lower() for w in content_words(question)}
    parts = windows(text)
    return max(parts, key=lambda w: len(wanted & {x.lower() for x in content_words(w)}))


def main() -> None:
    args = _arguments()
    os.environ["READER_HOME"] = args.home
    sys.path.insert(0, str(ROOT))
    from reader.facade import Reader
    from scripts.training.papers import training_papers

    started = time.perf_counter()
    services = Reader(use_cache=False).services
    stored = training_papers(services, args.papers)
    names = list(stored)
    rng = random.Random(args.seed)
    val = set(rng.sample(names, args.val_papers))
    papers = {name: _paper(services, stored[name], rng, args.per_paper) for name in names}
    args.out.parent.mkdir(parents=True, exist_ok=True)
    with lzma.open(args.out, "wt", encoding="utf-8") as fh:
        pairs = _Pairs(fh, val)
        for name in names:
            paper = papers[name]
            if not paper["questions"]:
                continue
            _write_paper(pairs, name, papers, services.search_index, rng, args.top)
            print(
                f"  {name}: {len(paper['questions'])} questions, {time.perf_counter() - started:.0f} s",
                file=sys.stderr,
                flush=True,
            )
    for split in ("train", "val"):
        counts = sorted(pairs.counts.items())
        print(f"{split}: " + ", ".join(f"{k}/{lab}: {n}" for (s, k, lab), n in counts if s == split))
    print(f"{sum(pairs.counts.values())} pairs in {time.perf_counter() - started:.0f} s -> {args.out}")


def _arguments() -> argparse.Namespace:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--papers", type=Path, default=TRAIN_PAPERS)
    ap.add_argument("--home", default="/tmp/reader-grader-data-home")
    ap.add_argument("--out", type=Path, default=ROOT / "scripts" / "data" / "grader_pairs.jsonl.xz")
    ap.add_argument("--seed", type=int, default=32)
    ap.add_argument("--per-paper", type=int, default=60)
    ap.add_argument("--top", type=int, default=6)
    ap.add_argument("--val-papers", type=int, default=8)
    args = ap.parse_args()
    if "papers-train" not in str(args.papers.resolve()):
        sys.exit(f"{args.papers}: the grader trains on ../shared/papers-train only")
    return args


def _paper(services, paper_id: str, rng: random.Random, per_paper: int) -> dict:
    """A paper's passages, names and questions: one from each of up to `per_paper` sentences,
    those with numbers or names first."""
    from reader.text.relations import checkable_numbers
    from scripts.training import rewrites as rw
    from scripts.training.papers import passages, usable_sentences
    from scripts.training.questions import question_for

    own = passages(services, paper_id)
    rows = {cid: (section, text) for cid, section, _, _, text in own}
    sentences = usable_sentences(own)
    rich = [x for x in sentences if checkable_numbers(x[0]) or rw.name_matches(x[0])]
    plain = [x for x in sentences if x not in set(rich)]
    rng.shuffle(rich)
    rng.shuffle(plain)
    questions = []
    for s, cid in (rich[: int(per_paper * 0.8)] + plain)[:per_paper]:
        q = question_for(s, rng)
        if q:
            questions.append({**q, "sentence": s, "chunk": cid})
    names = rw.paper_names([t for _, t in rows.values()])
    return {"id": paper_id, "chunks": rows, "questions": questions, "names": names}


class _Pairs:
    """The JSON lines written, counted by split, kind and label."""

    def __init__(self, fh, val: set[str]):
        self.fh, self.val, self.counts = fh, val, Counter()

    def write(self, name: str, kind: str, question: str, window: str, label: int) -> None:
        split = "val" if name in self.val else "train"
        row = {
            "paper": name,
            "split": split,
            "kind": kind,
            "claim": question,
            "evidence": window,
            "label": label,
        }
        self.fh.write(json.dumps(row, ensure_ascii=False) + "\n")
        self.counts[(split, kind, label)] += 1


def _write_paper(pairs: _Pairs, name: str, papers: dict, index, rng: random.Random, top: int) -> None:
    """A paper's pairs: each question with its own window, its near misses and, at times, made
    unanswerable; then questions of other papers with this paper's best hit."""
    from reader.grader.model import windows
    from scripts.training.questions import unanswerable

    paper = papers[name]
    foreign_names = sorted(
        {n for other, p in papers.items() if other != name for n in p["names"][:30]} - set(paper["names"])
    )
    foreign_qs = [q for other in papers if other != name for q in papers[other]["questions"][:6]]
    vectors = index.embed_queries([q["question"] for q in paper["questions"]])
    for q, vector in zip(paper["questions"], vectors):
        own_window = next((w for w in windows(paper["chunks"][q["chunk"]][1]) if q["sentence"] in w), None)
        if own_window is None:
            continue
        pairs.write(name, q["kind"], q["question"], own_window, 1)
        hits = index.search(q["question"], paper["id"], query_vector=vector)[:top]
        misses = [
            h
            for h in hits
            if h.chunk_id != q["chunk"]
            and q["sentence"] not in h.text
            and not (q["answer"] and q["answer"] in h.text)
        ]
        for h in misses[:2]:
            pairs.write(name, "near_miss", q["question"], best_window(q["question"], h.text), 0)
        if rng.random() < 0.5:
            made = unanswerable(q, foreign_names, rng)
            if made:
                pairs.write(name, "unanswerable", made, own_window, 0)
    for q in rng.sample(foreign_qs, min(len(foreign_qs), len(paper["questions"]) // 3)):
        hits = index.search(q["question"], paper["id"])[:1]
        if hits:
            pairs.write(name, "other_paper", q["question"], best_window(q["question"], hits[0].text), 0)


if __name__ == "__main__":
    main()
