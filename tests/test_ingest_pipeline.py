"""Storing papers: identity by content, one transaction per paper, bad inputs,
removal, lookup, and the index hooks."""

import json
import os
import re
import shutil

import pymupdf
import pytest
from click.testing import CliRunner
from conftest import ROOT, shared_pdfs
from sqlalchemy import func, select

from reader.errors import IngestError, PaperNotFound
from reader.ingest.pdf import parse_pdf
from reader.ingest.pipeline import find_sources, ingest_file, ingest_paths, remove_paper
from reader.store.db import transaction
from reader.store.queries import list_papers, resolve_paper
from reader.store.tables import Analysis, Caption, Chunk, Paper, Question, Reference, ReviewJob

SAMPLE = ROOT / "papers" / "sample_paper.pdf"
SHORT_PAPER = next((p for p in shared_pdfs() if p.name == "naacl2018_litgraph_N18-3011.pdf"), SAMPLE)


class RecordingIndex:
    def __init__(self, fail=False):
        self.added, self.removed, self.fail = [], [], fail

    def add_paper(self, paper_id, chunks):
        if self.fail:
            raise RuntimeError("disk full")
        self.added.append((paper_id, chunks))

    def remove_paper(self, paper_id):
        self.removed.append(paper_id)


def counts(db):
    with db() as s:
        return tuple(
            s.scalar(select(func.count()).select_from(t)) for t in (Paper, Chunk, Caption, Reference)
        )


# ----------------------------------------------------------- bad input files


def make_encrypted(path):
    doc = pymupdf.open()
    doc.new_page().insert_text((72, 72), "secret results")
    doc.save(path, encryption=pymupdf.PDF_ENCRYPT_AES_256, user_pw="user", owner_pw="owner")


def make_image_only(path):
    doc = pymupdf.open()
    page = doc.new_page()
    pix = pymupdf.Pixmap(pymupdf.csRGB, pymupdf.IRect(0, 0, 64, 64), False)
    pix.clear_with(200)
    page.insert_image(pymupdf.Rect(72, 72, 300, 300), pixmap=pix)
    doc.save(path)


def make_zero_pages(path):
    """A well-formed PDF whose page tree is empty (pymupdf refuses to save one)."""
    objects = [b"<< /Type /Catalog /Pages 2 0 R >>", b"<< /Type /Pages /Kids [] /Count 0 >>"]
    out = bytearray(b"%PDF-1.4\n")
    offsets = []
    for i, body in enumerate(objects, start=1):
        offsets.append(len(out))
        out += b"%d 0 obj\n" % i + body + b"\nendobj\n"
    xref = len(out)
    out += b"xref\n0 %d\n0000000000 65535 f \n" % (len(objects) + 1)
    out += b"".join(b"%010d 00000 n \n" % o for o in offsets)
    out += b"trailer\n<< /Size %d /Root 1 0 R >>\nstartxref\n%d\n%%%%EOF\n" % (len(objects) + 1, xref)
    path.write_bytes(bytes(out))


