"""Faults during ingest (issue 15): control characters in parsed text, a database
error on one file, a full disk under the index or the database, and file names
with a newline. Each fault costs at most the one file it hit, is reported in one
line, and leaves the database and the last good search index usable."""

import errno
import json
import os
import re
import shutil
import sqlite3
from pathlib import Path

import numpy as np
import pymupdf
import pytest
from click.testing import CliRunner
from conftest import SAMPLE_PAPER, make_reader
from sqlalchemy import event, func, select
from sqlalchemy.exc import DataError, OperationalError

from reader.index import dense
from reader.index.dense import HashingEmbedder
from reader.index.store import SearchIndex
from reader.ingest import pdf as pdf_module
from reader.ingest import pipeline
from reader.ingest.pdf import parse_pdf
from reader.ingest.pipeline import ingest_data, ingest_file, ingest_paths
from reader.ingest.text import parse_text
from reader.store.tables import Caption, Chunk, Paper, Reference

# What may not be stored: C0 controls other than \t and \n, DEL, lone surrogates.
CONTROL = re.compile("[\x00-\x08\x0b-\x1f\x7f\ud800-\udfff]")
DISK_FULL = re.compile(r"the disk is full: \d+ MB needed under READER_HOME")


def one_line(text: str, limit: int = 400) -> bool:
    return bool(text) and "\n" not in text and len(text) <= limit


def paper_count(db) -> int:
    with db() as s:
        return s.scalar(select(func.count()).select_from(Paper))


def make_pdf_with_controls(path: Path) -> None:
    """A PDF whose text layer holds NUL and other C0 characters, as some real papers' do."""
    doc = pymupdf.open()
    page = doc.new_page()
    page.insert_text((72, 72), "Graphs\x00 with\x03 controls\x1f inside", fontsize=16)
    page.insert_text(
        (72, 120),
        "Every edge p1 \x00! p2 joins two papers, and\x0b the text goes on for a while.",
        fontsize=10,
    )
    page.insert_text((72, 140), "Table 1:\x01 Results\x00 of the control run.", fontsize=10)
    doc.save(path)


def all_stored_text(db) -> list[str]:
    with db() as s:
        texts = [t for (t,) in s.execute(select(Chunk.text))]
        texts += [t for row in s.execute(select(Caption.label, Caption.text)) for t in row]
        texts += [t for row in s.execute(select(Reference.marker, Reference.text)) for t in row]
        for paper in s.scalars(select(Paper)):
            texts += [paper.title, paper.abstract, *paper.authors, *(x["title"] for x in paper.sections)]
    return texts


# ------------------------------------------------------------ control characters


def test_pdf_text_leaves_the_parser_without_control_characters(tmp_path, monkeypatch):
    path = tmp_path / "controls.pdf"
    make_pdf_with_controls(path)
    assert "\x00" in pymupdf.open(path)[0].get_text()  # the fixture does hold them
    for fast in (True, False):  # the fast extraction and the "dict" fallback
        if not fast:
            monkeypatch.setattr(pdf_module, "_boxes_fast", lambda *args: None)
        parsed = parse_pdf(path)
        texts = [
            parsed.title,
            parsed.abstract,
            *parsed.authors,
            *(b.text for b in parsed.blocks),
            *(c.text for c in parsed.captions),
            *(r.text for r in parsed.references),
        ]
        assert not any(CONTROL.search(t) for t in texts), [t for t in texts if CONTROL.search(t)]
        assert parsed.title.startswith("Graphs with controls inside")
        assert any("p1 ! p2 joins" in b.text for b in parsed.blocks)


