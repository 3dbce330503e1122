"""Train the claim checker from the shipped pairs and seed; writes reader/checker/weights/.

    nice .venv/bin/python scripts/train_checker.py --out /tmp/checker-stage1 --max-steps 1755 \
        --max-minutes 600 > /tmp/stage1.log 2>&1
    nice .venv/bin/python scripts/train_checker.py --init /tmp/checker-stage1 --loosen 0.7 \
        --learning-rate 2e-5 --max-pairs 6500 --max-minutes 17 --eval-every 200 --val-pairs 600 \
        --distractors 0.3 > /tmp/stage2.log 2>&1

The first stage (1,755 steps of 16 pairs, 76 minutes on 2 cores; its card is kept as
weights/train_card_stage1.json) learns the facts from near-verbatim claims; the second (407
steps, 15 minutes) starts from it with most claims, of both labels, rewritten further from their
source (scripts.training.rewrites.loosened), so that wording alone never decides.

Reads scripts/data/checker_pairs.jsonl.xz (made by scripts/make_checker_data.py from
../shared/papers-train/), trains on the "train" papers' pairs and stops early on the "val"
papers' pairs (scripts.training.train). Every positive pair is kept; negatives are the
fabricated claims' pairs (all of them) and the supported claims' distracting neighbours (a
seeded sample, at most --distractors per positive). Prints its run time.
"""

from __future__ import annotations

import argparse
import hashlib
import json
import lzma
import random
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from reader.checker.model import WEIGHTS
from reader.index.dense import packaged_model_path
from scripts.training.rewrites import SUPPORTED_KINDS, loosened
from scripts.training.train import (
    TrainConfig,
    add_config_options,
    config_from,
    show_pairs,
    show_result,
    train,
    write_card,
)

DATA = ROOT / "scripts" / "data" / "checker_pairs.jsonl.xz"


def load_pairs(path: Path) -> list[dict]:
    """The pairs, each excerpt cut to what the audit shows the checker (reader.audit.evidence.
    excerpts: the claim's best sentence with its neighbours), however the file was made."""
    from reader.audit.evidence import excerpts
    from reader.audit.verify import EvidenceRef

    with lzma.open(path, "rt", encoding="utf-8") as fh:
        pairs = [json.loads(line) for line in fh if line.strip()]
    for p in pairs:
        p["evidence"] = excerpts(p["claim"], [EvidenceRef(None, 1, 1, p["evidence"])])[0].text
    return pairs


def is_neighbour(pair: dict) -> bool:
    """A label-0 pair whose claim is true of the paper but not of this excerpt."""
    return pair["label"] == 0 and (pair["kind"] == "neighbour" or pair["kind"] in SUPPORTED_KINDS)


def choose_training(pairs: list[dict], rng: random.Random, distractors: float) -> list[dict]:
    positives = [p for p in pairs if p["label"] == 1]
    fabricated = [p for p in pairs if p["label"] == 0 and not is_neighbour(p)]
    neighbours = [p for p in pairs if is_neighbour(p)]
    rng.shuffle(neighbours)
    return positives + fabricated + neighbours[: int(distractors * len(positives))]


def choose_validation(pairs: list[dict], rng: random.Random, n: int) -> list[dict]:
    """A seeded sample of the held-apart pairs: the paraphrase minimal pairs where there are any
    (the mixture), as they are what the audit sees."""
    order = [p for p in pairs if p.get("source") == "paraphrase"] or list(pairs)
    rng.shuffle(order)
    return sorted(order[:n], key=lambda p: len(p["claim"]) + len(p["evidence"]))


def _provenance(data: Path) -> dict:
    """What scripts/make_checker_mixture.py wrote beside its data: sources, licences, counts."""
    card = Path(str(data) + ".card.json")
    return json.loads(card.read_text(encoding="utf-8")) if card.is_file() else {}


def _arguments() -> tuple[argparse.Namespace, TrainConfig]:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--data", type=Path, default=DATA)
    ap.add_argument("--out", type=Path, default=WEIGHTS)
    ap.add_argument("--distractors", type=float, default=0.5)
    ap.add_argument("--val-pairs", type=int, default=1500)
    ap.add_argument(
        "--init",
        type=Path,
        default=None,
        help="start from these weights (a second stage) instead of the packaged MiniLM",
    )
    ap.add_argument(
        "--loosen",
        type=float,
        default=0.0,
        help="share of claims (of both labels) rewritten further from their source (rewrites.loosened)",
    )
    defaults = TrainConfig()
    add_config_options(ap, defaults)
    args = ap.parse_args()
    config = config_from(args, defaults)
    return args, config


def main() -> None:
    args, config = _arguments()
    started = time.perf_counter()
    rng = random.Random(config.seed)
    pairs = load_pairs(args.data)
    train_pairs = choose_training([p for p in pairs if p["split"] == "train"], rng, args.distractors)
    for p in train_pairs:
        if rng.random() < args.loosen:
            p["claim"] = loosened(p["claim"], rng)
    val_pairs = choose_validation([p for p in pairs if p["split"] == "val"], rng, args.val_pairs)
    show_pairs(train_pairs, val_pairs, "supported")
    result = train(
        train_pairs,
        val_pairs,
        args.init or packaged_model_path(),
        args.out,
        config,
        log=lambda line: print(line, flush=True),
    )
    digest = hashlib.sha256(args.data.read_bytes()).hexdigest()
    write_card(
        args.out,
        config,
        result,
        {
            "file": args.data.name,
            "sha256": digest,
            "train_pairs": len(train_pairs),
            "val_pairs": len(val_pairs),
            "init": str(args.init or "packaged MiniLM"),
            "loosen": args.loosen,
            "distractors": args.distractors,
            **_provenance(args.data),
        },
    )
    show_result(result, args.out, started)


if __name__ == "__main__":
    main()
