"""Zotero in: a small Zotero data directory (tests/zotero_fixture.py) with two shared PDFs,
read from a copy, ingested and reviewed with the dry-run LLM, exported with links back."""

from __future__ import annotations

import json
import sqlite3

import pytest
import yaml
from click.testing import CliRunner
from conftest import SAMPLE_PAPER, SHARED_PAPERS
from sqlalchemy import select
from zotero_fixture import build_library

from reader.errors import ReaderError
from reader.ingest.zotero import read_library
from reader.store.tables import Paper

ONE, TWO, THIRD = (
    SHARED_PAPERS / "acl2007_P07-1088.pdf",
    SHARED_PAPERS / "acl2012_P12-1002_dyer12.pdf",
    SHARED_PAPERS / "naacl2013_roark13.pdf",
)


def _pdfs(tmp_path):
    """Two different PDFs: shared papers when present, else the sample paper and a copy of it
    with other metadata (other bytes)."""
    if ONE.is_file() and TWO.is_file():
        return ONE, TWO
    import pymupdf

    copy = tmp_path / "sample_copy.pdf"
    with pymupdf.open(SAMPLE_PAPER) as doc:
        doc.set_metadata({"title": doc.metadata.get("title") or "", "subject": "copy"})
        doc.save(copy)
    return SAMPLE_PAPER, copy


@pytest.fixture
def zotero_dir(tmp_path):
    data_dir = tmp_path / "Zotero"
    one, two = _pdfs(tmp_path)
    build_library(data_dir, one, two)
    return data_dir


@pytest.fixture
def dry_app(tmp_path, migrated_copy, monkeypatch):
    from reader.facade import Reader
    from reader.index.dense import HashingEmbedder
    from reader.llm.dryrun import DryRunLLM

    if not (ONE.is_file() and TWO.is_file()):  # the sample paper and its copy stand for two papers
        monkeypatch.setenv("READER_REVIEW_NEAR_DUPLICATES", "on")

    return Reader(
        home=tmp_path / "home",
        database_url=migrated_copy(tmp_path / "lib.db"),
        llm=DryRunLLM(),
        embedder=HashingEmbedder(),
        use_cache=False,
    )


def test_library_items_carry_key_metadata_collections_and_pdf(zotero_dir):
    library = read_library(zotero_dir)
    assert library.schema_version == 124
    items = {item.key: item for item in library.items}
    assert set(items) == {"ABCD2345", "IJKL2345"}  # no note, no trashed item, no item without a PDF
    one, two = items["ABCD2345"], items["IJKL2345"]
    assert one.title == "Redundancy in Sparse Extraction"
    assert one.authors == ["Doug Downey", "Stefan Schoenmackers", "Oren Etzioni"]
    assert (one.year, one.doi, one.collections) == (2007, "10.1234/zot.one", ["Thesis"])
    assert one.pdf == zotero_dir / "storage" / "EFGH6789" / "Downey - 2007 - Sparse.pdf"
    assert one.attachment_key == "EFGH6789" and one.venue == "Proceedings of the ACL"
    assert two.authors == ["Chris Dyer"]  # the editor is not an author
    assert (two.year, two.citekey, two.collections) == (2012, "dyer2012Fast", ["Thesis/Chapter 2"])
    lines = library.lines()
    assert len(lines) == 3, lines  # one line per unusable item
    assert any("QRST2345" in line and "no PDF attachment" in line for line in lines)
    assert any("UVWX2345" in line and "missing" in line and "moved.pdf" in line for line in lines)
    assert any("CDEF2345" in line and "no PDF attachment" in line for line in lines)  # a web snapshot


