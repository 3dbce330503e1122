"""Engine and sessions. The database is created or upgraded to the newest migration on first use."""

from __future__ import annotations

import hashlib
import os
import threading
import time
from collections.abc import Callable
from contextlib import contextmanager
from pathlib import Path

from sqlalchemy import create_engine, event, make_url, text
from sqlalchemy.engine import Engine
from sqlalchemy.exc import DBAPIError, OperationalError
from sqlalchemy.orm import Session, sessionmaker

from reader.errors import DatabaseUnusable
from reader.resources import migrations_dir

MIGRATIONS_DIR = migrations_dir()
# The newest revision in migrations/versions; update it with every new migration
# (tests/test_store.py checks it against alembic).
HEAD_REVISION = "0016"

_lock = threading.Lock()
_upgraded: set[str] = set()


def alembic_config(database_url: str):
    from alembic.config import Config

    cfg = Config()
    cfg.set_main_option("script_location", str(MIGRATIONS_DIR))
    cfg.set_main_option("sqlalchemy.url", database_url.replace("%", "%%"))
    return cfg


def set_sqlite_locking(dbapi_conn, _record=None) -> None:
    """A 30 s busy timeout and WAL: processes that open the file at once wait for each other
    instead of failing "database is locked". Every connection needs it, the migrations' own
    (migrations/env.py) included: one migrating in the rollback journal with SQLite's default 5 s
    while others switch the file to WAL is what failed under load."""
    cur = dbapi_conn.cursor()
    cur.execute("PRAGMA busy_timeout=30000")
    cur.execute("PRAGMA journal_mode=WAL")
    # In WAL mode NORMAL stays consistent after a crash or kill -9 and skips an fsync per commit.
    cur.execute("PRAGMA synchronous=NORMAL")
    cur.close()


def _set_sqlite_pragmas(dbapi_conn, record) -> None:
    """The library's connections also enforce foreign keys (the migrations' must not: a batch
    migration drops the table it copied, which would cascade)."""
    cur = dbapi_conn.cursor()
    cur.execute("PRAGMA foreign_keys=ON")
    cur.close()
    set_sqlite_locking(dbapi_conn, record)


# What SQLite says of a file no retry will make usable: (words in its message, what is wrong, what to do)
_UNUSABLE_SQLITE = (
    (
        ("file is not a database", "disk image is malformed", "malformed database schema"),
        "the database is damaged",
        "restore it from a backup, or set READER_HOME to another folder and ingest the papers again",
    ),
    (
        ("readonly database", "unable to open database file"),
        "the database is read-only or cannot be opened",
        "make {folder} writable, or set READER_HOME to another folder",
    ),
)


def _unusable_sqlite_file(path: Path):
    """A handle_error hook: SQLite's errors that say the file itself cannot be used become one
    line naming the file and what to do (DatabaseUnusable) instead of a driver error and its SQL."""

    def translate(context):
        message = str(context.original_exception).strip()
        for words, problem, what_to_do in _UNUSABLE_SQLITE:
            if any(w in message.lower() for w in words):
                todo = what_to_do.format(folder=path.parent)
                return DatabaseUnusable(f"{path}: {problem} ({message}); {todo}")
        return None

    return translate


def _file_identity(path: Path) -> tuple[int, int] | None:
    try:
        found = os.stat(path)
    except FileNotFoundError:
        return None
    return found.st_dev, found.st_ino


