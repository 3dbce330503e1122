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


def test_head_revision_constant_matches_the_migrations():
    script = ScriptDirectory.from_config(alembic_config("sqlite://"))
    assert HEAD_REVISION == script.get_current_head(), "update HEAD_REVISION in reader/store/db.py"


def test_database_is_created_on_first_use_and_cascades(tmp_path):
    factory = open_database(f"sqlite:///{tmp_path / 'sub' / 'r.db'}")
    with factory() as s:
        s.add(Paper(id="a" * 64, title="T", source_path="x.pdf", source_kind="pdf", pages=1,
                    chunks=[Chunk(ordinal=0, section="", page_start=1, page_end=1, text="hi")]))
        s.commit()
        s.delete(s.get(Paper, "a" * 64))
        s.commit()
        assert s.scalars(select(Chunk)).all() == []