def test_collection_includes_subcollections_and_unknown_names_are_listed(zotero_dir):
    assert [i.key for i in read_library(zotero_dir, "Chapter 2").items] == ["IJKL2345"]
    thesis = read_library(zotero_dir, "thesis")
    assert [i.key for i in thesis.items] == ["ABCD2345", "IJKL2345"]
    assert len(thesis.lines()) == 1 and "QRST2345" in thesis.lines()[0]  # "Other" left out
    assert [i.key for i in read_library(zotero_dir, "Thesis/Chapter 2").items] == ["IJKL2345"]
    with pytest.raises(ReaderError, match=r"no Zotero collection named 'Nope'.*Thesis/Chapter 2"):
        read_library(zotero_dir, "Nope")


def test_reads_a_copy_while_zotero_holds_the_database_locked(zotero_dir):
    original = zotero_dir / "zotero.sqlite"
    before = original.read_bytes()
    lock = sqlite3.connect(original, isolation_level=None)
    lock.execute("PRAGMA locking_mode = EXCLUSIVE")
    lock.execute("BEGIN EXCLUSIVE")  # as Zotero does while it runs
    try:
        with pytest.raises(sqlite3.OperationalError):
            sqlite3.connect(original, timeout=0).execute("SELECT 1 FROM items").fetchall()
        assert len(read_library(zotero_dir).items) == 2
    finally:
        lock.execute("ROLLBACK")
        lock.close()
    assert original.read_bytes() == before
    assert sorted(p.name for p in zotero_dir.iterdir()) == [
        "elsewhere",
        "storage",
        "zotero.sqlite",
    ] or sorted(p.name for p in zotero_dir.iterdir()) == ["storage", "zotero.sqlite"]


def test_unknown_schema_version_is_one_line_and_the_rest_goes_on(tmp_path):
    one, two = _pdfs(tmp_path)
    build_library(tmp_path / "Z", one, two, schema_version=400)
    library = read_library(tmp_path / "Z")
    assert len(library.items) == 2
    assert sum("unknown Zotero schema version 400" in line for line in library.lines()) == 1


def test_not_a_zotero_folder_names_the_path(tmp_path):
    with pytest.raises(ReaderError, match=r"no such Zotero data directory"):
        read_library(tmp_path / "nowhere")
    (tmp_path / "empty").mkdir()
    with pytest.raises(ReaderError, match=r"empty/zotero.sqlite: not found"):
        read_library(tmp_path / "empty")
    (tmp_path / "bad").mkdir()
    sqlite3.connect(tmp_path / "bad" / "zotero.sqlite").execute("CREATE TABLE t (x)").connection.commit()
    with pytest.raises(
        ReaderError, match=r"not a Zotero database this reader knows \(no table collectionItems"
    ):
        read_library(tmp_path / "bad")


def test_ingest_keeps_zotero_metadata_and_reruns_pick_up_only_changes(dry_app, zotero_dir, tmp_path):
    notes: list[str] = []
    results = dry_app.library.ingest_zotero(zotero_dir, on_note=notes.append)
    assert sorted(r.status for r in results) == ["ingested", "ingested", "skipped", "skipped", "skipped"]
    with dry_app.services.db() as session:
        papers = {p.zotero_key: p for p in session.scalars(select(Paper))}
        one = papers["ABCD2345"]
        assert one.title == "Redundancy in Sparse Extraction" and one.year == 2007
        assert one.authors[0] == "Doug Downey" and one.doi == "10.1234/zot.one"
        assert one.zotero_meta["collections"] == ["Thesis"] and one.zotero_meta["type"] == "journalArticle"
        assert papers["IJKL2345"].citekey == "dyer2012Fast"
        first_id = one.id
    again = dry_app.library.ingest_zotero(zotero_dir)
    assert sorted(r.status for r in again if r.status != "skipped") == ["unchanged", "unchanged"]
    if not THIRD.is_file():
        return
    (zotero_dir / "storage" / "EFGH6789" / "Downey - 2007 - Sparse.pdf").write_bytes(THIRD.read_bytes())
    changed = dry_app.library.ingest_zotero(zotero_dir, on_note=notes.append)
    assert sorted(r.status for r in changed if r.status != "skipped") == ["ingested", "unchanged"]
    assert len(notes) == 1 and first_id[:8] in notes[0] and "PDF changed" in notes[0]
    with dry_app.services.db() as session:
        holders = session.scalars(select(Paper.id).where(Paper.zotero_key == "ABCD2345")).all()
        assert len(holders) == 1 and holders[0] != first_id


