"""Train the relevance grader from the shipped pairs and seed; writes reader/grader/weights/.

    nice .venv/bin/python scripts/train_grader.py > /tmp/train_grader.log 2>&1

With its defaults it reproduces the shipped weights: 688 steps from the claim checker's weights
(reader/checker/weights), about 17.5 minutes on 2 cores.

Reads scripts/data/grader_pairs.jsonl.xz (made by scripts/make_grader_data.py from
../shared/papers-train/), trains on the "train" papers' pairs with the claim checker's loop
(scripts.training.train: the packaged MiniLM with a one-logit head, binary cross-entropy, early
stopping on the "val" papers' pairs) and writes fp16 weights with a training card. Negatives are
sampled to at most --negatives per positive. `--max-steps` makes a run end the same on any
machine; prints its run time.
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

from reader.checker.model import WEIGHTS as CHECKER_WEIGHTS  # noqa: E402
from reader.grader.model import MAX_TOKENS, WEIGHTS  # noqa: E402
from reader.index.dense import packaged_model_path  # noqa: E402
from scripts.training.train import (  # noqa: E402
    TrainConfig,
    add_config_options,
    config_from,
    show_pairs,
    show_result,
    train,
    write_card,
)

DATA = ROOT / "scripts" / "data" / "grader_pairs.jsonl.xz"


def load_pairs(path: Path) -> list[dict]:
    with lzma.open(path, "rt", encoding="utf-8") as fh:
        return [json.loads(line) for line in fh if line.strip()]


def choose(pairs: list[dict], rng: random.Random, negatives: float) -> list[dict]:
    positives = [p for p in pairs if p["label"] == 1]
    others = [p for p in pairs if p["label"] == 0]
    rng.shuffle(others)
    return positives + others[: int(negatives * len(positives))]


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--data", type=Path, default=DATA)
    ap.add_argument("--out", type=Path, default=WEIGHTS)
    ap.add_argument("--negatives", type=float, default=1.0)
    ap.add_argument(
        "--init",
        type=Path,
        default=CHECKER_WEIGHTS,
        help="start from these weights (default: the claim checker's); none: the packaged MiniLM",
    )
    ap.add_argument("--val-pairs", type=int, default=1200)
    defaults = TrainConfig(
        seed=32, max_tokens=MAX_TOKENS, max_pairs=11000, eval_every=150, patience=4, max_minutes=75.0
    )
    add_config_options(ap, defaults)
    args = ap.parse_args()
    config = config_from(args, defaults)
    started = time.perf_counter()
    rng = random.Random(config.seed)
    pairs = load_pairs(args.data)
    train_pairs = choose([p for p in pairs if p["split"] == "train"], rng, args.negatives)
    val_all = choose([p for p in pairs if p["split"] == "val"], rng, args.negatives)
    rng.shuffle(val_all)
    val_pairs = sorted(val_all[: args.val_pairs], key=lambda p: len(p["claim"]) + len(p["evidence"]))
    show_pairs(train_pairs, val_pairs, "relevant")
    result = train(
        train_pairs,
        val_pairs,
        packaged_model_path() if str(args.init) == "none" else args.init,
        args.out,
        config,
        log=lambda line: print(line, flush=True),
    )
    write_card(
        args.out,
        config,
        result,
        {
            "file": args.data.name,
            "sha256": hashlib.sha256(args.data.read_bytes()).hexdigest(),
            "train_pairs": len(train_pairs),
            "val_pairs": len(val_pairs),
            "negatives": args.negatives,
            "init": "packaged MiniLM" if str(args.init) == "none" else str(args.init),
        },
    )
    show_result(result, args.out, started)


if __name__ == "__main__":
    main()
