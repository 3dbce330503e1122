"""What one file may cost ingest (issue 33): a PDF is parsed in a child process with bounded
memory, time and pages, so a decompression bomb is refused in one line instead of growing the
process by gigabytes; only regular files of bounded size are read, so a named pipe or a link
to /dev/zero is refused at once instead of blocking or reading until memory runs out. The web
server never parses in its own process."""

from __future__ import annotations

import dataclasses
import os
import resource
import shutil
import threading
import time
import zlib
from pathlib import Path
from types import SimpleNamespace

import pymupdf
import pytest
from click.testing import CliRunner
from conftest import SAMPLE_PAPER, make_reader
from sqlalchemy import func, select

from reader.index import dense
from reader.index.dense import HashingEmbedder
from reader.store.tables import Paper


def text_bomb(path: Path, mb: int) -> Path:
    """A one-page PDF whose content stream, FlateDecode'd, is `mb` MB of shown text: a few kB
    on disk, hundreds of MB once mupdf has laid out its characters."""
    line = b"(word word word word word word word word word) Tj T* "
    block = line * ((1 << 20) // len(line))
    packer = zlib.compressobj(9)
    stream = packer.compress(b"BT /F1 12 Tf 14 TL 72 720 Td ")
    for _ in range(mb):
        stream += packer.compress(block)
    stream += packer.compress(b" ET\n") + packer.flush()
    objects = [
        b"<< /Type /Catalog /Pages 2 0 R >>",
        b"<< /Type /Pages /Kids [3 0 R] /Count 1 >>",
        b"<< /Type /Page /Parent 2 0 R /MediaBox [0 0 612 792] /Contents 4 0 R "
        b"/Resources << /Font << /F1 5 0 R >> >> >>",
        b"<< /Length %d /Filter /FlateDecode >>\nstream\n" % len(stream) + stream + b"\nendstream",
        b"<< /Type /Font /Subtype /Type1 /BaseFont /Helvetica >>",
    ]
    out = bytearray(b"%PDF-1.7\n")
    offsets = []
    for number, body in enumerate(objects, start=1):
        offsets.append(len(out))
        out += b"%d 0 obj\n" % number + body + b"\nendobj\n"
    xref = len(out)
    out += b"xref\n0 %d\n0000000000 65535 f \n" % (len(objects) + 1)
    out += b"".join(b"%010d 00000 n \n" % offset for offset in offsets)
    out += b"trailer\n<< /Size %d /Root 1 0 R >>\nstartxref\n%d\n%%%%EOF\n" % (len(objects) + 1, xref)
    path.write_bytes(bytes(out))
    return path


TOPICS = ("reading order", "column detection", "heading styles", "running headers", "reference lists")


def many_pages(path: Path, n: int) -> Path:
    doc = pymupdf.open()
    for i in range(n):
        topic = TOPICS[i % len(TOPICS)]
        doc.new_page().insert_text((72, 300), f"This page of the report is on {topic} alone.", fontsize=12)
    doc.save(path)
    return path


def peak_rss_mb() -> float:
    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024


def one_line(text: str) -> bool:
    return bool(text) and "\n" not in text and len(text) <= 400


def run(*args):
    from reader.cli import cli

    return CliRunner().invoke(cli, list(args), catch_exceptions=False)


@pytest.fixture
def cli_home(reader_env, monkeypatch):
    monkeypatch.setattr(dense, "load_embedder", lambda settings: HashingEmbedder())
    return reader_env


def stored_papers(home: Path) -> int:
    from reader.facade import Reader

    with Reader().services.db() as s:
        return s.scalar(select(func.count()).select_from(Paper))


# ------------------------------------------------------------ case 1: what parsing one PDF may cost


def test_a_decompression_bomb_is_refused_in_one_line_and_the_next_file_is_ingested(
    tmp_path, cli_home, monkeypatch
):
    folder = tmp_path / "papers"
    folder.mkdir()
    bomb = text_bomb(folder / "a_bomb.pdf", 8)
    assert bomb.stat().st_size < 64 * 1024  # small on disk
    shutil.copy(SAMPLE_PAPER, folder / "b_paper.pdf")
    monkeypatch.setenv("READER_INGEST_MEMORY_MB", "64")
    before = peak_rss_mb()
    started = time.monotonic()
    result = run("ingest", str(folder))
    elapsed = time.monotonic() - started
    assert result.exit_code == 1
    [error] = result.stderr.strip().splitlines()
    assert error.startswith("error: ") and "a_bomb.pdf" in error and one_line(error), error
    assert "64 MB of memory" in error and "READER_INGEST_MEMORY_MB" in error, error
    assert "Traceback" not in result.output
    assert any(line.startswith("ingested  b_paper.pdf") for line in result.stdout.splitlines()), result.stdout
    assert stored_papers(cli_home) == 1
    # the bomb's hundreds of MB were never taken in this process
    assert peak_rss_mb() - before < 150, (before, peak_rss_mb())
    assert elapsed < 60


def test_a_parse_that_runs_past_the_time_limit_is_stopped(tmp_path, cli_home, monkeypatch):
    bomb = text_bomb(tmp_path / "slow.pdf", 8)
    monkeypatch.setenv("READER_INGEST_TIMEOUT", "0.5")
    run("ingest", str(SAMPLE_PAPER))  # the child is started and warm: the limit is the parse's alone
    started = time.monotonic()
    result = run("ingest", str(bomb))
    assert time.monotonic() - started < 10
    assert result.exit_code == 1
    [error] = result.stderr.strip().splitlines()
    assert "slow.pdf" in error and one_line(error), error
    assert "0.5 s" in error and "READER_INGEST_TIMEOUT" in error, error
    assert stored_papers(cli_home) == 1
    # the next file parses in a fresh child
    monkeypatch.delenv("READER_INGEST_TIMEOUT")
    many_pages(tmp_path / "short.pdf", 2)
    assert run("ingest", str(tmp_path / "short.pdf")).exit_code == 0


def test_a_pdf_with_more_pages_than_the_limit_is_refused(tmp_path, cli_home, monkeypatch):
    many_pages(tmp_path / "long.pdf", 5)
    many_pages(tmp_path / "short.pdf", 3)
    monkeypatch.setenv("READER_INGEST_MAX_PAGES", "3")
    result = run("ingest", str(tmp_path / "long.pdf"), str(tmp_path / "short.pdf"))
    assert result.exit_code == 1
    [error] = result.stderr.strip().splitlines()
    assert "long.pdf" in error and "5 pages" in error and "READER_INGEST_MAX_PAGES" in error, error
    assert one_line(error)
    assert stored_papers(cli_home) == 1


def test_a_file_larger_than_the_limit_is_refused_before_it_is_read(tmp_path, cli_home, monkeypatch):
    big = tmp_path / "big.txt"
    big.write_text("# Notes\n\n" + "A line of notes on reading order.\n" * 70_000)  # 2.3 MB
    monkeypatch.setenv("READER_INGEST_MAX_MB", "1")
    result = run("ingest", str(big))
    assert result.exit_code == 1
    [error] = result.stderr.strip().splitlines()
    assert "big.txt" in error and "READER_INGEST_MAX_MB" in error and one_line(error), error
    assert stored_papers(cli_home) == 0


def test_limits_are_settings_checked_at_load(reader_env, monkeypatch):
    from reader.config import load_settings
    from reader.errors import ConfigError

    settings = load_settings(dict(os.environ))
    assert (settings.ingest_max_mb, settings.ingest_memory_mb) == (200, 1024)
    assert (settings.ingest_timeout, settings.ingest_max_pages) == (120.0, 2000)
    for name, bad in (
        ("READER_INGEST_MEMORY_MB", "0"),
        ("READER_INGEST_TIMEOUT", "-1"),
        ("READER_INGEST_MAX_PAGES", "0"),
        ("READER_INGEST_MAX_MB", "lots"),
    ):
        with pytest.raises(ConfigError, match=name):
            load_settings({**os.environ, name: bad})


def test_an_uploaded_bomb_fails_its_job_and_the_server_never_parses_it(tmp_path, monkeypatch):
    """The web server's worker hands the PDF to the parsing child: nothing of it is parsed in
    the server's process, whose pages keep answering while the child works."""
    from fastapi.testclient import TestClient

    from reader.facade import Reader
    from reader.ingest import pdf as pdf_module
    from reader.web.app import create_app

    in_server = []
    real_parse = pdf_module.parse_pdf
    monkeypatch.setattr(pdf_module, "parse_pdf", lambda *a, **k: in_server.append(a) or real_parse(*a, **k))

    settings = dataclasses.replace(Reader(home=tmp_path / "home").settings, ingest_memory_mb=64)
    ctx = make_reader(settings=settings, cache=None)
    ctx.services.warm_up = lambda: None
    ctx.services.read_paper = lambda paper_id, *, on_progress=None, db=None: SimpleNamespace(
        paper_id=paper_id
    )
    data = text_bomb(tmp_path / "bomb.pdf", 8).read_bytes()
    with TestClient(create_app(ctx)) as client:
        sent = client.post(
            "/upload",
            files=[("files", ("bomb.pdf", data, "application/pdf"))],
            headers={"Origin": "http://testserver", "Accept": "application/json"},
        )
        assert sent.status_code == 200, sent.text
        [job] = sent.json()["jobs"]
        deadline = time.monotonic() + 60
        while time.monotonic() < deadline:
            assert client.get("/library").status_code == 200
            state = client.get(f"/api/jobs/{job['id']}").json()
            if state["status"] in ("done", "error"):
                break
            time.sleep(0.2)
    assert state["status"] == "error", state
    assert "64 MB of memory" in state["error"] and one_line(state["error"]), state["error"]
    assert not in_server


# ------------------------------------------------------------ case 2: only regular files are read


def unblock(fifo: Path) -> None:
    """Let a reader blocked on opening the pipe go (it then reads an empty file)."""
    try:
        os.close(os.open(fifo, os.O_WRONLY | os.O_NONBLOCK))
    except OSError:
        pass


def in_thread(call, timeout: float = 15):
    """call() in a thread -> its value, or None when it is still blocked after `timeout`."""
    box = {}
    thread = threading.Thread(target=lambda: box.setdefault("value", call()), daemon=True)
    thread.start()
    thread.join(timeout)
    return box.get("value")


def test_a_named_pipe_called_pdf_is_refused_at_once(tmp_path, app):
    from reader.ingest.pipeline import ingest_paths

    folder = tmp_path / "papers"
    folder.mkdir()
    fifo = folder / "pipe.pdf"
    os.mkfifo(fifo)
    (folder / "notes.md").write_text("# Notes\n\nA few words on reading order.\n")
    try:
        results = in_thread(lambda: ingest_paths([folder, fifo], app.services.db))
    finally:
        unblock(fifo)
    assert results is not None, "ingest blocked on the named pipe"
    by_status = {(Path(r.file).name, r.status) for r in results}
    assert by_status == {("pipe.pdf", "error"), ("notes.md", "ingested")}
    for r in results:
        if r.status == "error":
            assert "not a regular file" in r.error and "named pipe" in r.error and one_line(r.error)


def test_a_named_pipe_is_refused_by_review_and_the_queue(tmp_path, app):
    fifo = tmp_path / "pipe.pdf"
    os.mkfifo(fifo)
    try:
        report = in_thread(lambda: app.queue.enqueue([fifo]))
    finally:
        unblock(fifo)
    assert report is not None, "queueing blocked on the named pipe"
    [row] = report.rows
    assert row.status == "error" and "not a regular file" in row.detail and one_line(row.detail)


def test_a_link_to_a_device_is_refused_and_a_link_to_a_file_is_read(tmp_path, app):
    from reader.ingest.pipeline import ingest_file

    zero = tmp_path / "zero.pdf"
    zero.symlink_to("/dev/zero")
    result = in_thread(lambda: ingest_file(zero, app.services.db))
    assert result is not None and result.status == "error"
    assert "not a regular file" in result.error and "device" in result.error and one_line(result.error)
    notes = tmp_path / "notes.md"
    notes.write_text("# Notes\n\nA few words on reading order.\n")
    (tmp_path / "link.md").symlink_to(notes)
    assert ingest_file(tmp_path / "link.md", app.services.db).status == "ingested"
