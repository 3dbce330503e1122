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
import re
import sys
import time
from collections import Counter
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
TRAIN_PAPERS = ROOT.parent / "shared" / "papers-train"
SKIP_SECTION = re.compile(r"^\W*(?:\d+\W*)?(?:references|bibliography|acknowledg|author contributions|front matter|"
                          r"supporting information|funding|competing interests|conflicts? of interest|"
                          r"data availability|参考文献|致谢)", re.I)
_CJK = re.compile(r"[\u3400-\u9fff]")
_DIRECTION = re.compile(r"\b(?:higher|lower|more|less|better|worse|outperform\w*|improv\w*|increas\w*|"
                        r"decreas\w*|larger|smaller|than|significant\w*|reduc\w*)\b", re.I)
_STOP = set("the a an of in on for to and or with by from at as is are was were be been this that these those "
            "it its we our their they which who than into over under between each both all any such can may "
            "not no also more most other using used use based two one three first second new".split())


def usable_sentence(s: str) -> bool:
    words = s.split()
    if not 8 <= len(words) <= 60 or not 50 <= len(s) <= 400 or _CJK.search(s):
        return False
    alpha = sum(1 for w in words if re.fullmatch(r"[A-Za-z][A-Za-z'\-]*[,;:.]?", w))
    return alpha / len(words) >= 0.6 and "http" not in s and s[0].isupper() and s.rstrip()[-1] in ".!?"


def paper_terms(sentences: list[str], n: int = 30) -> list[str]:
    """Frequent content-word bigrams ("the training set", "gene expression"): the paper's topics."""
    counts: Counter = Counter()
    for s in sentences:
        words = re.findall(r"[a-z][a-z\-]{2,}", s.lower())
        counts.update(f"{a} {b}" for a, b in zip(words, words[1:]) if a not in _STOP and b not in _STOP)
    return [f"the {t}" for t, c in counts.most_common(n) if c >= 3]