def _refuse_a_replaced_file(engine: Engine, path: Path) -> None:
    """Once the SQLite file at `path` is no longer the one this engine opened (deleted, or
    another file put in its place), refuse every commit and every new connection in one line
    (DatabaseUnusable). Without this, commits go on into the deleted file and vanish with it,
    and a new connection makes an empty database there ("no such table")."""
    opened: list[tuple[int, int]] = []  # the file's identity at the engine's first connection

    def remember(_dbapi_conn, _record) -> None:
        if not opened and (identity := _file_identity(path)) is not None:
            opened.append(identity)

    def check() -> None:
        if opened and _file_identity(path) != opened[0]:
            raise DatabaseUnusable(
                f"{path}: the database file was deleted or replaced while in use, so nothing more "
                "is written to it; restore it from a backup, or run the command again to start a "
                "new one"
            )

    def before_connect(*_args) -> None:
        check()

    def before_commit(conn) -> None:
        try:
            check()
        except DatabaseUnusable:
            # SQLAlchemy counts a commit that raised as ended and does not roll it back: the
            # connection would keep its write lock, and every other writer waits on it.
            conn.connection.dbapi_connection.rollback()
            raise

    event.listen(engine, "connect", remember)
    event.listen(engine, "do_connect", before_connect)
    event.listen(engine, "commit", before_commit)


def make_engine(database_url: str) -> Engine:
    if database_url.startswith("sqlite"):
        path = _sqlite_file(database_url)
        if path is not None:
            try:
                path.parent.mkdir(parents=True, exist_ok=True)
            except OSError as exc:
                raise DatabaseUnusable(
                    f"{path}: cannot create its folder ({exc.strerror}); set READER_HOME to a folder "
                    "you can write"
                ) from None
        engine = create_engine(database_url, connect_args={"check_same_thread": False, "timeout": 30})
        event.listen(engine, "connect", _set_sqlite_pragmas)
        if path is not None:
            event.listen(engine, "handle_error", _unusable_sqlite_file(path))
            _refuse_a_replaced_file(engine, path)
        return engine
    try:
        return create_engine(database_url, pool_pre_ping=True)
    except ImportError as exc:
        shown = make_url(database_url).render_as_string(hide_password=True)
        raise DatabaseUnusable(
            f"READER_DATABASE_URL={shown}: its driver {exc.name or ''} is not installed; "
            'for PostgreSQL `pip install -e ".[postgres]"` and use postgresql+psycopg://'
        ) from None


def lock_key(name: str) -> int:
    """A signed 64-bit number for `name`: the key of a PostgreSQL advisory lock."""
    return int.from_bytes(hashlib.sha256(name.encode()).digest()[:8], "big", signed=True)


MIGRATION_LOCK = lock_key("reader:migrations")


def _sqlite_file(database_url: str) -> Path | None:
    path = database_url.split("///", 1)[-1] if "///" in database_url else ""
    return Path(path) if path and path != ":memory:" and not path.startswith("file:") else None


@contextmanager
def migration_lock(engine: Engine, database_url: str):
    """Held by one process at a time per database, so that concurrent first uses
    migrate it once: a file lock next to a SQLite file (`<db>.migrate.lock`, released
    by the kernel if the process dies), a session advisory lock on PostgreSQL."""
    if engine.dialect.name == "sqlite":
        path = _sqlite_file(database_url)
        if path is None:  # in memory: one process only
            yield
            return
        import fcntl

        try:
            handle = open(f"{path}.migrate.lock", "a")  # noqa: SIM115 - closed below
        except OSError as exc:
            raise DatabaseUnusable(
                f"{path}: cannot lock it to upgrade it ({exc.strerror}); make {path.parent} writable, "
                "or set READER_HOME to another folder"
            ) from None
        with handle:
            fcntl.flock(handle, fcntl.LOCK_EX)
            try:
                yield
            finally:
                fcntl.flock(handle, fcntl.LOCK_UN)
    elif engine.dialect.name == "postgresql":
        with engine.connect() as conn:
            conn.execute(text("SELECT pg_advisory_lock(:key)"), {"key": MIGRATION_LOCK})
            conn.commit()
            try:
                yield
            finally:
                conn.execute(text("SELECT pg_advisory_unlock(:key)"), {"key": MIGRATION_LOCK})
                conn.commit()
    else:
        yield