def test_text_files_lose_control_characters_but_keep_tabs_newlines_and_pages(tmp_path):
    path = tmp_path / "notes.txt"
    # NUL only after the first 4 KB (earlier it means a binary file), a form feed between pages
    path.write_text("Control Notes\n\n" + "words " * 800 + "\n\nA\x00 tab\there\x07.\n\x0cSecond\x1b page.\n")
    parsed = parse_text(path)
    texts = [parsed.title, *(b.text for b in parsed.blocks)]
    assert not any(CONTROL.search(t) for t in texts)
    assert parsed.pages == 2
    assert any("A tab\there." in t for t in texts) and any("Second page." in t for t in texts)


def test_clean_text_keeps_tabs_and_newlines_and_drops_the_rest():
    from reader.ingest.text import clean_text

    assert clean_text("a\x00b\tc\nd\x0be\x7ff\ud800g\udcffh\r") == "ab\tc\ndefgh"
    assert clean_text("plain text, ü and 中文") == "plain text, ü and 中文"


def test_controls_never_reach_the_database(tmp_path, db):
    path = tmp_path / "controls.pdf"
    make_pdf_with_controls(path)
    result = ingest_file(path, db)
    assert result.status == "ingested", result.error
    assert not any(CONTROL.search(t) for t in all_stored_text(db))


# ------------------------------------------------------------ a database error on one file


def _long_database_error():
    statement = "INSERT INTO chunks (paper_id, ordinal, text) VALUES " + ", ".join(["(?, ?, ?)"] * 400)
    return DataError(
        statement,
        [("x" * 64, i, "text " * 50) for i in range(50)],
        Exception("PostgreSQL text fields cannot contain NUL (0x00) bytes"),
    )


def fail_store_for(monkeypatch, name: str, error) -> None:
    """The database raises `error` while storing the file called `name`."""
    real = pipeline.store_paper

    def store(db, parsed, chunks):
        if Path(parsed.source_path).name == name:
            raise error
        return real(db, parsed, chunks)

    monkeypatch.setattr(pipeline, "store_paper", store)


def test_a_database_error_is_that_files_one_line_error_and_the_rest_go_on(tmp_path, db, monkeypatch):
    shutil.copy(SAMPLE_PAPER, tmp_path / "a.pdf")
    (tmp_path / "b.md").write_text("# Notes\n\nA few words on reading order.\n")
    fail_store_for(monkeypatch, "a.pdf", _long_database_error())
    results = {Path(r.file).name: r for r in ingest_paths([tmp_path], db)}
    bad, good = results["a.pdf"], results["b.md"]
    assert bad.status == "error" and one_line(bad.error, 300), bad.error
    assert "DataError" in bad.error and "NUL" in bad.error and "INSERT" not in bad.error
    assert good.status == "ingested"
    assert paper_count(db) == 1


def test_review_reports_a_database_error_in_one_line(tmp_path, monkeypatch, reader_env):
    shutil.copy(SAMPLE_PAPER, tmp_path / "a.pdf")
    fail_store_for(monkeypatch, "a.pdf", _long_database_error())
    report = make_reader(cache=None).review([tmp_path / "a.pdf"])
    [row] = report.papers
    assert row.status == "error" and one_line(row.error, 300), row.error
    assert "DataError" in row.error


def test_an_unexpected_error_on_one_file_does_not_stop_the_others(tmp_path, db, monkeypatch):
    shutil.copy(SAMPLE_PAPER, tmp_path / "a.pdf")
    (tmp_path / "b.md").write_text("# Notes\n\nA few words on reading order.\n")
    fail_store_for(
        monkeypatch, "a.pdf", UnicodeEncodeError("utf-8", "x\udcff", 1, 2, "surrogates not allowed")
    )
    results = {Path(r.file).name: r for r in ingest_paths([tmp_path], db)}
    assert results["a.pdf"].status == "error" and one_line(results["a.pdf"].error)
    assert "UnicodeEncodeError" in results["a.pdf"].error
    assert results["b.md"].status == "ingested"


# ------------------------------------------------------------ a full disk


