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
    os.environ["READER_HOME"] = args.home
    sys.path.insert(0, str(ROOT))
    from reader.facade import Reader
    from reader.grader.model import windows
    from reader.text.relations import checkable_numbers
    from scripts.training import rewrites as rw
    from scripts.training.papers import passages, source_sentences, training_papers
    from scripts.training.questions import question_for, unanswerable

    started = time.perf_counter()
    app = Reader(use_cache=False)
    services = app.services
    index = services.search_index
    stored = training_papers(services, args.papers)
    names = list(stored)
    rng = random.Random(args.seed)
    val = set(rng.sample(names, args.val_papers))
    papers = {}
    for name in names:
        own = passages(services, stored[name])
        rows = {cid: (section, text) for cid, section, _, _, text in own}
        sentences = source_sentences(own)
        rich = [x for x in sentences if checkable_numbers(x[0]) or rw.name_matches(x[0])]
        plain = [x for x in sentences if x not in set(rich)]
        rng.shuffle(rich)
        rng.shuffle(plain)
        chosen = (rich[: int(args.per_paper * 0.8)] + plain)[: args.per_paper]
        questions = []
        for s, cid in chosen:
            q = question_for(s, rng)
            if q:
                questions.append({**q, "sentence": s, "chunk": cid})
        papers[name] = {
            "id": stored[name],
            "chunks": rows,
            "questions": questions,
            "names": rw.paper_names([t for _, t in rows.values()]),
        }
    args.out.parent.mkdir(parents=True, exist_ok=True)
    counts: Counter = Counter()
    with lzma.open(args.out, "wt", encoding="utf-8") as fh:

        def write(name, kind, question, window, label):
            split = "val" if name in val else "train"
            row = {
                "paper": name,
                "split": split,
                "kind": kind,
                "claim": question,
                "evidence": window,
                "label": label,
            }
            fh.write(json.dumps(row, ensure_ascii=False) + "\n")
            counts[(split, kind, label)] += 1

        for name in names:
            paper = papers[name]
            if not paper["questions"]:
                continue
            own_names = set(paper["names"])
            foreign_names = sorted(
                {n for other, p in papers.items() if other != name for n in p["names"][:30]} - own_names
            )
            foreign_qs = [q for other in names if other != name for q in papers[other]["questions"][:6]]
            texts = [q["question"] for q in paper["questions"]]
            vectors = index.embed_queries(texts)
            for q, vector in zip(paper["questions"], vectors):
                own_text = paper["chunks"][q["chunk"]][1]
                own_window = next((w for w in windows(own_text) if q["sentence"] in w), None)
                if own_window is None:
                    continue
                write(name, q["kind"], q["question"], own_window, 1)
                hits = index.search(q["question"], paper["id"], query_vector=vector)[: args.top]
                misses = [
                    h
                    for h in hits
                    if h.chunk_id != q["chunk"]
                    and q["sentence"] not in h.text
                    and not (q["answer"] and q["answer"] in h.text)
                ]
                for h in misses[:2]:
                    write(name, "near_miss", q["question"], best_window(q["question"], h.text), 0)
                if rng.random() < 0.5:
                    made = unanswerable(q, foreign_names, rng)
                    if made:
                        write(name, "unanswerable", made, own_window, 0)
            for q in rng.sample(foreign_qs, min(len(foreign_qs), len(paper["questions"]) // 3)):
                hits = index.search(q["question"], paper["id"])[:1]
                if hits:
                    write(name, "other_paper", q["question"], best_window(q["question"], hits[0].text), 0)
            print(
                f"  {name}: {len(paper['questions'])} questions, {time.perf_counter() - started:.0f} s",
                file=sys.stderr,
                flush=True,
            )
    for split in ("train", "val"):
        print(
            f"{split}: "
            + ", ".join(f"{k}/{lab}: {n}" for (s, k, lab), n in sorted(counts.items()) if s == split)
        )
    print(f"{sum(counts.values())} pairs in {time.perf_counter() - started:.0f} s -> {args.out}")


if __name__ == "__main__":
    main()
