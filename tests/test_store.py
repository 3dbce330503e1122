from alembic.autogenerate import compare_metadata
from alembic.migration import MigrationContext
from alembic.script import ScriptDirectory
from sqlalchemy import create_engine, select

from reader.store.db import HEAD_REVISION, alembic_config, open_database, upgrade
from reader.store.tables import Base, Chunk, Paper


def test_migrations_reach_the_orm_schema(tmp_path):
    url = f"sqlite:///{tmp_path / 'blank.db'}"
    upgrade(url)
    engine = create_engine(url)
    with engine.connect() as conn:
        diff = compare_metadata(MigrationContext.configure(conn), Base.metadata)
    assert diff == [], f"migrations and ORM disagree: {diff}"


def test_the_migrations_connection_waits_in_wal_like_every_other(tmp_path):
    """A file the migrations create is in WAL from their first connection, which waits 30 s for a
    lock as the library's do (a migration in the rollback journal with SQLite's 5 s, while other
    processes opened the file, failed "database is locked" under load) and leaves foreign keys
    off (a batch migration's dropped copy would cascade)."""
    from alembic import command
    from sqlalchemy import event, text
    from sqlalchemy.engine import Engine

    seen = []
    url = f"sqlite:///{tmp_path / 'fresh.db'}"

    def pragmas(conn, *_statement):  # the migration's connection, at each of its statements
        cur = conn.connection.dbapi_connection.cursor()
        seen.append(tuple(cur.execute(f"PRAGMA {p}").fetchone()[0] for p in ("busy_timeout", "foreign_keys")))
        cur.close()

    event.listen(Engine, "before_cursor_execute", pragmas)
    try:
        command.upgrade(alembic_config(url), "0002")
    finally:
        event.remove(Engine, "before_cursor_execute", pragmas)
    assert seen and set(seen) == {(30000, 0)}
    with create_engine(url).connect() as conn:
        assert conn.execute(text("PRAGMA journal_mode")).scalar() == "wal"


def test_head_revision_constant_matches_the_migrations():
    script = ScriptDirectory.from_config(alembic_config("sqlite://"))
    assert HEAD_REVISION == script.get_current_head(), "update HEAD_REVISION in reader/store/db.py"


def test_database_is_created_on_first_use_and_cascades(tmp_path):
    factory = open_database(f"sqlite:///{tmp_path / 'sub' / 'r.db'}")
    with factory() as s:
        s.add(
            Paper(
                id="a" * 64,
                title="T",
                source_path="x.pdf",
                source_kind="pdf",
                pages=1,
                chunks=[Chunk(ordinal=0, section="", page_start=1, page_end=1, text="hi")],
            )
        )
        s.commit()
        s.delete(s.get(Paper, "a" * 64))
        s.commit()
        assert s.scalars(select(Chunk)).all() == []


def test_a_0002_database_gains_the_call_timings(tmp_path):
    from alembic import command
    from sqlalchemy import text

    from reader.store.calls import CallStore
    from reader.store.tables import LLMCall
    from reader.store.usage import usage_report

    url = f"sqlite:///{tmp_path / 'old.db'}"
    command.upgrade(alembic_config(url), "0002")
    with create_engine(url).begin() as conn:  # a call logged before the timings existed
        conn.execute(
            text(
                "INSERT INTO llm_calls (created_at, stage, role, model, paper_id, prompt_tokens, "
                "completion_tokens, latency_ms, cached, error) VALUES "
                "('2026-11-30 10:00:00', 'verify', 'verifier', 'm', NULL, 10, 2, 1500.0, 0, '')"
            )
        )
    factory = open_database(url)
    CallStore(factory).log(
        stage="verify",
        role="verifier",
        model="m",
        paper_id=None,
        prompt_tokens=10,
        completion_tokens=2,
        latency_s=2.0,
        cached=False,
        prompt_s=0.5,
        generation_s=1.25,
        cached_prompt_tokens=6,
    )
    with factory() as s:
        rows = s.scalars(select(LLMCall).order_by(LLMCall.id)).all()
    assert [(r.latency_ms, r.prompt_ms, r.generation_ms, r.cached_prompt_tokens) for r in rows] == [
        (1500.0, None, None, None),
        (2000.0, 500.0, 1250.0, 6),
    ]
    (verify,) = usage_report(factory).by_stage
    assert (verify.calls, verify.timed_calls, verify.time_s) == (2, 1, 3.5)
    assert (verify.prompt_s, verify.generation_s, verify.cached_prompt_tokens) == (0.5, 1.25, 6)


def test_a_0015_database_gains_the_drafted_and_accepted_tokens(tmp_path):
    """Migration 0016: a call logged before it has no draft figures (None, "–" in `reader stats`);
    one logged after keeps what the server drafted and accepted, and downgrading drops them."""
    from alembic import command
    from sqlalchemy import inspect, text

    from reader.store.calls import CallStore
    from reader.store.tables import LLMCall
    from reader.store.usage import usage_report

    url = f"sqlite:///{tmp_path / 'old.db'}"
    command.upgrade(alembic_config(url), "0015")
    with create_engine(url).begin() as conn:
        conn.execute(
            text(
                "INSERT INTO llm_calls (created_at, stage, role, model, paper_id, prompt_tokens, "
                "completion_tokens, latency_ms, cached, error) VALUES "
                "('2027-01-30 10:00:00', 'critique', 'generator', 'm', NULL, 10, 20, 1500.0, 0, '')"
            )
        )
    factory = open_database(url)
    store = CallStore(factory)
    common = dict(role="generator", model="m", paper_id=None, prompt_tokens=10, completion_tokens=20)
    store.log(stage="critique", latency_s=1.0, cached=False, drafted_tokens=48, accepted_tokens=40, **common)
    store.log(stage="verify", latency_s=1.0, cached=False, **common)  # nothing drafted
    with factory() as s:
        rows = s.scalars(select(LLMCall).order_by(LLMCall.id)).all()
    assert [(r.drafted_tokens, r.accepted_tokens) for r in rows] == [(None, None), (48, 40), (None, None)]
    critique, verify = usage_report(factory).by_stage
    assert (critique.drafted_tokens, critique.accepted_tokens) == (48, 40)
    assert (verify.drafted_tokens, verify.accepted_tokens) == (None, None)

    command.downgrade(alembic_config(url), "0015")
    columns = {c["name"] for c in inspect(create_engine(url)).get_columns("llm_calls")}
    assert "cached_prompt_tokens" in columns and not columns & {"drafted_tokens", "accepted_tokens"}
