"""Make the claim checker's training pairs from the papers in ../shared/papers-train/ (only those).

Every paper is ingested into a scratch home, exactly as `reader ingest` does; from its passages
(references and front matter left out) up to --per-paper sentences are taken (those with numbers,
names or direction words first). Each sentence is rewritten by the rules of
reader/checker/rewrites.py into supported and unsupported claims, and each claim is searched in
the paper's own index as the audit searches it (its top 3 passages). Every passage gives one
excerpt (reader.audit.evidence.excerpts), and every excerpt one pair:

- label 1: a supported claim and an excerpt holding all of its source sentences;
- label 0: an unsupported claim and any of its excerpts (the one holding the source is the hard
  negative); a supported claim and an excerpt without its source nor a near copy of it (the
  distracting neighbour a real audit sees).

A supported claim whose source was not retrieved gets the excerpt of its own passage as well.
A seeded shuffle sets --val-papers papers apart for early stopping. Writes JSON lines, xz-packed:

    .venv/bin/python scripts/make_checker_data.py --out scripts/data/checker_pairs.jsonl.xz
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


def main() -> None:
    args = _arguments()
    os.environ["READER_HOME"] = args.home
    sys.path.insert(0, str(ROOT))
    from reader.facade import Reader
    from scripts.training.claims import claims_for
    from scripts.training.papers import training_papers

    started = time.perf_counter()
    services = Reader(use_cache=False).services
    stored = training_papers(services, args.papers)
    names = list(stored)
    rng = random.Random(args.seed)
    val = set(rng.sample(names, args.val_papers))
    papers = {name: _paper(services, stored[name]) for name in names}
    for name, paper in papers.items():
        own = set(paper["names"])
        paper["foreign_names"] = sorted(
            {n for other, p in papers.items() if other != name for n in p["names"][:40]} - own
        )[:400]
    args.out.parent.mkdir(parents=True, exist_ok=True)
    counts: Counter = Counter()
    with lzma.open(args.out, "wt", encoding="utf-8") as fh:
        for name in names:
            paper = papers[name]
            foreign = [s for other in names if other != name for s, _ in papers[other]["sentences"][:30]]
            claims = claims_for(paper, rng.sample(foreign, min(200, len(foreign))), rng, args.per_paper)
            if not claims:
                continue
            split = "val" if name in val else "train"
            for row in _pairs(services.search_index, paper, claims):
                fh.write(json.dumps({"paper": name, "split": split, **row}, ensure_ascii=False) + "\n")
                counts[(split, row["kind"], row["label"])] += 1
            print(
                f"  {name}: {len(claims)} claims, {time.perf_counter() - started:.0f} s",
                file=sys.stderr,
                flush=True,
            )
    _show_counts(counts)
    print(f"{sum(counts.values())} pairs in {time.perf_counter() - started:.0f} s -> {args.out}")


def _arguments() -> argparse.Namespace:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--papers", type=Path, default=TRAIN_PAPERS)
    ap.add_argument("--home", default="/tmp/reader-checker-data-home")
    ap.add_argument("--out", type=Path, default=ROOT / "scripts" / "data" / "checker_pairs.jsonl.xz")
    ap.add_argument("--seed", type=int, default=13)
    ap.add_argument("--per-paper", type=int, default=60)
    ap.add_argument("--val-papers", type=int, default=8)
    args = ap.parse_args()
    if args.papers.resolve() != TRAIN_PAPERS.resolve() and "papers-train" not in str(args.papers):
        sys.exit(f"{args.papers}: the checker trains on ../shared/papers-train only")
    return args


def _paper(services, paper_id: str) -> dict:
    """A paper's passages, the sentences claims are made from, and its numbers, names and terms."""
    from scripts.training import rewrites as rw
    from scripts.training.claims import paper_terms
    from scripts.training.papers import passages, usable_sentences

    rows = passages(services, paper_id)
    texts = [r[4] for r in rows]
    sentences = usable_sentences(rows)
    return {
        "id": paper_id,
        "chunks": {r[0]: r for r in rows},
        "sentences": sentences,
        "numbers": rw.paper_numbers(texts),
        "names": rw.paper_names(texts),
        "terms": paper_terms([s for s, _ in sentences]),
    }


def _pairs(index, paper: dict, claims: list[dict]):
    """Each claim's pairs: against the excerpts its search in the paper finds, and its own."""
    from reader.audit.evidence import excerpts
    from reader.audit.loop import hits_to_evidence
    from reader.audit.verify import EvidenceRef
    from scripts.training.claims import pairs_for

    vectors = index.embed_queries([c["claim"] for c in claims])
    for claim, vector in zip(claims, vectors):
        hits = index.search(claim["claim"], paper["id"], query_vector=vector)
        found = excerpts(claim["claim"], hits_to_evidence(hits))
        own = [
            EvidenceRef(cid, *paper["chunks"][cid][2:4], paper["chunks"][cid][4])
            for cid in {c for _, c in claim["sources"]}
        ]
        for pair in pairs_for(claim, found, excerpts(claim["claim"], own)):
            yield {"kind": claim["kind"], "claim": claim["claim"], **pair}


def _show_counts(counts: Counter) -> None:
    from scripts.training import rewrites as rw

    for split in ("train", "val"):
        print(f"{split}:")
        for kind in rw.SUPPORTED_KINDS + rw.UNSUPPORTED_KINDS:
            print(
                f"  {kind:<18} label 1: {counts[(split, kind, 1)]:>6}   label 0: {counts[(split, kind, 0)]:>6}"
            )


if __name__ == "__main__":
    main()
