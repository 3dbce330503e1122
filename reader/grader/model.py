"""The relevance grader: a cross-encoder (question, passage window) → P(relevant), trained here.

The same MiniLM-L6 base and training loop as the claim checker (scripts/training/train.py), trained
by scripts/train_grader.py on rule-made questions from the training papers
(scripts/make_grader_data.py). A passage is scored in windows of whole sentences
(`windows`) and keeps its best window's score; that window is also the
part of the passage that bears on the question. The weights ship in reader/grader/weights/
(fp16 safetensors) and load offline; torch is imported when the grader is first used.
"""

from __future__ import annotations

import threading
from dataclasses import dataclass
from pathlib import Path

from reader.checker.model import ClaimChecker
from reader.text.split import split_sentences

WEIGHTS = Path(__file__).resolve().parent / "weights"
MAX_TOKENS = 192  # question and window together, in training and here
WINDOW_WORDS = 110  # about 150 word pieces: with the question inside the grader's 192 tokens


@dataclass
class Relevance:
    """A passage's grade: its best window's P(relevant), and that window."""

    p_relevant: float
    window: str


class RelevanceGrader:
    """Grades passages for a question. Thread-safe (one forward pass at a time)."""

    def __init__(self, directory: Path = WEIGHTS, threads: int | None = None):
        self.directory = Path(directory)
        self._scorer = ClaimChecker(
            self.directory,
            threads=threads,
            max_tokens=MAX_TOKENS,
            what="relevance grader",
            script="scripts/train_grader.py",
        )

    @property
    def name(self) -> str:
        return f"relevance-grader ({self.directory.name})"

    def load(self) -> None:
        self._scorer.load()

    def grade(self, question: str, passages: list[str]) -> list[Relevance]:
        """Each passage's best window for the question."""
        parts = [windows(p) or [p] for p in passages]
        scores = iter(self._scorer.score_pairs([(question, w) for ws in parts for w in ws]))
        out = []
        for ws in parts:
            mine = [next(scores) for _ in ws]
            best = max(range(len(mine)), key=mine.__getitem__)
            out.append(Relevance(mine[best], ws[best]))
        return out


def windows(text: str, most_words: int = WINDOW_WORDS) -> list[str]:
    """The passage as consecutive runs of whole sentences of up to `most_words` words (a longer
    sentence is a window of its own, cut at the model's input length)."""
    out: list[str] = []
    current: list[str] = []
    size = 0
    for sentence in split_sentences(text) or [text]:
        n = len(sentence.split())
        if current and size + n > most_words:
            out.append(" ".join(current))
            current, size = [], 0
        current.append(sentence)
        size += n
    if current:
        out.append(" ".join(current))
    return out


_SHARED: dict[Path, RelevanceGrader] = {}
_SHARED_LOCK = threading.Lock()


def shared_grader(directory: Path = WEIGHTS) -> RelevanceGrader:
    """One loaded grader per weights directory for the process."""
    with _SHARED_LOCK:
        if directory not in _SHARED:
            _SHARED[directory] = RelevanceGrader(directory)
        return _SHARED[directory]
