"""Paraphrases of the training papers' sentences, written once by the embedded model.

The claim checker's most important training pairs are minimal pairs in the writer's own words: a
faithful paraphrase (label 1) and its twin that differs from it by one fact (label 0, made by rule
in scripts/make_checker_data.py from the paraphrase itself). This script writes the paraphrases.

Only ../shared/papers-train/ is read. From each paper's body (references and front matter left
out) sentences with numbers, names or comparison words come first; every other request asks for
a fusion of the sentence and its neighbour. The embedded model rewrites each as a reviewer's
note would (third person, other words); three rewrites are asked for at once (the prompt is read once); each is kept only when its numbers and names are
the source's and enough of its words differ (scripts.training.paraphrase.keep_paraphrase).

Appends JSON lines to --out and skips sources already there, so it can be stopped and resumed:

    nice .venv/bin/python scripts/make_paraphrases.py --minutes 80 > /tmp/paraphrase.log 2>&1 &
    xz -c /tmp/reader-paraphrases.jsonl > scripts/data/checker_paraphrases.jsonl.xz

The shipped file holds 1,368 rewrites of 570 sentences of 72 papers: 251 written in 33 minutes
and 1,117 in 64 more (about one call of three rewrites every 7-8 s on 2 cores with tests beside
it). 706 pass keep_paraphrase at --min-changed 0.2 (the rest copy their source too closely, add
a number or name, or turn it round). Read by hand, 13 of 30 passing rewrites still say something
their source does not; scripts/make_checker_mixture.py --min-similarity drops some of those.
"""

from __future__ import annotations

import argparse
import json
import os
import random
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
TRAIN_PAPERS = ROOT.parent / "shared" / "papers-train"


def main() -> None:
    args = _arguments()
    sys.path.insert(0, str(ROOT))
    os.environ.setdefault("READER_HOME", "/tmp/reader-paraphrase-home")
    from reader.config import load_settings
    from reader.llm.local import LocalLLM

    done = set()
    if args.out.exists():
        for line in args.out.read_text(encoding="utf-8").splitlines():
            done.add(json.loads(line)["source"])
    llm = LocalLLM(load_settings().models_dir)
    rng = random.Random(args.seed)
    started = time.perf_counter()
    # round robin over papers, so a stopped run still covers every paper
    order = _interleave(_picked(sorted(args.papers.glob("*.pdf")), rng, args.per_paper))
    kept = tried = 0
    with args.out.open("a", encoding="utf-8") as fh:
        for name, source, passage, fuse_with in order:
            if (time.perf_counter() - started) / 60 > args.minutes:
                break
            key = source + (" " + fuse_with if fuse_with else "")
            if key in done:
                continue
            tried += 1
            kept += _paraphrase(llm, fh, name, key, source, passage, fuse_with, rng.randrange(4))
            if tried % 20 == 0:
                print(
                    f"{kept} kept of {tried}, {time.perf_counter() - started:.0f} s",
                    file=sys.stderr,
                    flush=True,
                )
    print(f"{kept} kept of {tried} in {time.perf_counter() - started:.0f} s -> {args.out}")


def _arguments() -> argparse.Namespace:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--papers", type=Path, default=TRAIN_PAPERS)
    ap.add_argument("--out", type=Path, default=Path("/tmp/reader-paraphrases.jsonl"))
    ap.add_argument("--seed", type=int, default=13)
    ap.add_argument("--per-paper", type=int, default=60)
    ap.add_argument("--minutes", type=float, default=180.0)
    args = ap.parse_args()
    if "papers-train" not in str(args.papers.resolve()):
        sys.exit(f"{args.papers}: paraphrases are made from ../shared/papers-train only")
    return args


def _picked(files: list[Path], rng: random.Random, per_paper: int) -> list[list[tuple]]:
    """For each paper that parses, the (paper, sentence, passage, sentence to fuse with) to rewrite."""
    from reader.ingest.chunk import chunk_paper
    from reader.ingest.pipeline import parse_file
    from scripts.training.paraphrase import source_sentences

    queue = []
    for f in files:
        try:
            parsed = parse_file(f, f.read_bytes())
        except Exception as exc:  # a training paper that does not parse is left out, said once
            print(f"{f.name}: not parsed ({exc})", file=sys.stderr)
            continue
        chunks = [(c.section, c.text) for c in chunk_paper(parsed)]
        queue.append([(f.name, *p) for p in source_sentences(chunks, rng, per_paper)])
    return queue


def _paraphrase(llm, fh, name: str, key: str, source: str, passage: str, fuse_with: str, style: int) -> int:
    """The LLM's rewrites of one sentence, each written with whether it passes (the mixture
    filters again); how many passed."""
    from scripts.training.paraphrase import keep_paraphrase, paraphrase_messages, parse_variants

    reply = llm.complete(paraphrase_messages(source, fuse_with, style), max_tokens=300).text
    kept = 0
    for text in parse_variants(reply)[:3]:
        kept += keep_paraphrase(key, text)
        row = {
            "paper": name,
            "source": key,
            "paraphrase": text,
            "passage": passage,
            "fused": bool(fuse_with),
            "kept": keep_paraphrase(key, text),
        }
        fh.write(json.dumps(row, ensure_ascii=False) + "\n")
    fh.flush()
    return kept


def _interleave(groups: list[list]) -> list:
    out = []
    for i in range(max((len(g) for g in groups), default=0)):
        out.extend(g[i] for g in groups if i < len(g))
    return out


if __name__ == "__main__":
    main()