def full_disk_on(monkeypatch, file_name: str = "vectors.npy") -> None:
    """np.save in the index write fails with ENOSPC at `file_name` (the files before it are written)."""
    real = np.save

    def save(target, array, *args, **kwargs):
        if Path(target).name == file_name:
            raise OSError(errno.ENOSPC, "No space left on device", str(target))
        return real(target, array, *args, **kwargs)

    monkeypatch.setattr(np, "save", save)


def sqlite_full_on_commit(db, times: int = 1) -> list[int]:
    """The next `times` commits fail as SQLite does on a full disk. Returns the failure counter."""
    left = [times]

    @event.listens_for(db.kw["bind"], "commit")
    def commit(conn):
        if left[0] > 0:
            left[0] -= 1
            raise OperationalError("COMMIT", {}, sqlite3.OperationalError("database or disk is full"))

    return left


def tmp_dirs(index_dir: Path) -> list[str]:
    return sorted(p.name for p in index_dir.iterdir() if p.name.startswith(".tmp"))


def test_a_failed_index_write_leaves_no_temporary_folder_and_keeps_the_last_index(tmp_path, db, monkeypatch):
    index_dir = tmp_path / "home" / "index"
    index = SearchIndex(index_dir, db, HashingEmbedder())
    first = ingest_file(SAMPLE_PAPER, db, index=index)
    assert first.status == "ingested" and not first.error
    good = (index_dir / "CURRENT").read_text()

    second_file = tmp_path / "notes.md"
    second_file.write_text("# Wheat under heat\n\nMetabolomics of wheat leaves under heat stress.\n")
    full_disk_on(monkeypatch)
    result = ingest_file(second_file, db, index=index)
    assert result.status == "ingested" and DISK_FULL.search(result.error)
    assert tmp_dirs(index_dir) == []
    for _ in range(2):  # each retry used to leave another .tmp-gen-* folder
        with pytest.raises(Exception) as info:
            SearchIndex(index_dir, db, HashingEmbedder()).rebuild()
        assert type(info.value).__name__ == "DiskFull"
        assert DISK_FULL.search(str(info.value)) and one_line(str(info.value))
        assert tmp_dirs(index_dir) == []
    assert (index_dir / "CURRENT").read_text() == good

    # the last good generation still loads; the missing paper is searched from memory
    again = SearchIndex(index_dir, db, HashingEmbedder())
    hits = again.search("wheat leaves heat stress")
    assert hits and tmp_dirs(index_dir) == []
    assert again.search("reading order two-column")
    monkeypatch.undo()
    assert SearchIndex(index_dir, db, HashingEmbedder()).search("wheat leaves heat stress")


def test_ingest_reports_a_full_index_disk_in_one_line(tmp_path, db, monkeypatch):
    index = SearchIndex(tmp_path / "home" / "index", db, HashingEmbedder())
    full_disk_on(monkeypatch)
    result = ingest_file(SAMPLE_PAPER, db, index=index)
    assert result.status == "ingested"  # the paper is stored; the index catches up later
    assert DISK_FULL.search(result.error) and one_line(result.error), result.error
    assert tmp_dirs(tmp_path / "home" / "index") == []


def test_a_full_database_disk_costs_one_file_and_keeps_the_database(tmp_path, db, monkeypatch):
    shutil.copy(SAMPLE_PAPER, tmp_path / "a.pdf")
    (tmp_path / "b.md").write_text("# Notes\n\nA few words on reading order.\n")
    left = sqlite_full_on_commit(db)
    results = {Path(r.file).name: r for r in ingest_paths([tmp_path], db)}
    assert left == [0]
    assert results["a.pdf"].status == "error"
    assert DISK_FULL.search(results["a.pdf"].error) and one_line(results["a.pdf"].error)
    assert results["b.md"].status == "ingested"
    assert paper_count(db) == 1
    assert ingest_file(tmp_path / "a.pdf", db).status == "ingested"  # with space again
    assert paper_count(db) == 2


@pytest.fixture
def cli_home(reader_env, monkeypatch):
    monkeypatch.setattr(dense, "load_embedder", lambda settings: HashingEmbedder())
    return reader_env