BAD_INPUTS = {
    "random.pdf": (lambda p: p.write_bytes(os.urandom(4096)), "not a PDF"),
    "notes.pdf": (lambda p: p.write_text("just some text, not a pdf"), "not a PDF"),
    "truncated.pdf": (
        lambda p: p.write_bytes(SHORT_PAPER.read_bytes()[: SHORT_PAPER.stat().st_size // 2]),
        "truncated",
    ),
    "encrypted.pdf": (make_encrypted, "encrypted PDF"),
    "scanned.pdf": (make_image_only, "no text layer.*OCR"),
    "zero.pdf": (make_zero_pages, "zero pages"),
    "empty.txt": (lambda p: p.write_text(""), "empty text file"),
}


@pytest.mark.parametrize("name", list(BAD_INPUTS))
def test_bad_input_gets_a_clear_error(tmp_path, db, name):
    make, message = BAD_INPUTS[name]
    path = tmp_path / name
    make(path)
    result = ingest_file(path, db)
    assert result.status == "error"
    assert re.search(message, result.error), result.error
    assert "\n" not in result.error
    assert counts(db) == (0, 0, 0, 0)  # nothing half-written


def test_parse_pdf_raises_ingest_error_naming_the_file(tmp_path):
    path = tmp_path / "random.pdf"
    path.write_bytes(os.urandom(1000))
    with pytest.raises(IngestError) as info:
        parse_pdf(path)
    assert info.value.path == str(path)
    assert str(path) in str(info.value)


def test_missing_and_unsupported_paths(tmp_path):
    (tmp_path / "data.csv").write_text("a,b")
    sources, errors = find_sources([tmp_path / "missing.pdf", tmp_path / "data.csv"])
    assert sources == []
    assert [e.error for e in errors][0] == "no such file or directory"
    assert "unsupported file type '.csv'" in errors[1].error


@pytest.mark.skipif(os.geteuid() == 0, reason="root reads files whatever their permissions")
def test_unreadable_file(tmp_path, db):
    path = tmp_path / "locked.pdf"
    shutil.copy(SAMPLE, path)
    path.chmod(0)
    try:
        result = ingest_file(path, db)
    finally:
        path.chmod(0o644)
    assert result.status == "error" and "cannot read the file" in result.error


# ------------------------------------------------------------ storing papers


def test_ingest_stores_everything_and_reingest_changes_nothing(tmp_path, db):
    index = RecordingIndex()
    first = ingest_file(SAMPLE, db, index=index)
    assert first.status == "ingested" and not first.error
    assert first.title == "Reading Order and Coverage When Ingesting Two-Column Papers"
    assert first.pages == 2 and first.chunks > 3
    before = counts(db)
    assert before[0] == 1 and before[1] == first.chunks and before[2] >= 1 and before[3] == 3
    with db() as s:
        paper = s.get(Paper, first.paper_id)
        assert paper.language == "en" and paper.sections[0]["title"] == "Abstract"
        chunk_ids = [c.id for c in paper.chunks]
    assert index.added == [(first.paper_id, [(cid, text) for cid, text in index.added[0][1]])]
    assert [cid for cid, _ in index.added[0][1]] == chunk_ids

    copy = tmp_path / "renamed copy.pdf"
    shutil.copy(SAMPLE, copy)
    again = ingest_file(copy, db, index=index)
    assert again.status == "unchanged" and again.paper_id == first.paper_id
    assert again.chunks == first.chunks
    assert counts(db) == before
    assert len(index.added) == 1  # the index is not touched again


def test_index_failure_keeps_the_rows(db):
    result = ingest_file(SAMPLE, db, index=RecordingIndex(fail=True))
    assert result.status == "ingested"
    assert "search index was not updated (disk full)" in result.error
    assert counts(db)[0] == 1


def test_folder_with_a_broken_file(tmp_path, db):
    folder = tmp_path / "papers"
    (folder / "nested").mkdir(parents=True)
    shutil.copy(SAMPLE, folder / "good.pdf")
    (folder / "nested" / "broken.pdf").write_bytes(b"%PDF-1.7\n" + os.urandom(3000))
    (folder / "nested" / "notes.md").write_text(
        "# Notes on splitting\n\nSome text about sentence splitting.\n"
    )
    (folder / "ignored.csv").write_text("x")
    (folder / ".hidden.pdf").write_bytes(b"junk")
    seen = []
    results = ingest_paths([folder], db, on_progress=lambda r, done, total: seen.append((done, total)))
    by_name = {os.path.basename(r.file): r for r in results}
    assert set(by_name) == {"good.pdf", "broken.pdf", "notes.md"}
    assert by_name["good.pdf"].status == "ingested"
    assert by_name["notes.md"].status == "ingested" and by_name["notes.md"].title == "Notes on splitting"
    assert by_name["broken.pdf"].status == "error" and "corrupt" in by_name["broken.pdf"].error
    assert seen[-1] == (3, 3)
    assert counts(db)[0] == 2


def test_remove_paper_removes_everything_derived(db):
    keep = ingest_file(SAMPLE, db)
    other = ingest_file(SHORT_PAPER, db) if SHORT_PAPER != SAMPLE else None
    with transaction(db) as s:
        s.add(Analysis(paper_id=keep.paper_id, kind="critique", final_text="x"))
        s.add(Question(paper_id=keep.paper_id, question="q"))
        s.add(ReviewJob(source_path=str(SAMPLE), paper_id=keep.paper_id, status="done"))
    index = RecordingIndex()
    remove_paper(db, keep.paper_id, index=index)
    assert index.removed == [keep.paper_id]
    with db() as s:
        for table in (Chunk, Caption, Reference, Analysis, Question, ReviewJob):
            assert (
                s.scalar(select(func.count()).select_from(table).where(table.paper_id == keep.paper_id)) == 0
            )
        if other:
            assert s.get(Paper, other.paper_id) is not None
            assert s.scalar(select(func.count()).where(Chunk.paper_id == other.paper_id)) == other.chunks
    with pytest.raises(PaperNotFound):
        remove_paper(db, keep.paper_id)


def test_resolve_and_list_papers(tmp_path, db):
    sample = ingest_file(SAMPLE, db)
    md = tmp_path / "reading.md"
    md.write_text("# Reading Notes\n\nNotes.\n")
    notes = ingest_file(md, db)
    with transaction(db) as s:
        s.add(ReviewJob(source_path=str(md), paper_id=notes.paper_id, status="running"))
    with db() as s:
        assert resolve_paper(s, sample.paper_id).id == sample.paper_id
        assert resolve_paper(s, sample.paper_id[:8].upper()).id == sample.paper_id
        assert resolve_paper(s, str(SAMPLE)).id == sample.paper_id
        assert resolve_paper(s, "reading order and").id == sample.paper_id
        assert resolve_paper(s, "Reading Notes").id == notes.paper_id
        with pytest.raises(PaperNotFound, match="several titles"):
            resolve_paper(s, "reading")
        with pytest.raises(PaperNotFound, match="did you mean.*Reading Order"):
            resolve_paper(s, "Reading Odrer and Coverage")
        never_ingested = tmp_path / "other.txt"
        never_ingested.write_text("A file that exists but was never ingested.\n")
        with pytest.raises(PaperNotFound, match="not in the library"):
            resolve_paper(s, str(never_ingested))
        rows = {r.id: r.to_json() for r in list_papers(s)}
    assert rows[sample.paper_id]["status"] == "ingested"
    assert rows[sample.paper_id]["chunks"] == sample.chunks and rows[sample.paper_id]["pages"] == 2
    assert rows[notes.paper_id]["status"] == "running"


# ---------------------------------------------------------------------- CLI


@pytest.fixture
def cli_env(reader_env, monkeypatch):
    """The CLI with a recording index instead of the embedding one."""

    index = RecordingIndex()
    from reader.services import Services

    monkeypatch.setattr(Services, "search_index", property(lambda self: index))
    return index


def run(*args, input=None):
    from reader.cli import cli

    return CliRunner().invoke(cli, list(args), input=input, catch_exceptions=False)


def test_cli_ingest_json_papers_and_rm(tmp_path, cli_env):
    broken = tmp_path / "broken.pdf"
    broken.write_bytes(b"not a pdf at all")
    result = run("ingest", "--json", str(SAMPLE), str(broken), str(tmp_path / "missing.pdf"))
    assert result.exit_code == 1
    lines = [json.loads(line) for line in result.stdout.splitlines()]
    by_status = {d["status"]: d for d in lines}
    assert set(by_status) == {"ingested", "error"}
    assert {tuple(d) for d in lines} == {("file", "paper_id", "status", "error", "title", "pages", "chunks")}
    assert sum(1 for d in lines if d["status"] == "error") == 2
    ingested = by_status["ingested"]
    assert cli_env.added and cli_env.added[0][0] == ingested["paper_id"]

    again = run("ingest", "--json", str(SAMPLE))
    assert again.exit_code == 0 and json.loads(again.stdout)["status"] == "unchanged"

    listing = run("papers", "--json")
    assert [p["id"] for p in json.loads(listing.stdout)] == [ingested["paper_id"]]
    table = run("papers")
    assert ingested["paper_id"][:12] in table.stdout and "Reading Order" in table.stdout

    kept = run("rm", ingested["paper_id"][:10], input="n\n")
    assert kept.exit_code == 1 and json.loads(run("papers", "--json").stdout)
    removed = run("rm", "--yes", "Reading Order")
    assert removed.exit_code == 0 and "removed" in removed.stdout
    assert cli_env.removed == [ingested["paper_id"]]
    assert json.loads(run("papers", "--json").stdout) == []
    missing = run("rm", "--yes", "no such paper")
    assert missing.exit_code == 1 and "no paper matches" in missing.output


def test_cli_ingest_errors_on_stderr(tmp_path, cli_env):
    empty = tmp_path / "empty.txt"
    empty.write_text("")
    result = run("ingest", str(empty))
    assert result.exit_code == 1
    assert result.stderr.strip() == f"error: {empty}: empty text file (nothing to read)"


def test_cli_ingest_folder_with_progress(tmp_path, cli_env):
    shutil.copy(SAMPLE, tmp_path / "a.pdf")
    (tmp_path / "b.md").write_text("# Notes\n\nA few words on reading order.\n")
    result = run("ingest", str(tmp_path))
    assert result.exit_code == 0, result.output
    assert "ingested" in result.stdout and "a.pdf" in result.stdout and "b.md" in result.stdout
    assert result.stdout.strip().splitlines()[-1] == "2 ingested, 0 unchanged, 0 failed"
    quiet = run("ingest", "--quiet", str(tmp_path))
    assert quiet.exit_code == 0 and quiet.stdout == ""
