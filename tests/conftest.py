import os
import shutil
from contextlib import contextmanager
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
SHARED = ROOT.parent / "shared"
SHARED_PAPERS = SHARED / "papers"
SHARED_EVAL = SHARED / "eval"
# The project's own 2-page paper (two columns, a table caption, 3 numbered
# references): the stand-in for ../shared/papers in a clone without them.
SAMPLE_PAPER = ROOT / "papers" / "sample_paper.pdf"


def shared_pdfs() -> list[Path]:
    return sorted(SHARED_PAPERS.glob("*.pdf"))


# Where the embedded model is assembled for tests: the READER_HOME of the shell
# that runs pytest (read before any test changes it), so it is built once per
# machine rather than once per test.
_OUTER_READER_HOME = os.environ.get("READER_HOME")
# The suite's fakes script the verifier's every answer; the trained claim checker would decide
# most sentences before them. Tests of the checker turn it on (tests/test_checker*.py).
os.environ.setdefault("READER_CHECKER", "off")
# Likewise the trained relevance grader would grade passages before the scripted LLM grader;
# tests of the grader turn it on (tests/test_grader*.py).
os.environ.setdefault("READER_CRAG_GRADER", "off")
# The follow-up questioner would ask the scripted LLMs more after every read whose audit passed;
# its tests turn it on (tests/test_followup.py).
os.environ.setdefault("READER_FOLLOWUP", "off")
# The extraction checks would ask the scripted verifiers one more kind of question about every
# sentence with a number or comparison; their tests turn them on (tests/test_cloze.py).
os.environ.setdefault("READER_EXTRACTION", "off")


def pytest_collection_modifyitems(items):
    """The tiers: a test on the session's chromium is marked `browser`, one on its PostgreSQL
    cluster `postgres` (directly, or as the "postgresql" case of a parametrized database), so
    `-m "not browser and not postgres"` runs the quick tier; a plain run runs them all.

    Each tier is also one xdist group: under `pytest -n 2 --dist loadgroup` (.ci/run) all tests of
    a session-wide resource (the chromium, the cluster, the embedded model) run in one worker, so
    each is started once, and the model's tests do not compete with each other for the cores."""
    for item in items:
        fixtures = set(getattr(item, "fixturenames", ()))
        params = getattr(getattr(item, "callspec", None), "params", {})
        group = None
        if "chromium" in fixtures:
            item.add_marker(pytest.mark.browser)
            group = "browser"
        if "pg_cluster" in fixtures or "postgresql" in params.values():
            item.add_marker(pytest.mark.postgres)
            group = group or "postgres"
        if "embedded_llm" in fixtures or item.get_closest_marker("model"):
            group = group or "model"
        if group:
            item.add_marker(pytest.mark.xdist_group(group))


@pytest.fixture(scope="session")
def embedded_llm():
    """The embedded model (reader.llm.local.LocalLLM), loaded once for the whole test session."""
    from reader.config import default_home
    from reader.llm.local import LocalLLM

    home = Path(_OUTER_READER_HOME).expanduser() if _OUTER_READER_HOME else default_home()
    llm = LocalLLM(home / "models")
    llm.load()
    return llm


@pytest.fixture(scope="session")
def migrated_database(tmp_path_factory) -> Path:
    """A SQLite database at the newest migration, made once per session: a test's home gets a
    copy (migrating costs ~0.3 s a database, copying ~0.005 s). The tests of the migrations
    themselves (tests/test_store.py, the first-use races) migrate databases of their own."""
    from reader.store.db import upgrade

    path = tmp_path_factory.mktemp("migrated") / "reader.db"
    upgrade(f"sqlite:///{path}")
    assert not Path(f"{path}-wal").exists()  # all of it is in the one file
    return path


@pytest.fixture(scope="session")
def migrated_copy(migrated_database):
    """A function: `migrated_copy(path)` puts a copy of the migrated database at `path` (its
    folder made) and returns the copy's database URL."""

    def copy(path: Path) -> str:
        path.parent.mkdir(parents=True, exist_ok=True)
        shutil.copyfile(migrated_database, path)
        return f"sqlite:///{path}"

    return copy


@pytest.fixture(scope="session")
def migrated_home(migrated_copy):
    """A function: `migrated_home(folder)` makes `folder` a READER_HOME whose reader.db is a copy
    of the migrated database, and returns it."""

    def make(home: Path) -> Path:
        migrated_copy(home / "reader.db")
        return home

    return make


@pytest.fixture
def reader_env(tmp_path, monkeypatch, migrated_home):
    """A private READER_HOME (a migrated SQLite database inside) with no LLM endpoint configured."""
    home = migrated_home(tmp_path / "home")
    monkeypatch.setenv("READER_HOME", str(home))
    for key in list(os.environ):
        if key.startswith("READER_") and key != "READER_HOME":
            monkeypatch.delenv(key)
    monkeypatch.setenv("READER_CHECKER", "off")
    monkeypatch.setenv("READER_CRAG_GRADER", "off")
    monkeypatch.setenv("READER_FOLLOWUP", "off")
    monkeypatch.setenv("READER_EXTRACTION", "off")
    return home