def upgrade(database_url: str) -> None:
    """Bring the database to the newest migration (creates it when blank); processes
    that do it at once take turns, and the ones after the first find nothing to do."""
    from alembic import command

    engine = make_engine(database_url)
    try:
        with migration_lock(engine, database_url):
            if _needs_upgrade(engine):
                command.upgrade(alembic_config(database_url), "head")
    finally:
        engine.dispose()


def _needs_upgrade(engine: Engine) -> bool:
    """True unless the database's alembic_version row is HEAD_REVISION
    (read with plain SQL: importing alembic costs ~0.1 s per process)."""
    with engine.connect() as conn:
        if not engine.dialect.has_table(conn, "alembic_version"):
            return True
        current = conn.execute(text("SELECT version_num FROM alembic_version")).scalars().all()
    return current != [HEAD_REVISION]


def open_database(database_url: str) -> sessionmaker[Session]:
    """Engine + session factory for a database that is at the newest migration."""
    engine = make_engine(database_url)
    with _lock:
        if database_url not in _upgraded:
            if _needs_upgrade(engine):
                upgrade(database_url)
            _upgraded.add(database_url)
    return sessionmaker(engine, expire_on_commit=False)


@contextmanager
def transaction(factory: sessionmaker[Session], lock: str | None = None):
    """A session whose work is committed together or not at all.

    With `lock`, the transaction runs alone among those with the same lock, in any
    process: on SQLite it holds the database's write lock from its start (BEGIN
    IMMEDIATE), on PostgreSQL an advisory lock on `lock` that ends with it. What it
    reads stays true until it commits, for every writer that takes the same lock."""
    session = factory()
    try:
        if lock is not None:
            conn = session.connection()
            if conn.dialect.name == "sqlite":
                conn.exec_driver_sql("BEGIN IMMEDIATE")
            elif conn.dialect.name == "postgresql":
                conn.execute(text("SELECT pg_advisory_xact_lock(:key)"), {"key": lock_key(lock)})
        yield session
        session.commit()
    except BaseException:
        session.rollback()
        raise
    finally:
        session.close()


# SQLSTATEs of a server that is not there for now: class 08 (connection exception), and
# 57P01-57P03 (shut down by an administrator, crashed, starting up or shutting down).
_AWAY_STATES = ("57P01", "57P02", "57P03")


def database_away(exc: BaseException) -> bool:
    """Whether `exc` says the database server cannot be reached right now (a refused or
    dropped connection, a server restarting) rather than that the statement or the data is
    wrong: the same work may succeed once it is back. An error of SQLite's is never this."""
    if not isinstance(exc, DBAPIError):
        return False
    if exc.connection_invalidated:
        return True
    driver_error = exc.orig
    state = getattr(driver_error, "sqlstate", None) or getattr(driver_error, "pgcode", None)
    if state:
        return state.startswith("08") or state in _AWAY_STATES
    # psycopg gives a failed connection attempt no SQLSTATE
    return isinstance(exc, OperationalError) and type(driver_error).__module__.startswith("psycopg")


def backoff_delays(first: float = 0.5, longest: float = 10.0):
    """0.5 s, 1 s, 2 s … doubling up to `longest` between tries."""
    delay = first
    while True:
        yield delay
        delay = min(delay * 2, longest)


def while_away(
    action: Callable[[], object],
    *,
    patience_s: float,
    on_wait: Callable[[BaseException, float], None] | None = None,
    sleep: Callable[[float], None] = time.sleep,
    clock: Callable[[], float] = time.monotonic,
):
    """`action()`, tried again with back-off (backoff_delays) while the database is away
    (database_away), for at most `patience_s` seconds from the first failure; any other error,
    or the database still away after that, is raised. `on_wait(error, delay)` before each wait."""
    delays = backoff_delays()
    deadline = None
    while True:
        try:
            return action()
        except Exception as exc:
            if not database_away(exc):
                raise
            now = clock()
            deadline = now + patience_s if deadline is None else deadline
            if now >= deadline:
                raise
            delay = min(next(delays), deadline - now)
            if on_wait is not None:
                on_wait(exc, delay)
            sleep(delay)
