"""Races between commands on one home (issue 15): a paper removed while it is being
reviewed, several commands migrating an empty database at once, two reviews of
the same folder at once.

The review runner gets injected stages (tests/test_review.py's FakeWorld); the
migration race runs real processes released together by a file barrier.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
import textwrap
from pathlib import Path

from sqlalchemy import create_engine, text

from conftest import ROOT


# ------------------------------------------------- migrations on first use

MIGRATE_AT_ONCE = textwrap.dedent("""
    import sys, time
    from pathlib import Path
    import alembic.command  # imported before the barrier: every process is ready to migrate
    from reader.store.db import open_database
    from reader.store.tables import Paper
    url, barrier, me, total = sys.argv[1], Path(sys.argv[2]), sys.argv[3], int(sys.argv[4])
    (barrier / me).touch()
    while len(list(barrier.iterdir())) < total:
        time.sleep(0.002)
    factory = open_database(url)
    with factory() as s:
        s.query(Paper).count()
    print("ok")
""")


def migrate_at_once(url: str, tmp_path: Path, processes: int = 5) -> list[subprocess.CompletedProcess]:
    """`processes` Python processes that call open_database(url) at the same moment."""
    barrier = tmp_path / "barrier"
    barrier.mkdir()
    env = {**os.environ, "PYTHONPATH": str(ROOT)}
    procs = [subprocess.Popen([sys.executable, "-c", MIGRATE_AT_ONCE, url, str(barrier), str(i),
                               str(processes)], env=env, stdout=subprocess.PIPE,
                              stderr=subprocess.PIPE, text=True)
             for i in range(processes)]
    done = []
    for proc in procs:
        out, err = proc.communicate(timeout=180)
        done.append(subprocess.CompletedProcess(proc.args, proc.returncode, out, err))
    return done


def test_processes_opening_an_empty_sqlite_database_at_once_all_succeed(tmp_path):
    from reader.store.db import HEAD_REVISION

    db_file = tmp_path / "home" / "reader.db"
    results = migrate_at_once(f"sqlite:///{db_file}", tmp_path)
    failures = [[line for line in r.stderr.splitlines() if "Error" in line][-1:]
                for r in results if r.returncode != 0]
    assert failures == [], failures
    assert all(r.stdout.strip() == "ok" for r in results)
    with create_engine(f"sqlite:///{db_file}").connect() as conn:
        assert conn.execute(text("SELECT version_num FROM alembic_version")).scalars().all() == [
            HEAD_REVISION]


def test_reader_commands_started_at_once_on_an_empty_home_all_succeed(tmp_path):
    env = {k: v for k, v in os.environ.items() if not k.startswith("READER_")}
    env.update({"READER_HOME": str(tmp_path / "home"), "PYTHONPATH": str(ROOT)})
    procs = [subprocess.Popen([sys.executable, "-m", "reader", "papers", "--json"], env=env, cwd=ROOT,
                              stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
             for _ in range(4)]
    results = [(p.wait(timeout=180), p.stdout.read(), p.stderr.read()) for p in procs]
    assert [code for code, _, _ in results] == [0] * 4, [err for _, _, err in results]
    assert all(json.loads(out) == [] for _, out, _ in results)