@pytest.fixture
def app(reader_env):
    from reader.facade import Reader

    return Reader()


@pytest.fixture
def db(app):
    """A sessionmaker on a fresh copy of the migrated SQLite database."""
    return app.services.db


@pytest.fixture
def hashing_index(monkeypatch):
    """Every Services the test makes (the CLI's own too) searches an index with the hashing
    embedder, one per Services, made when first asked for: no embedding model is loaded."""
    from reader.index.dense import HashingEmbedder
    from reader.index.store import SearchIndex
    from reader.services import Services

    def search_index(self):
        if "_index" not in self.__dict__:
            self.__dict__["_index"] = SearchIndex(
                self.settings.index_dir, self.db, embedder=HashingEmbedder()
            )
        return self.__dict__["_index"]

    monkeypatch.setattr(Services, "search_index", property(search_index))


def make_reader(home=None, *, env=None, settings=None, llm=None, cache=False, **kw):
    """A Reader that embeds with the hashing embedder (no model to load), the tests' one way to
    build one by hand.

    Its settings: `settings` when given; else, with `home`, read from READER_HOME=home and the
    variables in `env` alone (none by default: a home of its own whatever the environment says;
    `env=os.environ` reads them as Reader(home=home) does); else the environment's (reader_env's
    home). `cache` is its use_cache: no response cache unless True; None leaves it to the
    settings. `llm` and the rest (verifier, checker, database_url, ...) go to Reader as given."""
    from reader.config import load_settings
    from reader.facade import Reader
    from reader.index.dense import HashingEmbedder

    assert env is None or home is not None, "env is read with a home"
    if home is not None:
        assert settings is None, "give home or settings, not both"
        settings = load_settings({**(env or {}), "READER_HOME": str(home)})
    return Reader(settings, llm=llm, embedder=HashingEmbedder(), use_cache=cache, **kw)


CHROMIUM_ARGS = [
    "--no-sandbox",
    "--disable-gpu",
    "--disable-quic",
    "--no-first-run",
    "--disable-background-networking",
    "--disable-component-update",
    "--disable-sync",
]


def find_chromium() -> str | None:
    for candidate in ("/usr/bin/chromium", shutil.which("chromium"), shutil.which("chromium-browser")):
        if candidate and Path(candidate).exists():
            return candidate
    return None


@pytest.fixture(scope="session")
def chromium():
    """One headless Debian chromium (Playwright) for the whole session: a test opens its own
    context (its own cookies, storage and pages) and closes it. Skipped without chromium.

    Playwright's sync API marks its event loop as running in the main thread while it is
    started, so no other test may start one of its own: they all use this one."""
    path = find_chromium()
    if path is None:
        pytest.skip("chromium not found (Debian: apt-get install chromium); .ci/run installs it")
    sync_api = pytest.importorskip("playwright.sync_api", reason="pip install playwright")
    with sync_api.sync_playwright() as pw:
        browser = pw.chromium.launch(executable_path=path, args=CHROMIUM_ARGS, headless=True)
        try:
            yield browser
        finally:
            browser.close()


@pytest.fixture(scope="session")
def pg_cluster():
    """One throwaway PostgreSQL server on 127.0.0.1 for the whole session
    (tests/postgres_cluster.py); a test or module makes its own database in it. Skipped (with
    the reason) where no PostgreSQL server binaries are installed."""
    pytest.importorskip("psycopg")
    from postgres_cluster import new_cluster, remove_cluster, server_binaries

    bin_dir = server_binaries()
    if not bin_dir:
        pytest.skip("no PostgreSQL server binaries (/usr/lib/postgresql/*/bin)")
    cluster = new_cluster(bin_dir)
    try:
        yield cluster
    finally:
        remove_cluster(cluster)


@pytest.fixture(scope="session")
def pg_url(pg_cluster):
    return pg_cluster.url


@contextmanager
def serving(web_app):
    """The ASGI app served by uvicorn on a free loopback port, in a thread; yields its base URL."""
    import socket
    import threading
    import time

    import uvicorn

    sock = socket.socket()
    sock.bind(("127.0.0.1", 0))
    server = uvicorn.Server(uvicorn.Config(web_app, log_level="warning", access_log=False))
    thread = threading.Thread(target=server.run, kwargs={"sockets": [sock]}, daemon=True)
    thread.start()
    deadline = time.monotonic() + 20
    while not server.started and time.monotonic() < deadline:
        time.sleep(0.05)
    assert server.started, "the web app did not start"
    try:
        yield f"http://127.0.0.1:{sock.getsockname()[1]}"
    finally:
        server.should_exit = True
        thread.join(10)
