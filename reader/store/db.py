"""Engine and sessions. The database is created or upgraded to the newest migration on first use."""

from __future__ import annotations

import threading
from contextlib import contextmanager
from pathlib import Path

from sqlalchemy import create_engine, event, text
from sqlalchemy.engine import Engine
from sqlalchemy.orm import Session, sessionmaker

from reader.resources import migrations_dir

MIGRATIONS_DIR = migrations_dir()
# The newest revision in migrations/versions; update it with every new migration
# (tests/test_store.py checks it against alembic).
HEAD_REVISION = "0002"

_lock = threading.Lock()
_upgraded: set[str] = set()


def alembic_config(database_url: str):
    from alembic.config import Config

    cfg = Config()
    cfg.set_main_option("script_location", str(MIGRATIONS_DIR))
    cfg.set_main_option("sqlalchemy.url", database_url.replace("%", "%%"))
    return cfg


def _set_sqlite_pragmas(dbapi_conn, _record):
    cur = dbapi_conn.cursor()
    cur.execute("PRAGMA foreign_keys=ON")
    cur.execute("PRAGMA journal_mode=WAL")
    # In WAL mode NORMAL stays consistent after a crash or kill -9 and skips an fsync per commit.
    cur.execute("PRAGMA synchronous=NORMAL")
    cur.execute("PRAGMA busy_timeout=30000")
    cur.close()


def make_engine(database_url: str) -> Engine:
    if database_url.startswith("sqlite"):
        path = database_url.split("///", 1)[-1]
        if path and path != ":memory:":
            Path(path).parent.mkdir(parents=True, exist_ok=True)
        engine = create_engine(
            database_url, connect_args={"check_same_thread": False, "timeout": 30}
        )
        event.listen(engine, "connect", _set_sqlite_pragmas)
        return engine
    return create_engine(database_url, pool_pre_ping=True)


def upgrade(database_url: str) -> None:
    """Bring the database to the newest migration (creates it when blank)."""
    from alembic import command

    command.upgrade(alembic_config(database_url), "head")


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
def transaction(factory: sessionmaker[Session]):
    """A session whose work is committed together or not at all."""
    session = factory()
    try:
        yield session
        session.commit()
    except BaseException:
        session.rollback()
        raise
    finally:
        session.close()
