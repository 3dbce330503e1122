"""The wheel is complete: built, installed into a fresh virtual environment and run from outside the checkout.

An editable install reads prompts/, migrations/ and the web templates straight from the
checkout, so only a real wheel shows whether they ship. The test builds one from a copy of
the sources, checks its file list, installs it with `pip install --no-deps --no-index` into a
new venv, then runs that venv's `reader review` (scripted LLM, packaged embedder) on the
sample paper and its `reader serve`, and reads /library.

The new venv sees the dependencies through --system-site-packages and, when the tests run in
a venv themselves, through a .pth line naming this venv's site-packages. A bare path line does
not run that directory's own .pth files, so the editable install's finder stays out and the
venv's `reader` is the installed copy (asserted).
"""

from __future__ import annotations

import os
import queue
import re
import shutil
import site
import subprocess
import sys
import sysconfig
import threading
import tomllib
import urllib.request
import venv
import zipfile
from pathlib import Path

import pytest
from conftest import ROOT
from markupsafe import escape
from sqlalchemy import create_engine, text

pytestmark = pytest.mark.embedder  # `reader review` loads the packaged embedding model

SAMPLE_PAPER = ROOT / "papers" / "sample_paper.pdf"
SERVE_LINE = re.compile(r"serving on (http://\S+?)/? ")


def _copy_sources(dest: Path) -> None:
    """What the build reads: pyproject.toml, the readme, reader/ and the directories mapped into it."""
    config = tomllib.loads((ROOT / "pyproject.toml").read_text())
    mapped = config["tool"]["setuptools"].get("package-dir", {}).values()
    dest.mkdir()
    shutil.copy2(ROOT / "pyproject.toml", dest)
    shutil.copy2(ROOT / config["project"]["readme"], dest)
    for name in ["reader", *mapped]:
        shutil.copytree(ROOT / name, dest / name, ignore=shutil.ignore_patterns("__pycache__", "*.pyc"))


def _build_wheel(tmp: Path) -> Path:
    src, out = tmp / "src", tmp / "dist"
    _copy_sources(src)
    subprocess.run(
        [
            sys.executable,
            "-m",
            "pip",
            "wheel",
            "--no-deps",
            "--no-build-isolation",
            "--no-index",
            "-q",
            "-w",
            str(out),
            str(src),
        ],
        check=True,
        cwd=tmp,
    )
    (wheel,) = out.glob("audited_reader-*.whl")
    return wheel


def _expected_files() -> set[str]:
    """Every file the installed package needs, named as it lies in the wheel."""
    expected = {
        f"{p.parent.relative_to(ROOT).as_posix()}/__init__.py" for p in (ROOT / "reader").rglob("__init__.py")
    }  # every subpackage
    expected |= {f"reader/_prompts/{p.name}" for p in (ROOT / "prompts").glob("*.j2")}
    expected |= {
        f"reader/_migrations/{p.relative_to(ROOT / 'migrations').as_posix()}"
        for p in [
            ROOT / "migrations" / "env.py",
            ROOT / "migrations" / "script.py.mako",
            *(ROOT / "migrations" / "versions").glob("*.py"),
        ]
    }
    for folder in ["reader/web/templates", "reader/web/static", "reader/export/templates"]:
        expected |= {
            p.relative_to(ROOT).as_posix()
            for p in (ROOT / folder).rglob("*")
            if p.is_file() and "__pycache__" not in p.parts
        }
    return expected


def _make_venv(path: Path) -> Path:
    venv.EnvBuilder(system_site_packages=True, with_pip=False).create(path)
    python = path / "bin" / "python"
    if sys.prefix != sys.base_prefix:  # the dependencies live in this test venv
        inner = subprocess.run(
            [str(python), "-c", "import sysconfig; print(sysconfig.get_path('purelib'))"],
            check=True,
            capture_output=True,
            text=True,
        ).stdout.strip()
        outer = dict.fromkeys(
            [sysconfig.get_path("purelib"), sysconfig.get_path("platlib"), *site.getsitepackages()]
        )
        Path(inner, "_test_dependencies.pth").write_text("".join(f"{p}\n" for p in outer))
    return python


