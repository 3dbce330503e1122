import os
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
SHARED = ROOT.parent / "shared"
SHARED_PAPERS = SHARED / "papers"
SHARED_EVAL = SHARED / "eval"


def shared_pdfs() -> list[Path]:
    return sorted(SHARED_PAPERS.glob("*.pdf"))


@pytest.fixture
def reader_env(tmp_path, monkeypatch):
    """A private READER_HOME (SQLite inside) with no LLM endpoint configured."""
    home = tmp_path / "home"
    monkeypatch.setenv("READER_HOME", str(home))
    for key in list(os.environ):
        if key.startswith("READER_") and key != "READER_HOME":
            monkeypatch.delenv(key)
    return home


@pytest.fixture
def app(reader_env):
    from reader.app import App

    return App()


@pytest.fixture
def db(app):
    """A sessionmaker on a fresh, migrated SQLite database."""
    return app.db