def test_review_a_collection_then_export_notes_and_bibtex(dry_app, zotero_dir, tmp_path):
    library = dry_app.library.zotero_library(zotero_dir, "Thesis")
    report = dry_app.review([], jobs=1, zotero=library)
    assert len(report.by_status("reviewed")) == 2, report.to_json()
    assert len(report.notes) == 1 and "QRST2345" in report.notes[0]
    rerun = dry_app.review([], jobs=1, zotero=dry_app.library.zotero_library(zotero_dir, "Thesis"))
    assert len(rerun.by_status("skipped")) == 2 and not rerun.by_status("reviewed")

    exported = dry_app.export(tmp_path / "notes")
    fronts = {}
    for path in exported.notes:
        text = path.read_text(encoding="utf-8")
        front = yaml.safe_load(text.split("---\n", 2)[1])
        fronts[front["zotero"]] = front
        assert "[open the item](zotero://select/library/items/" in text
    one = fronts["zotero://select/library/items/ABCD2345"]
    assert one["doi"] == "10.1234/zot.one" and one["citekey"] == "downey2007Redundancy"
    assert one["collections"] == ["Thesis"]
    assert fronts["zotero://select/library/items/IJKL2345"]["citekey"] == "dyer2012Fast"

    bib = dry_app.library.bibtex(tmp_path / "papers.bib")
    text = (tmp_path / "papers.bib").read_text(encoding="utf-8")
    assert [key for _, key in bib.entries] == ["downey2007Redundancy", "dyer2012Fast"]
    assert "@article{downey2007Redundancy," in text and "@inproceedings{dyer2012Fast," in text
    assert "  author = {Doug Downey and Stefan Schoenmackers and Oren Etzioni}," in text
    assert "  doi = {10.1234/zot.one}" in text and "  journal = {Proceedings of the ACL}" in text


def test_cli_ingest_and_export_bibtex(zotero_dir, tmp_path, reader_env, monkeypatch):
    import reader.index.dense as dense
    from reader.cli import cli as main

    monkeypatch.setattr(dense, "load_embedder", lambda settings: dense.HashingEmbedder())
    runner = CliRunner()
    out = runner.invoke(main, ["ingest", "--zotero", str(zotero_dir), "--collection", "Thesis", "--json"])
    assert out.exit_code == 0, out.output
    rows = [json.loads(line) for line in out.stdout.splitlines()]
    assert sorted(r["status"] for r in rows) == ["ingested", "ingested", "skipped"]
    bad = runner.invoke(main, ["ingest", "--collection", "Thesis"])
    assert bad.exit_code != 0 and "use it with --zotero" in bad.output
    missing = runner.invoke(main, ["ingest", "--zotero", str(tmp_path / "nowhere")])
    assert missing.exit_code != 0 and "no such Zotero data directory" in missing.output
    bib = runner.invoke(main, ["export", "--all", "--bibtex", str(tmp_path / "x.bib")])
    assert bib.exit_code == 0 and "0 BibTeX entries" in bib.output  # nothing reviewed yet
    nowhere = runner.invoke(main, ["export", "--all"])
    assert nowhere.exit_code != 0 and "--bibtex FILE" in nowhere.output


def test_made_citekeys_follow_better_bibtex_style_and_stay_unique():
    from reader.export.bibtex import make_citekey

    assert (
        make_citekey(["Ashish Vaswani", "Noam Shazeer"], 2017, "Attention Is All You Need")
        == "vaswani2017Attention"
    )
    assert (
        make_citekey(["Müller, Jürgen"], 2020, "On the Ünderstanding of Things") == "muller2020Understanding"
    )
    assert make_citekey([], None, "The 3 Laws") == "Laws"
    assert make_citekey([], None, "") == "paper"