def _clean_env(home: Path) -> dict[str, str]:
    env = {
        k: v
        for k, v in os.environ.items()
        if not k.startswith(("READER_", "PYTHON", "VIRTUAL_ENV", "__PYVENV"))
    }
    env.update({"READER_HOME": str(home), "READER_LLM_BASE_URL": "scripted:"})
    return env


def _get(url: str) -> tuple[int, str]:
    with urllib.request.urlopen(url, timeout=30) as response:
        return response.status, response.read().decode()


def test_wheel_installs_and_runs_outside_the_checkout(tmp_path):
    wheel = _build_wheel(tmp_path)
    names = set(zipfile.ZipFile(wheel).namelist())
    missing = sorted(_expected_files() - names)
    assert not missing, (
        f"the wheel lacks {missing}; a new subpackage of reader belongs in "
        f"[tool.setuptools] packages in pyproject.toml"
    )

    python = _make_venv(tmp_path / "venv")
    subprocess.run(
        [
            sys.executable,
            "-m",
            "pip",
            "--python",
            str(python),
            "install",
            "-q",
            "--no-deps",
            "--no-index",
            str(wheel),
        ],
        check=True,
        cwd=tmp_path,
    )
    work = tmp_path / "work"  # cwd and READER_HOME: outside the checkout
    work.mkdir()
    env = _clean_env(work)

    where = subprocess.run(
        [
            str(python),
            "-c",
            (
                "import reader, reader.resources as r; "
                "print(reader.__file__); print(r.prompts_dir()); print(r.migrations_dir())"
            ),
        ],
        check=False,
        cwd=work,
        env=env,
        capture_output=True,
        text=True,
    )
    assert where.returncode == 0, where.stderr
    where = where.stdout.split("\n")
    venv_dir = (tmp_path / "venv").resolve()
    for found in where[:3]:
        assert Path(found).resolve().is_relative_to(venv_dir), f"{found} is not the installed copy"

    reader = str(tmp_path / "venv" / "bin" / "reader")
    review = subprocess.run(
        [reader, "review", str(SAMPLE_PAPER)],
        check=False,
        cwd=work,
        env=env,
        capture_output=True,
        text=True,
        timeout=300,
    )
    assert review.returncode == 0, review.stdout + review.stderr
    assert "1 reviewed" in review.stdout and "0 failed" in review.stdout, review.stdout

    engine = create_engine(f"sqlite:///{work / 'reader.db'}")
    try:
        with engine.connect() as conn:
            (title,) = conn.execute(text("SELECT title FROM papers")).one()
    finally:
        engine.dispose()

    server = subprocess.Popen(
        [reader, "serve", "--port", "0"],
        cwd=work,
        env=env,
        stdout=subprocess.DEVNULL,
        stderr=subprocess.PIPE,
        text=True,
    )
    lines: queue.Queue[str | None] = queue.Queue()

    def pump():
        for line in server.stderr:
            lines.put(line)
        lines.put(None)  # the server closed its stderr: it has exited

    threading.Thread(target=pump, daemon=True).start()
    try:
        seen: list[str] = []
        while not (match := SERVE_LINE.search(seen[-1] if seen else "")):
            try:
                line = lines.get(timeout=60)
            except queue.Empty:
                line = None
            if line is None:
                pytest.fail(f"`reader serve` did not say where it listens: {''.join(seen)}")
            seen.append(line)
        base = match.group(1)
        status, page = _get(f"{base}/library")
        assert status == 200
        assert str(escape(title)) in page, f"{title!r} is not listed on /library"
        status, css = _get(f"{base}/static/style.css")
        assert status == 200 and css.strip()
    finally:
        server.terminate()
        try:
            server.wait(timeout=15)
        except subprocess.TimeoutExpired:
            server.kill()
            server.wait()
