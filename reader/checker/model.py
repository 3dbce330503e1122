"""The claim checker: a cross-encoder (claim, evidence) → P(supported), trained for papers.

A MiniLM-L6 cross-encoder fine-tuned here (scripts/train_checker.py) on pairs made by rule
from the training papers (scripts/make_checker_data.py). Its weights ship inside the package
(reader/checker/weights/, fp16 safetensors) and load offline. A claim is scored against each
of its evidence excerpts on its own and the best excerpt's score is kept, so the excerpt that
decided is known and can be shown.

torch and transformers are imported when the checker is first loaded, not at import time.
"""

from __future__ import annotations

import threading
from dataclasses import dataclass
from pathlib import Path

from reader.errors import WeightsUnusable, describe_error

WEIGHTS = Path(__file__).resolve().parent / "weights"
MAX_TOKENS = 160  # claim and excerpt together, in training and here
BATCH = 32


class CheckerMissing(WeightsUnusable):
    """The checker's weights are not where they should be."""


def how_to_restore(directory: Path) -> str:
    """How to get shipped weights back: they come with reader's source and its package."""
    try:
        shown = Path(directory).resolve().relative_to(Path(__file__).resolve().parents[2])
    except ValueError:
        shown = directory
    return f"in a git clone: git checkout -- {shown}; otherwise pip install --force-reinstall audited-reader"


def _loaded(load, damaged: str, restore: str):
    """`load()`, or WeightsUnusable: what is damaged, why, and how to restore it."""
    try:
        return load()
    except Exception as exc:
        raise WeightsUnusable(
            f"{damaged} ({describe_error(exc)}); reinstall reader to restore them ({restore})"
        ) from None


@dataclass
class Scored:
    """A claim's best score over its excerpts, and which excerpt gave it (None: no excerpt)."""

    p_supported: float
    best: int | None


class ClaimChecker:
    """Scores (claim, evidence) pairs. Thread-safe: one forward pass at a time."""

    def __init__(
        self,
        directory: Path = WEIGHTS,
        threads: int | None = None,
        max_tokens: int = MAX_TOKENS,
        *,
        what: str = "claim checker",
        script: str = "scripts/train_checker.py",
    ):
        self.directory = Path(directory)
        self.threads = threads
        self.max_tokens = max_tokens
        self.what, self.script = what, script  # for the messages: what it is, what trains it
        self._model = None
        self._tokenizer = None
        self._lock = threading.Lock()

    @property
    def name(self) -> str:
        return f"claim-checker ({self.directory.name})"

    def load(self) -> None:
        with self._lock:  # the critique's and the synthesis's audits ask at once
            self._load()

    def _load(self) -> None:
        """Load the weights, or WeightsUnusable in one line naming the file and how to restore it:
        missing (moved), truncated or overwritten (safetensors cannot read it), or damaged inside
        (values that are not numbers: bytes overwritten in the middle)."""
        if self._model is not None:
            return
        weights = self.directory / "model.safetensors"
        restore = how_to_restore(self.directory)
        if not weights.is_file():
            raise CheckerMissing(
                f"{self.directory}: no model.safetensors; reinstall reader or run {self.script} to make it "
                f"({restore})"
            )
        import torch
        from transformers import AutoModelForSequenceClassification, AutoTokenizer

        if self.threads:
            torch.set_num_threads(self.threads)
        tokenizer = _loaded(
            lambda: AutoTokenizer.from_pretrained(self.directory, local_files_only=True),
            f"{self.directory}: the {self.what}'s tokenizer files are damaged or missing",
            restore,
        )
        model = _loaded(
            lambda: AutoModelForSequenceClassification.from_pretrained(self.directory, local_files_only=True),
            f"{weights}: the {self.what}'s weights are damaged",
            restore,
        )
        model = model.float().eval()
        broken = sum(int((~torch.isfinite(p)).sum()) for p in model.parameters())
        if broken:
            raise WeightsUnusable(
                f"{weights}: the {self.what}'s weights are damaged ({broken:,} values are not numbers); "
                f"reinstall reader to restore them ({restore})"
            )
        self._tokenizer, self._model = tokenizer, model

    def score_pairs(self, pairs: list[tuple[str, str]]) -> list[float]:
        """P(supported) for each (claim, evidence) pair."""
        if not pairs:
            return []
        import torch

        out: list[float] = []
        with self._lock, torch.inference_mode():
            self._load()
            for start in range(0, len(pairs), BATCH):
                chunk = pairs[start : start + BATCH]
                batch = self._tokenizer(
                    [c for c, _ in chunk],
                    [e for _, e in chunk],
                    truncation="only_second",
                    max_length=self.max_tokens,
                    padding=True,
                    return_tensors="pt",
                )
                logits = self._model(**batch).logits[:, 0]
                out.extend(torch.sigmoid(logits).tolist())
        return out

    def score(self, claims: list[str], evidence: list[list[str]]) -> list[Scored]:
        """Each claim against each of its own excerpts, and against its best two and best three
        joined (a sentence that merges two places of the paper); the higher is kept. `best` is
        the best single excerpt, the one shown."""
        singles = iter(self.score_pairs([(c, e) for c, texts in zip(claims, evidence) for e in texts]))
        per_claim = [[next(singles) for _ in texts] for texts in evidence]
        joined = [
            (claim, text)
            for claim, texts, mine in zip(claims, evidence, per_claim)
            for text in joined_excerpts(texts, mine)
        ]
        joined_scores = iter(self.score_pairs(joined))
        out = []
        for texts, mine in zip(evidence, per_claim):
            best = max(range(len(mine)), key=mine.__getitem__) if mine else None
            p = mine[best] if best is not None else 0.0
            for _ in joined_excerpts(texts, mine):
                p = max(p, next(joined_scores))
            out.append(Scored(p, best))
        return out


def joined_excerpts(texts: list[str], scores: list[float]) -> list[str]:
    """The best two and the best three excerpts (by their own scores), each set joined in the
    order the claim's search gave them; none for fewer than two excerpts."""
    ranked = sorted(range(len(texts)), key=lambda i: -scores[i])
    out = []
    for n in (2, 3):
        if len(texts) >= n:
            text = " … ".join(texts[i] for i in sorted(ranked[:n]))
            if text not in out:
                out.append(text)
    return out


_SHARED: dict[Path, ClaimChecker] = {}
_SHARED_LOCK = threading.Lock()


def shared_checker(directory: Path = WEIGHTS) -> ClaimChecker:
    """One loaded checker per weights directory for the process."""
    with _SHARED_LOCK:
        if directory not in _SHARED:
            _SHARED[directory] = ClaimChecker(directory)
        return _SHARED[directory]
