"""A home that cannot be used ends a command in one line naming the file and what to do, never a
traceback: a read-only READER_HOME, a damaged reader.db (random bytes in the middle, or its header
overwritten), READER_HOME/index replaced by a plain file, a READER_HOME that cannot be created."""

from __future__ import annotations

import os
import random
import shutil
import subprocess
import sys
from pathlib import Path

import pytest
from conftest import ROOT, SAMPLE_PAPER, make_reader


def run_reader(home: Path, *args: str, wrap: list[str] | None = None) -> subprocess.CompletedProcess:
    env = {k: v for k, v in os.environ.items() if not k.startswith("READER_")}
    env.update(
        READER_HOME=str(home),
        READER_LLM_BASE_URL="scripted:",
        READER_CHECKER="off",
        READER_CRAG_GRADER="off",
    )
    return subprocess.run(
        [*(wrap or []), sys.executable, "-m", "reader", *args],
        env=env,
        cwd=ROOT,
        capture_output=True,
        text=True,
        timeout=180,
    )


def one_line_error(run: subprocess.CompletedProcess) -> str:
    """The single stderr line of a command that failed as it should: non-zero, no traceback."""
    assert "Traceback" not in run.stderr, run.stderr[-3000:]
    assert run.returncode != 0, (run.stdout, run.stderr)
    lines = run.stderr.strip().splitlines()
    assert len(lines) == 1, run.stderr[-3000:]
    return lines[0]


@pytest.fixture
def home(reader_env) -> Path:
    """A home holding the sample paper, its database checkpointed into reader.db (no WAL beside it)."""
    app = make_reader(cache=None)
    [result] = app.ingest([SAMPLE_PAPER])
    assert result.status == "ingested", result.error
    app.services.db.kw["bind"].dispose()
    assert not (reader_env / "reader.db-wal").exists()
    return reader_env


def damage(path: Path, offset: int, size: int) -> None:
    noise = random.Random(33).randbytes(size)
    with open(path, "r+b") as handle:
        handle.seek(offset)
        handle.write(noise)


@pytest.mark.parametrize("command", [["papers"], ["search", "reading order"], ["ingest", str(SAMPLE_PAPER)]])
def test_a_database_with_its_header_overwritten_is_named_with_what_to_do(home, command):
    database = home / "reader.db"
    damage(database, 0, 100)
    line = one_line_error(run_reader(home, *command))
    assert str(database) in line and "damaged" in line, line
    assert "backup" in line and "READER_HOME" in line, line


def test_a_database_with_random_bytes_in_the_middle_is_named_with_what_to_do(home):
    database = home / "reader.db"
    pages = database.stat().st_size // 4096
    damage(database, (pages // 3) * 4096, 16 * 1024)
    line = one_line_error(run_reader(home, "papers"))
    assert str(database) in line and "damaged" in line and "backup" in line, line


def test_ingest_into_a_damaged_database_stops_with_one_line(home, tmp_path):
    database = home / "reader.db"
    pages = database.stat().st_size // 4096
    damage(database, (pages // 3) * 4096, 16 * 1024)
    other = tmp_path / "other.txt"
    other.write_text("A second paper.\n\nIt has a paragraph about reading order and coverage.\n")
    line = one_line_error(run_reader(home, "ingest", str(other)))
    assert str(database) in line and "damaged" in line, line


def test_an_index_that_is_a_plain_file_is_named_with_what_to_do(home):
    index = home / "index"
    shutil.rmtree(index)
    index.write_text("not an index\n")
    line = one_line_error(run_reader(home, "search", "reading order"))
    assert str(index) in line and "not a folder" in line and "reader reindex" in line, line
    assert index.read_text() == "not an index\n"  # the user's file is left alone
    line = one_line_error(run_reader(home, "reindex"))
    assert str(index) in line and "not a folder" in line, line


def test_an_index_that_is_a_plain_file_does_not_stop_ingest(home, tmp_path):
    index = home / "index"
    shutil.rmtree(index)
    index.write_text("not an index\n")
    other = tmp_path / "other.txt"
    other.write_text("A second paper.\n\nIt has a paragraph about reading order and coverage.\n")
    run = run_reader(home, "ingest", str(other))
    assert "Traceback" not in run.stderr, run.stderr[-3000:]
    assert "ingested" in run.stdout and str(index) in run.stdout + run.stderr, (run.stdout, run.stderr)
    assert "not a folder" in run.stdout + run.stderr and "reader reindex" in run.stdout + run.stderr


def _without_permission_override() -> list[str]:
    """A prefix that makes the command meet file permissions as an ordinary user does: root
    drops the capabilities that let it write anywhere (setpriv); anyone else needs nothing."""
    if os.geteuid() != 0:
        return []
    setpriv = shutil.which("setpriv")
    if setpriv is None:
        pytest.skip("running as root without setpriv: a read-only folder cannot be made")
    caps = "-dac_override,-dac_read_search"
    return [setpriv, f"--inh-caps={caps}", f"--bounding-set={caps}"]


@pytest.mark.parametrize("command", [["papers"], ["search", "reading order"], ["ingest", str(SAMPLE_PAPER)]])
def test_a_read_only_home_is_named_with_what_to_do(home, command):
    wrap = _without_permission_override()
    database = home / "reader.db"
    modes = {p: p.stat().st_mode for p in (home, database)}
    database.chmod(0o444)
    home.chmod(0o555)
    try:
        line = one_line_error(run_reader(home, *command, wrap=wrap))
    finally:
        for path, mode in modes.items():
            path.chmod(mode)
    assert str(database) in line and "read-only" in line, line
    assert "writable" in line and "READER_HOME" in line, line


def test_a_home_that_cannot_be_created_is_named(tmp_path):
    blocker = tmp_path / "a-file"
    blocker.write_text("")
    home = blocker / "home"
    line = one_line_error(run_reader(home, "papers"))
    assert str(home) in line and "READER_HOME" in line, line