def claims_for(paper: dict, foreign: list[str], rng: random.Random, per_paper: int) -> list[dict]:
    from reader.checker import rewrites as rw

    sources = paper["sentences"]
    rich = [i for i, (s, _) in enumerate(sources) if rw._checkable_numbers(s) or rw._names(s) or _DIRECTION.search(s)]
    plain = [i for i in range(len(sources)) if i not in set(rich)]
    rng.shuffle(rich)
    rng.shuffle(plain)
    chosen = sorted((rich[:int(per_paper * 0.75)] + plain)[:per_paper])
    numbers, names, terms = paper["numbers"], paper["names"], paper["terms"]
    out = []

    def add(claim, label, kind, src):
        if claim and claim not in {c["claim"] for c in out}:
            out.append({"claim": claim, "label": label, "kind": kind, "sources": src})

    for i in chosen:
        s, chunk = sources[i]
        src = [(s, chunk)]
        add(rw.third_person(s, rng) or s, 1, "verbatim", src)
        for kind in rng.sample(["reported", "compressed", "reformatted", "rounded", "synonyms", "paraphrased"], 3):
            add(getattr(rw, kind)(s, rng), 1, kind, src)
        if rng.random() < 0.3 and i + 1 < len(sources) and sources[i + 1][1] == chunk:
            add(rw.fused(s, sources[i + 1][0], rng), 1, "fused", src + [sources[i + 1]])
        makers = {
            "changed_number": lambda: rw.changed_number(s, rng),
            "swapped_number": lambda: rw.swapped_number(s, numbers, rng),
            "invented_name": lambda: rw.invented_name(s, paper["foreign_names"], rng),
            "moved_relation": lambda: rw.moved_relation(s, names, rng),
            "reversed_relation": lambda: rw.reversed_relation(s, rng),
            "negation": lambda: rw.negation(s, rng),
        }
        kinds = [k for k in makers]
        rng.shuffle(kinds)
        made = 0
        for kind in kinds:
            if made == 3:
                break
            claim = makers[kind]()
            if claim and claim != s:
                add(rw.surface(claim, rng) if rng.random() < 0.5 else claim, 0, kind, src)
                made += 1
    for _ in range(max(4, per_paper // 4)):
        add(rw.invented_claim(names, terms, rng.choice(foreign) if foreign else None, rng), 0, "invented_claim", [])
    return out


def _words(text: str) -> set[str]:
    return set(re.findall(r"[a-z0-9]+", text.lower()))


def near_copy(source: str, excerpt: str, at: float = 0.5) -> bool:
    """Does the excerpt hold at least `at` of the source's content words? Then it may state the
    same fact, and a supported claim paired with it has no label by construction."""
    want = _words(source) - _STOP
    return len(want & _words(excerpt)) >= at * max(1, len(want))


def pairs_for(claim: dict, excerpts: list, own: list) -> list[dict]:
    """The labelled (claim, excerpt) pairs of one claim (see the module docstring)."""
    texts = [s for s, _ in claim["sources"]]
    out = []
    has_gold = False
    for e in excerpts:
        gold = bool(texts) and all(t in e.text for t in texts)
        has_gold = has_gold or gold
        if claim["label"] == 1 and not gold and any(near_copy(t, e.text) for t in texts):
            continue  # the fact may be stated here too: no label by construction
        out.append({"evidence": e.text, "label": int(claim["label"] == 1 and gold), "gold": gold})
    if claim["label"] == 1 and not has_gold:
        for e in own:
            if all(t in e.text for t in texts):
                out.append({"evidence": e.text, "label": 1, "gold": True})
    return out


def main() -> None:
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
    os.environ["READER_HOME"] = args.home
    sys.path.insert(0, str(ROOT))
    from sqlalchemy import select

    from reader.audit.evidence import excerpts
    from reader.audit.loop import _hits_to_evidence
    from reader.audit.verify import EvidenceRef
    from reader.checker import rewrites as rw
    from reader.facade import Reader
    from reader.ingest.pipeline import ingest_paths
    from reader.store.tables import Chunk, Paper
    from reader.text.split import split_sentences

    started = time.perf_counter()
    app = Reader(use_cache=False)
    files = sorted(args.papers.glob("*.pdf"))
    with app.db() as session:
        stored = {Path(p.source_path or "").name: p.id for p in session.scalars(select(Paper))}
    missing = [f for f in files if f.name not in stored]
    if missing:
        print(f"ingesting {len(missing)} papers …", file=sys.stderr, flush=True)
        for r in ingest_paths(missing, app.db, open_index=lambda: app.search_index):
            if r.paper_id:
                stored[Path(r.file).name] = r.paper_id
    names = sorted(n for n in stored if n in {f.name for f in files})
    rng = random.Random(args.seed)
    val = set(rng.sample(names, args.val_papers))
    papers = {}
    for name in names:
        with app.db() as session:
            chunks = list(session.scalars(select(Chunk).where(Chunk.paper_id == stored[name]).order_by(Chunk.ordinal)))
            rows = [(c.id, c.section or "", c.page_start, c.page_end, c.text) for c in chunks]
        texts = [r[4] for r in rows]
        sentences = [(s, r[0]) for r in rows if not SKIP_SECTION.match(r[1])
                     for s in split_sentences(r[4]) if usable_sentence(s)]
        papers[name] = {"id": stored[name], "chunks": {r[0]: r for r in rows}, "sentences": sentences,
                        "numbers": rw.paper_numbers(texts), "names": rw.paper_names(texts),
                        "terms": paper_terms([s for s, _ in sentences])}
    for name, paper in papers.items():
        own = set(paper["names"])
        paper["foreign_names"] = sorted({n for other, p in papers.items() if other != name
                                         for n in p["names"][:40]} - own)[:400]
    args.out.parent.mkdir(parents=True, exist_ok=True)
    counts: Counter = Counter()
    with lzma.open(args.out, "wt", encoding="utf-8") as fh:
        for name in names:
            paper = papers[name]
            foreign = [s for other in names if other != name for s, _ in papers[other]["sentences"][:30]]
            claims = claims_for(paper, rng.sample(foreign, min(200, len(foreign))), rng, args.per_paper)
            if not claims:
                continue
            vectors = app.search_index.embed_queries([c["claim"] for c in claims])
            for claim, vector in zip(claims, vectors):
                hits = app.search_index.search(claim["claim"], paper["id"], query_vector=vector)
                found = excerpts(claim["claim"], _hits_to_evidence(hits))
                own = [EvidenceRef(cid, *paper["chunks"][cid][2:4], paper["chunks"][cid][4])
                       for cid in {c for _, c in claim["sources"]}]
                for pair in pairs_for(claim, found, excerpts(claim["claim"], own)):
                    row = {"paper": name, "split": "val" if name in val else "train", "kind": claim["kind"],
                           "claim": claim["claim"], **pair}
                    fh.write(json.dumps(row, ensure_ascii=False) + "\n")
                    counts[(row["split"], row["kind"], row["label"])] += 1
            print(f"  {name}: {len(claims)} claims, {time.perf_counter() - started:.0f} s", file=sys.stderr, flush=True)
    for split in ("train", "val"):
        print(f"{split}:")
        for kind in rw.SUPPORTED_KINDS + rw.UNSUPPORTED_KINDS:
            print(f"  {kind:<18} label 1: {counts[(split, kind, 1)]:>6}   label 0: {counts[(split, kind, 0)]:>6}")
    print(f"{sum(counts.values())} pairs in {time.perf_counter() - started:.0f} s -> {args.out}")


if __name__ == "__main__":
    main()