def test_a_plain_file_gets_its_doi_from_the_first_page():
    from reader.ingest.pages import find_doi

    # a DOI broken after its dot at a line end comes out of the line joining with a space
    assert (
        find_doi(["PLoS ONE 13(6): e0197919. https://doi.org/10.1371/journal. pone.0197919\nEditor"])
        == "10.1371/journal.pone.0197919"
    )
    assert find_doi(["doi: 10.1016/j.neuron.2023.02.015. The authors"]) == "10.1016/j.neuron.2023.02.015"
    plos = SHARED_PAPERS / "plosone2018_wheat_metabolomics.pdf"
    if plos.is_file():
        from reader.ingest.pdf import parse_pdf

        assert parse_pdf(plos, plos.read_bytes()).doi == "10.1371/journal.pone.0197919"


def test_cli_review_a_zotero_collection_with_export(zotero_dir, tmp_path, reader_env, monkeypatch):
    import reader.index.dense as dense
    from reader.cli import cli

    monkeypatch.setattr(dense, "load_embedder", lambda settings: dense.HashingEmbedder())
    monkeypatch.setenv("READER_LLM_BASE_URL", "scripted:")
    out = CliRunner().invoke(
        cli,
        [
            "review",
            "--zotero",
            str(zotero_dir),
            "--collection",
            "Chapter 2",
            "--export",
            str(tmp_path / "vault"),
            "--quiet",
            "--json",
        ],
    )
    assert out.exit_code == 0, out.output
    data = json.loads(out.stdout)
    assert data["reviewed"] == 1 and data["notes"] == [] and data["export"]["notes"]
    note = (tmp_path / "vault").glob("*.md")
    texts = [p.read_text(encoding="utf-8") for p in note if p.name != "index.md"]
    assert len(texts) == 1 and "zotero: zotero://select/library/items/IJKL2345" in texts[0]
    assert "citekey: dyer2012Fast" in texts[0]
    both = CliRunner().invoke(cli, ["review", "x.pdf", "--zotero", str(zotero_dir)])
    assert both.exit_code != 0 and "without PATHS" in both.output


def test_papers_reviewed_from_a_folder_get_the_zotero_link_when_reviewed_from_zotero(dry_app, zotero_dir):
    library = dry_app.library.zotero_library(zotero_dir, "Chapter 2")
    first = dry_app.review([library.items[0].pdf], jobs=1)
    assert len(first.by_status("reviewed")) == 1
    again = dry_app.review([], jobs=1, zotero=library)
    assert len(again.by_status("skipped")) == 1
    with dry_app.services.db() as session:
        assert session.scalars(select(Paper.zotero_key)).all() == ["IJKL2345"]


def test_changes_still_in_the_write_ahead_log_are_read(tmp_path):
    """Zotero running in WAL mode: the newest item is only in zotero.sqlite-wal until a checkpoint."""
    one, two = _pdfs(tmp_path)
    data_dir = tmp_path / "Z"
    build_library(data_dir, one, two)
    live = sqlite3.connect(data_dir / "zotero.sqlite", isolation_level=None)
    live.execute("PRAGMA journal_mode = WAL")
    live.execute("PRAGMA wal_autocheckpoint = 0")
    live.execute(
        "UPDATE itemDataValues SET value = 'Renamed While Open' "
        "WHERE value = 'Redundancy in Sparse Extraction'"
    )
    try:
        assert (data_dir / "zotero.sqlite-wal").stat().st_size > 0
        titles = {item.key: item.title for item in read_library(data_dir).items}
        assert titles["ABCD2345"] == "Renamed While Open"
    finally:
        live.close()
