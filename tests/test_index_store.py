"""The on-disk index stays consistent with the chunks table and survives damage."""

import numpy as np
import pytest

from reader.index import store as store_module
from reader.index.dense import HashingEmbedder
from reader.index.store import SearchIndex
from reader.store.db import transaction
from reader.store.tables import Chunk, Paper

P1, P2, P3 = "1" * 64, "2" * 64, "3" * 64
TEXTS = {
    P1: ["Graph neural networks for citation recommendation.", "We evaluate on the ACL anthology."],
    P2: ["Drought stress alters wheat metabolites.", "Samples were analysed by mass spectrometry."],
    P3: ["长文本摘要的忠实度评估。", "人工评估与自动指标的相关性较低。"],
}


def add_paper_rows(db, paper_id, texts) -> list[tuple[int, str]]:
    with transaction(db) as session:
        session.add(Paper(id=paper_id, title="t", source_path="x.pdf", source_kind="pdf", pages=3))
        session.flush()
        chunks = [
            Chunk(paper_id=paper_id, ordinal=i, section="", page_start=1, page_end=1, text=t)
            for i, t in enumerate(texts)
        ]
        session.add_all(chunks)
        session.flush()
        return [(c.id, c.text) for c in chunks]


def delete_paper_rows(db, paper_id):
    with transaction(db) as session:
        session.delete(session.get(Paper, paper_id))


def db_chunk_ids(db) -> set[int]:
    with transaction(db) as session:
        return {c.id for c in session.query(Chunk)}


def new_index(tmp_path, db, name="hashing"):
    return SearchIndex(tmp_path / "index", db, HashingEmbedder(name=name))


@pytest.fixture
def ingested(db, tmp_path):
    """Three papers added the way ingest does it: rows committed, then add_paper."""
    index = new_index(tmp_path, db)
    for paper_id, texts in TEXTS.items():
        index.add_paper(paper_id, add_paper_rows(db, paper_id, texts))
    return index


def test_ingest_adds_and_the_index_covers_exactly_the_db(ingested, db, tmp_path, capsys):
    assert ingested.chunk_ids() == db_chunk_ids(db)
    assert sorted(ingested.paper_ids()) == sorted(TEXTS)
    # another process opening the same index finds it consistent: no rebuild, no message
    reopened = new_index(tmp_path, db)
    assert reopened.chunk_ids() == db_chunk_ids(db)
    assert "search index" not in capsys.readouterr().err
    assert reopened.search("wheat drought")[0].paper_id == P2


def test_rm_removes_a_paper_from_the_index(ingested, db, tmp_path):
    delete_paper_rows(db, P2)
    ingested.remove_paper(P2)
    assert ingested.chunk_ids() == db_chunk_ids(db)
    assert all(h.paper_id != P2 for h in ingested.search("wheat drought metabolites", top_k_per_path=10))
    assert new_index(tmp_path, db).chunk_ids() == db_chunk_ids(db)
    ingested.remove_paper(P2)  # removing twice is harmless


def test_adding_a_paper_again_replaces_its_rows(ingested, db):
    before = len(ingested)
    chunks = [(cid, text) for cid, text in zip(sorted(ingested.chunk_ids())[:2], TEXTS[P1])]
    ingested.add_paper(P1, chunks)
    assert len(ingested) == before


def test_reindex_rebuilds_from_the_database(ingested, db, tmp_path):
    add_paper_rows(db, "4" * 64, ["A paper that was never indexed, about dependency parsing."])
    assert ingested.rebuild() == len(db_chunk_ids(db))
    assert ingested.chunk_ids() == db_chunk_ids(db)
    assert ingested.search("dependency parsing")[0].paper_id == "4" * 64


def test_deleted_index_file_is_rebuilt_with_a_message(ingested, db, tmp_path, capsys):
    generation = tmp_path / "index" / (tmp_path / "index" / "CURRENT").read_text()
    (generation / "vectors.npy").unlink()
    capsys.readouterr()
    reopened = new_index(tmp_path, db)
    assert reopened.search("wheat drought")[0].paper_id == P2
    assert reopened.chunk_ids() == db_chunk_ids(db)
    assert "rebuilding from the database" in capsys.readouterr().err


def test_deleted_index_directory_is_rebuilt(ingested, db, tmp_path, capsys):
    import shutil

    shutil.rmtree(tmp_path / "index")
    capsys.readouterr()
    reopened = new_index(tmp_path, db)
    assert reopened.chunk_ids() == db_chunk_ids(db)
    assert "building it from the database" in capsys.readouterr().err