def run(*args):
    from reader.cli import cli

    return CliRunner().invoke(cli, list(args), catch_exceptions=False)


def test_cli_on_a_full_disk_says_so_in_one_line_and_goes_on(tmp_path, cli_home, monkeypatch):
    from reader.store import db as db_module

    folder = tmp_path / "papers"
    folder.mkdir()
    shutil.copy(SAMPLE_PAPER, folder / "a.pdf")
    (folder / "b.md").write_text("# Wheat under heat\n\nMetabolomics of wheat leaves under heat stress.\n")
    (folder / "c.md").write_text("# Citation graphs\n\nCitation graphs help recommend papers.\n")
    assert run("ingest", "--json", str(folder / "c.md")).exit_code == 0

    # the index's disk is full for every write; the database's for the first file's commit
    full_disk_on(monkeypatch)
    real_open = db_module.open_database
    opened = []

    def open_database(url):
        factory = real_open(url)
        if not opened:
            sqlite_full_on_commit(factory)
        opened.append(factory)
        return factory

    monkeypatch.setattr(db_module, "open_database", open_database)
    result = run("ingest", str(folder))
    assert result.exit_code == 1
    assert "Traceback" not in result.output
    errors = result.stderr.strip().splitlines()
    assert len(errors) == 1 and errors[0].startswith("error: ") and DISK_FULL.search(errors[0]), errors
    lines = result.stdout.strip().splitlines()
    assert lines[-1] == "1 ingested, 1 unchanged, 1 failed", lines
    assert any(DISK_FULL.search(line) and "warning" in line for line in lines), lines
    index_dir = cli_home / "index"
    assert tmp_dirs(index_dir) == []

    # search still answers, from the last good index plus what it could not save
    found = run("search", "wheat leaves heat", "--json")
    assert found.exit_code == 0, found.output
    assert json.loads(found.stdout)["hits"]
    assert all(one_line(line) for line in found.stderr.strip().splitlines())
    assert tmp_dirs(index_dir) == []

    rebuilt = run("reindex")
    assert rebuilt.exit_code == 1
    [message] = rebuilt.stderr.strip().splitlines()
    assert DISK_FULL.search(message) and "free" in message
    assert tmp_dirs(index_dir) == []


# ------------------------------------------------------------ file names


def test_source_path_is_stored_absolute(tmp_path, db, monkeypatch):
    (tmp_path / "sub").mkdir()
    shutil.copy(SAMPLE_PAPER, tmp_path / "sub" / "a.pdf")
    monkeypatch.chdir(tmp_path / "sub")
    result = ingest_file(Path("..") / "sub" / "a.pdf", db)
    assert result.status == "ingested"
    with db() as s:
        assert s.get(Paper, result.paper_id).source_path == str((tmp_path / "sub" / "a.pdf").resolve())


def test_a_file_name_that_is_not_utf8_is_stored(tmp_path, db):
    name = os.fsdecode(b"bad\xff name.md")
    path = tmp_path / name
    path.write_text("# Notes\n\nA few words on reading order.\n")
    result = ingest_file(path, db)
    assert result.status == "ingested", result.error
    with db() as s:
        assert s.get(Paper, result.paper_id).source_path.endswith("bad\ufffd name.md")


