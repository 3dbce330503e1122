"""A throwaway PostgreSQL server on 127.0.0.1 for the tests (conftest's session fixture
`pg_cluster` starts one per test session), and empty databases inside it."""

from __future__ import annotations

import glob
import os
import shutil
import socket
import subprocess
import tempfile
from pathlib import Path


def server_binaries() -> str | None:
    """The newest /usr/lib/postgresql/*/bin holding initdb, or None."""
    found = sorted(glob.glob("/usr/lib/postgresql/*/bin/initdb"))
    return os.path.dirname(found[-1]) if found else None


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


class Cluster:
    """A throwaway PostgreSQL server: its URL, and a way to stop and start it again."""

    def __init__(self, bin_dir: str, base: Path, run_as: list[str], port: int):
        self.bin_dir, self.base, self.run_as, self.port = bin_dir, base, run_as, port
        self.data = base / "data"
        self.url = f"postgresql+psycopg://reader@127.0.0.1:{port}/postgres"

    def pg_ctl(self, *args: str, check: bool = True) -> None:
        subprocess.run(
            [*self.run_as, f"{self.bin_dir}/pg_ctl", "-D", str(self.data), *args],
            check=check,
            capture_output=True,
        )

    def start(self) -> None:
        self.pg_ctl(
            "-w",
            "-l",
            str(self.base / "log"),
            "-o",
            f"-p {self.port} -k {self.base} -c listen_addresses=127.0.0.1",
            "start",
        )

    def stop(self, mode: str = "fast") -> None:
        self.pg_ctl("-w", "-m", mode, "stop")


def new_cluster(bin_dir: str) -> Cluster:
    """initdb a cluster in a new temporary folder (not under pytest's tmp dir: that is private
    to root, and the server runs as postgres) and start it."""
    base = Path(tempfile.mkdtemp(prefix="reader-pg-"))
    run_as = []
    if os.geteuid() == 0:  # initdb refuses to run as root
        shutil.chown(base, "postgres")
        run_as = ["runuser", "-u", "postgres", "--"]
    cluster = Cluster(bin_dir, base, run_as, _free_port())
    subprocess.run(
        [*run_as, f"{bin_dir}/initdb", "-D", str(cluster.data), "-A", "trust", "-U", "reader"],
        check=True,
        capture_output=True,
    )
    cluster.start()
    return cluster


def remove_cluster(cluster: Cluster) -> None:
    cluster.pg_ctl("-m", "immediate", "stop", check=False)
    shutil.rmtree(cluster.base, ignore_errors=True)


def empty_database(pg_url: str, name: str) -> str:
    """The URL of a new, empty database `name` on the server of `pg_url` (dropped first if there)."""
    from sqlalchemy import create_engine, text

    engine = create_engine(pg_url, isolation_level="AUTOCOMMIT")
    with engine.connect() as conn:
        conn.execute(text(f"DROP DATABASE IF EXISTS {name}"))
        conn.execute(text(f"CREATE DATABASE {name}"))
    engine.dispose()
    return pg_url.rsplit("/", 1)[0] + f"/{name}"
