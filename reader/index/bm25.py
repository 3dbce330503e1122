"""The BM25 path: bm25s scoring over the token ids of every indexed chunk.

The token ids of each row are kept (see TokenTable) so that adding or removing
a paper rebuilds the bm25s matrix without tokenizing the other chunks again.
Rows are positions in the SearchIndex; restricting a search to some rows scores
only those rows, so a restriction never loses hits to a global cut-off.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path

import numpy as np

from reader.index.tokenize import tokenize

K1 = 1.5
B = 0.75


@dataclass
class TokenTable:
    """Per-row token ids (CSR: row i is ids[indptr[i]:indptr[i+1]]) and the shared vocabulary."""

    vocab: dict[str, int] = field(default_factory=dict)
    indptr: np.ndarray = field(default_factory=lambda: np.zeros(1, dtype=np.int64))
    ids: np.ndarray = field(default_factory=lambda: np.zeros(0, dtype=np.int32))

    @property
    def n_rows(self) -> int:
        return len(self.indptr) - 1

    def row(self, i: int) -> np.ndarray:
        return self.ids[self.indptr[i] : self.indptr[i + 1]]

    def append(self, texts: list[str]) -> TokenTable:
        """A new table with one row per text added at the end (vocabulary grows as needed)."""
        vocab = dict(self.vocab)
        new_ids: list[int] = []
        lengths: list[int] = []
        for text in texts:
            tokens = tokenize(text)
            for token in tokens:
                tid = vocab.get(token)
                if tid is None:
                    tid = vocab[token] = len(vocab)
                new_ids.append(tid)
            lengths.append(len(tokens))
        indptr = np.concatenate(
            [self.indptr, self.indptr[-1] + np.cumsum(np.asarray(lengths, dtype=np.int64))]
        )
        ids = np.concatenate([self.ids, np.asarray(new_ids, dtype=np.int32)])
        return TokenTable(vocab, indptr, ids)

    def keep(self, rows: np.ndarray) -> TokenTable:
        """A new table with only the given rows, in that order (vocabulary unchanged)."""
        rows = np.asarray(rows, dtype=np.int64)
        lengths = self.indptr[rows + 1] - self.indptr[rows]
        indptr = np.zeros(len(rows) + 1, dtype=np.int64)
        np.cumsum(lengths, out=indptr[1:])
        if len(rows) == 0:
            return TokenTable(dict(self.vocab), indptr, np.zeros(0, dtype=np.int32))
        # every kept position: row start + offset within the row
        starts = np.repeat(self.indptr[rows], lengths)
        offsets = np.arange(indptr[-1]) - np.repeat(indptr[:-1], lengths)
        return TokenTable(dict(self.vocab), indptr, self.ids[starts + offsets])


class BM25Path:
    """bm25s over a TokenTable. Build once per change; score per query."""

    def __init__(self, table: TokenTable, bm25=None):
        self.table = table
        self.n_rows = table.n_rows
        self._bm25 = bm25

    @classmethod
    def build(cls, table: TokenTable) -> BM25Path:
        import bm25s

        if table.n_rows == 0 or not table.vocab:
            return cls(table)
        corpus_ids = [table.row(i).tolist() for i in range(table.n_rows)]
        bm25 = bm25s.BM25(k1=K1, b=B)
        bm25.index((corpus_ids, table.vocab), create_empty_token=False, show_progress=False)
        return cls(table, bm25)

    def save(self, directory: Path) -> None:
        """bm25s's own files; nothing is written for an empty index."""
        if self._bm25 is not None:
            self._bm25.save(str(directory), show_progress=False)

    @classmethod
    def load(cls, directory: Path, table: TokenTable) -> BM25Path:
        import bm25s

        if table.n_rows == 0 or not table.vocab:
            return cls(table)
        # the vocabulary is the table's; bm25s's copy of it need not be parsed again
        bm25 = bm25s.BM25.load(str(directory), load_vocab=False, show_progress=False)
        if bm25.scores["num_docs"] != table.n_rows:
            raise ValueError(
                f"BM25 matrix covers {bm25.scores['num_docs']} rows, the token table {table.n_rows}"
            )
        bm25.vocab_dict = table.vocab
        return cls(table, bm25)

    def scores(self, query: str) -> np.ndarray:
        """BM25 score of every row for the query (0 for rows sharing no token with it)."""
        if self._bm25 is None:
            return np.zeros(self.n_rows, dtype=np.float32)
        vocab = self.table.vocab
        ids = sorted({vocab[t] for t in tokenize(query) if t in vocab})
        if not ids:
            return np.zeros(self.n_rows, dtype=np.float32)
        return self._bm25.get_scores_from_ids(ids)

    def top(self, query: str, k: int, rows: np.ndarray | None = None) -> list[tuple[int, float]]:
        """The k best (row, score) among `rows` (all rows when None); rows scoring 0 are left out."""
        scores = self.scores(query)
        return top_k(scores, k, rows, positive_only=True)


def top_k(
    scores: np.ndarray, k: int, rows: np.ndarray | None = None, *, positive_only: bool = False
) -> list[tuple[int, float]]:
    """The k highest (row, score) pairs, best first; ties broken by row order."""
    if rows is not None:
        scores = scores[rows]
    if k <= 0 or len(scores) == 0:
        return []
    if k < len(scores):
        candidates = np.argpartition(-scores, k - 1)[:k]
    else:
        candidates = np.arange(len(scores))
    order = candidates[np.lexsort((candidates, -scores[candidates]))]
    result = []
    for i in order:
        score = float(scores[i])
        if positive_only and score <= 0.0:
            continue
        result.append((int(rows[i]) if rows is not None else int(i), score))
    return result