def test_file_names_with_a_newline_keep_one_line_per_file(tmp_path, cli_home):
    folder = tmp_path / "papers"
    folder.mkdir()
    shutil.copy(SAMPLE_PAPER, folder / "two\nlines.pdf")
    (folder / "x\ny.md").write_text("# Notes\n\nA few words on reading order.\n")
    (folder / "broken\nfile.pdf").write_bytes(b"not a pdf")
    (folder / os.fsdecode(b"odd\xff.md")).write_text("# Odd\n\nA name that is not UTF-8.\n")

    plain = run("ingest", str(folder))
    assert plain.exit_code == 1
    out = plain.stdout.strip().splitlines()
    assert len(out) == 4 and out[-1] == "3 ingested, 0 unchanged, 1 failed", out
    assert any(line.startswith("ingested  two\\nlines.pdf ") for line in out), out
    assert all(line.split()[0] in ("ingested", "unchanged") for line in out[:-1])
    [error] = plain.stderr.strip().splitlines()
    assert error.startswith("error: ") and "broken\\nfile.pdf" in error

    as_json = run("ingest", "--json", str(folder))
    rows = [json.loads(line) for line in as_json.stdout.splitlines()]
    assert len(rows) == 4
    assert {Path(r["file"]).name for r in rows} >= {"two\nlines.pdf", "x\ny.md", "broken\nfile.pdf"}

    papers = json.loads(run("papers", "--json").stdout)
    assert all(os.path.isabs(p["source_path"]) for p in papers)
    assert str((folder / "two\nlines.pdf").resolve()) in {p["source_path"] for p in papers}


def test_any_command_on_a_full_database_disk_says_so_in_one_line(cli_home, monkeypatch):
    from reader.store import db as db_module

    def full(url):
        raise OperationalError(
            "PRAGMA journal_mode=WAL", {}, sqlite3.OperationalError("database or disk is full")
        )

    monkeypatch.setattr(db_module, "open_database", full)
    result = run("papers")
    assert result.exit_code == 1
    [message] = result.stderr.strip().splitlines()
    assert "the disk is full under READER_HOME" in message and "free some space" in message
    assert "PRAGMA" not in message


def test_review_reports_a_database_error_while_reading_in_one_line(tmp_path, db):
    from reader.review import WorkerStages, run_review

    path = tmp_path / "a.pdf"
    shutil.copy(SAMPLE_PAPER, path)

    def read_paper(paper_id, on_progress=None, db=None):
        raise _long_database_error()

    stages = WorkerStages(db, lambda data, label: ingest_data(data, label, db), read_paper)
    report = run_review([path], stages)
    [row] = report.papers
    assert row.status == "error" and one_line(row.error, 300), row.error
    assert row.error.startswith("DataError: PostgreSQL text fields cannot contain NUL")


def test_a_short_write_on_a_full_disk_counts_as_a_full_disk(tmp_path, db, monkeypatch):
    """numpy reports a full disk as 'N requested and M written', without an errno."""
    from reader.index import store

    real = np.save

    def save(target, array, *args, **kwargs):
        if Path(target).name == "vectors.npy":
            raise OSError("100096 requested and 56288 written")
        return real(target, array, *args, **kwargs)

    monkeypatch.setattr(np, "save", save)
    monkeypatch.setattr(store.shutil, "disk_usage", lambda path: shutil._ntuple_diskusage(10**9, 10**9, 4096))
    result = ingest_file(
        SAMPLE_PAPER, db, index=SearchIndex(tmp_path / "home" / "index", db, HashingEmbedder())
    )
    assert result.status == "ingested" and DISK_FULL.search(result.error), result.error
    assert tmp_dirs(tmp_path / "home" / "index") == []


def test_a_file_name_that_is_not_utf8_is_reviewed(tmp_path, cli_home, monkeypatch):
    """`reader review` stores the job's path as ingest stores the paper's: U+FFFD for the bad byte."""
    monkeypatch.setenv("READER_LLM_BASE_URL", "scripted:")
    folder = tmp_path / "papers"
    folder.mkdir()
    (folder / os.fsdecode(b"odd\xff.md")).write_text(
        "# Odd names\n\n## Method\n\nWe read papers whose file names are not UTF-8. "
        "The reader keeps them all.\n",
        encoding="utf-8",
    )
    result = run("review", str(folder), "--json", "--quiet")
    assert result.exit_code == 0, result.output
    report = json.loads(result.stdout)
    assert [row["status"] for row in report["papers"]] == ["reviewed"], report
