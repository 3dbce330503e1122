"""The packaged MiniLM through FlagEmbedding, and search on a real paper (loads the model once)."""

import re

import numpy as np
import pytest

from reader.index.dense import FlagEmbedder, packaged_model_path
from reader.index.store import SearchIndex
from reader.store.db import transaction
from reader.store.tables import Chunk
from tests.conftest import shared_pdfs

pytestmark = pytest.mark.embedder


@pytest.fixture(scope="session")
def minilm():
    return FlagEmbedder(str(packaged_model_path()), name="all-MiniLM-L6-v2")


def test_minilm_vectors_are_normalized_384_dim_and_semantic(minilm):
    vectors = minilm.encode(
        [
            "The cat sat on the mat.",
            "A kitten was sitting on the rug.",
            "Quarterly revenue grew by eight percent.",
        ]
    )
    assert vectors.shape == (3, 384) and vectors.dtype == np.float32
    assert np.allclose(np.linalg.norm(vectors, axis=1), 1.0, atol=1e-5)
    assert vectors[0] @ vectors[1] > vectors[0] @ vectors[2] + 0.3


def test_minilm_matches_bare_flagmodel(minilm):
    texts = ["Short one.", "A somewhat longer sentence about citation graphs and transformers."]
    bare = minilm.model.encode(texts, max_length=minilm.max_length)
    assert np.allclose(minilm.encode(texts), bare, atol=1e-5)


def test_real_paper_search_returns_the_passage_a_sentence_was_copied_from(minilm, db, tmp_path):
    from reader.ingest.pipeline import ingest_file

    pdf = next((p for p in shared_pdfs() if p.name.startswith("acl2020_specter")), None)
    if pdf is None:
        pytest.skip("../shared/papers/acl2020_specter*.pdf is not here")
    index = SearchIndex(tmp_path / "index", db, minilm)
    result = ingest_file(pdf, db, index=index)
    assert result.status == "ingested" and not result.error, result.error
    with transaction(db) as session:
        rows = session.query(Chunk).filter_by(paper_id=result.paper_id).order_by(Chunk.ordinal)
        chunks = [(c.id, c.text, c.section) for c in rows]
    assert index.chunk_ids() == {c for c, _, _ in chunks} and len(chunks) > 20

    # the reference list and captions repeat titles and names found elsewhere
    body = [(c, t) for c, t, section in chunks if section not in ("References",) and "caption" not in section]
    checked = first = 0
    for chunk_id, text in body[2::5]:
        sentences = [s for s in re.split(r"(?<=[.!?])\s+", text) if 80 <= len(s) <= 300]
        if not sentences:
            continue
        sentence = sentences[len(sentences) // 2]
        # passages overlap, so the sentence may be in two of them: either is the right evidence
        sources = {c for c, t, _ in chunks if sentence in t}
        assert chunk_id in sources
        hits = index.search(sentence)
        # the audit takes the first 3 fused hits as evidence
        assert sources & {h.chunk_id for h in hits[:3]}, sentence
        checked += 1
        first += hits[0].chunk_id in sources
    assert checked >= 4
    # first place most of the time (measured 9 of 11); RRF can put a passage ranked
    # (2, 1) on a tie with the source ranked (1, 2), or above one ranked (1, -)
    assert first >= 0.75 * checked


def test_a_hub_model_in_the_local_cache_loads_without_the_network(tmp_path):
    """READER_EMBED_MODEL=owner/name is found in the Hugging Face cache (here: the packaged
    MiniLM's files laid out as the hub caches them) and loaded with every proxy pointing nowhere."""
    import os
    import shutil
    import subprocess
    import sys

    from tests.conftest import ROOT

    revision = "0" * 40
    repo = tmp_path / "hf" / "hub" / "models--some-owner--cached-minilm"
    shutil.copytree(packaged_model_path(), repo / "snapshots" / revision)
    (repo / "refs").mkdir()
    (repo / "refs" / "main").write_text(revision)
    env = {
        k: v
        for k, v in os.environ.items()
        if not k.startswith(("READER_", "HF_", "TRANSFORMERS_")) and "proxy" not in k.lower()
    }
    nowhere = "http://127.0.0.1:9"  # the discard port: nothing listens there
    env.update(
        READER_HOME=str(tmp_path / "home"),
        READER_EMBED_MODEL="some-owner/cached-minilm",
        HF_HOME=str(tmp_path / "hf"),
        HTTPS_PROXY=nowhere,
        HTTP_PROXY=nowhere,
    )
    script = (
        "from reader.config import load_settings\n"
        "from reader.index.dense import load_embedder\n"
        "embedder = load_embedder(load_settings())\n"
        "print(embedder.name, embedder.dim, embedder.max_length, embedder.encode(['a cat']).shape)\n"
    )
    run = subprocess.run(
        [sys.executable, "-c", script], env=env, cwd=ROOT, capture_output=True, text=True, timeout=300
    )
    assert run.returncode == 0, run.stderr[-2000:]
    # the cached folder's own settings are read: MiniLM's 256 tokens, not the default 512
    assert run.stdout.split() == ["some-owner/cached-minilm", "384", "256", "(1,", "384)"], run.stdout