@pytest.mark.parametrize("damaged", ["meta.json", "chunk_ids.npy", "vocab.json"])
def test_corrupt_index_file_is_rebuilt_never_a_crash(ingested, db, tmp_path, capsys, damaged):
    generation = tmp_path / "index" / (tmp_path / "index" / "CURRENT").read_text()
    (generation / damaged).write_bytes(b"\x00garbage{")
    reopened = new_index(tmp_path, db)
    assert reopened.chunk_ids() == db_chunk_ids(db)
    assert "unreadable" in capsys.readouterr().err


def test_index_out_of_step_with_db_is_repaired_on_open(ingested, db, tmp_path, capsys):
    # rows changed behind the index's back (e.g. a crash between the DB commit and the index update)
    delete_paper_rows(db, P1)
    add_paper_rows(db, "5" * 64, ["Fresh chunk about speech recognition."])
    capsys.readouterr()
    reopened = new_index(tmp_path, db)
    assert reopened.chunk_ids() == db_chunk_ids(db)
    assert "out of step" in capsys.readouterr().err
    assert reopened.search("speech recognition")[0].paper_id == "5" * 64


def test_reused_chunk_id_for_another_paper_counts_as_stale(ingested, db, tmp_path):
    # SQLite may hand a deleted row's id to a new row: the (id, paper) pair tells them apart
    last_id = max(db_chunk_ids(db))
    with transaction(db) as session:
        session.get(Chunk, last_id).paper_id = P1
        session.get(Chunk, last_id).ordinal = 99
    reopened = new_index(tmp_path, db)
    assert reopened._ensure_loaded().pairs()[last_id] == P1


def test_another_embedding_model_triggers_a_rebuild(ingested, db, tmp_path, capsys):
    reopened = new_index(tmp_path, db, name="another-model")
    assert reopened.chunk_ids() == db_chunk_ids(db)
    assert "another-model" in capsys.readouterr().err


def test_a_kill_mid_write_leaves_the_previous_index_intact(ingested, db, tmp_path, monkeypatch):
    def die(directory, data, bm25):
        directory.mkdir(parents=True)
        (directory / "vectors.npy").write_bytes(b"partial")
        raise KeyboardInterrupt

    monkeypatch.setattr(store_module, "_write_generation", die)
    with pytest.raises(KeyboardInterrupt):
        ingested.add_paper("6" * 64, add_paper_rows(db, "6" * 64, ["Never fully written."]))
    monkeypatch.undo()
    reopened = SearchIndex(tmp_path / "index", db, HashingEmbedder())
    data = reopened.files.read()[1]
    assert set(data.pairs()) == db_chunk_ids(db) - {max(db_chunk_ids(db))}
    # and on open the missing paper is embedded from the database
    assert reopened.chunk_ids() == db_chunk_ids(db)
    assert not any(p.name.startswith(".tmp-") for p in (tmp_path / "index").iterdir())


def test_a_second_process_sees_writes_of_the_first(ingested, db, tmp_path):
    other = new_index(tmp_path, db)
    assert len(other) == len(ingested)
    ingested.add_paper("7" * 64, add_paper_rows(db, "7" * 64, ["Tokamak plasma confinement."]))
    assert other.search("tokamak plasma")[0].paper_id == "7" * 64
    # and a write from `other` builds on the newest state, losing nothing
    with transaction(db) as session:
        p3_chunks = {c.id for c in session.query(Chunk).filter_by(paper_id=P3)}
    other.remove_paper(P3)
    assert ingested.chunk_ids() == db_chunk_ids(db) - p3_chunks
    assert P3 not in ingested.paper_ids()


def test_only_two_generations_are_kept(ingested, tmp_path):
    generations = [p for p in (tmp_path / "index").iterdir() if p.name.startswith("gen-")]
    assert len(generations) == 2


def test_empty_library_has_no_hits_and_writes_nothing(db, tmp_path):
    index = new_index(tmp_path, db)
    assert index.search("anything") == []
    assert not (tmp_path / "index").exists()


def test_open_is_lazy_and_uses_settings_index_dir(app):
    index = SearchIndex.open(app.settings, app.services.db, quiet=True)
    assert index.files.directory == app.settings.index_dir
    assert index._data is None and index._embedder is None
    assert index.embedder_name == "all-MiniLM-L6-v2"


def test_stored_vectors_are_the_embedders(ingested, db):
    data = ingested._ensure_loaded()
    rows = data.rows_of(P3)
    expected = HashingEmbedder().encode([TEXTS[P3][0]])[0]
    assert np.allclose(data.vectors[rows[0]], expected)
