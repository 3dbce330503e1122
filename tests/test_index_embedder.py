"""The packaged MiniLM through FlagEmbedding, and search on a real paper (loads the model once)."""

import re

import numpy as np
import pytest

from reader.index.dense import FlagEmbedder, packaged_model_path
from reader.index.store import SearchIndex
from reader.store.db import transaction
from reader.store.tables import Chunk, Paper
from tests.conftest import shared_pdfs

pytestmark = pytest.mark.embedder


@pytest.fixture(scope="session")
def minilm():
    return FlagEmbedder(str(packaged_model_path()), name="all-MiniLM-L6-v2")


def test_minilm_vectors_are_normalized_384_dim_and_semantic(minilm):
    vectors = minilm.encode([
        "The cat sat on the mat.",
        "A kitten was sitting on the rug.",
        "Quarterly revenue grew by eight percent.",
    ])
    assert vectors.shape == (3, 384) and vectors.dtype == np.float32
    assert np.allclose(np.linalg.norm(vectors, axis=1), 1.0, atol=1e-5)
    assert vectors[0] @ vectors[1] > vectors[0] @ vectors[2] + 0.3


def test_minilm_matches_bare_flagmodel(minilm):
    texts = ["Short one.", "A somewhat longer sentence about citation graphs and transformers."]
    bare = minilm.model.encode(texts, max_length=minilm.max_length)
    assert np.allclose(minilm.encode(texts), bare, atol=1e-5)


def _pdf_chunks(path) -> list[tuple[int, int, str]]:
    """(page_start, page_end, text) passages of about 1,000 characters, straight from pymupdf."""
    import pymupdf

    chunks, buffer, start = [], "", 1
    with pymupdf.open(path) as doc:
        for page_no, page in enumerate(doc, start=1):
            for block in page.get_text("blocks"):
                text = " ".join(block[4].split())
                if not text:
                    continue
                if not buffer:
                    start = page_no
                buffer = f"{buffer} {text}".strip()
                if len(buffer) >= 1000:
                    chunks.append((start, page_no, buffer))
                    buffer = ""
        if buffer:
            chunks.append((start, page_no, buffer))
    return chunks


def test_real_paper_search_returns_the_passage_a_sentence_was_copied_from(minilm, db, tmp_path):
    pdf = next(p for p in shared_pdfs() if p.name.startswith("acl2020_specter"))
    paper_id = "f" * 64
    with transaction(db) as session:
        session.add(Paper(id=paper_id, title=pdf.stem, source_path=str(pdf), source_kind="pdf", pages=13))
        session.flush()
        rows = [Chunk(paper_id=paper_id, ordinal=i, section="", page_start=a, page_end=b, text=t)
                for i, (a, b, t) in enumerate(_pdf_chunks(pdf))]
        session.add_all(rows)
        session.flush()
        chunks = [(c.id, c.text) for c in rows]
    index = SearchIndex(tmp_path / "index", db, minilm)
    index.add_paper(paper_id, chunks)
    assert len(chunks) > 30

    body = chunks[: len(chunks) * 2 // 3]  # the reference list repeats titles and names
    checked = first = 0
    for chunk_id, text in body[3::6]:
        sentences = [s for s in re.split(r"(?<=[.!?])\s+", text) if 80 <= len(s) <= 300]
        if not sentences:
            continue
        sentence = sentences[len(sentences) // 2]
        hits = index.search(sentence)
        # the audit takes the first 3 fused hits as evidence
        top3 = [h.chunk_id for h in hits[:3]]
        assert chunk_id in top3, sentence
        source = hits[top3.index(chunk_id)]
        assert sentence in source.text and source.bm25_rank == 1
        checked += 1
        first += hits[0].chunk_id == chunk_id
    assert checked >= 4
    # RRF can put a passage ranked (2, 1) on a tie with the source ranked (1, 2) or above (1, -)
    assert first >= checked - 1
