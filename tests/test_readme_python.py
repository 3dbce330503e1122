"""The guide's "Use from Python" example (docs/guide/python.md) runs as written (scripted LLM,
packaged embedder)."""

from __future__ import annotations

import os
import re
import shutil
import subprocess
import sys

import pytest
from conftest import ROOT

pytestmark = pytest.mark.embedder


def readme_example() -> str:
    guide = (ROOT / "docs" / "guide" / "python.md").read_text(encoding="utf-8")
    section = guide.split("# Use from Python", 1)[1].split("\n## ", 1)[0]
    blocks = re.findall(r"```python\n(.*?)```", section, re.S)
    assert len(blocks) == 1, "the section has one runnable example"
    return blocks[0]


def test_the_readme_example_runs(tmp_path):
    (tmp_path / "papers").mkdir()
    shutil.copy(ROOT / "papers" / "sample_paper.pdf", tmp_path / "papers")
    (tmp_path / "example.py").write_text(readme_example(), encoding="utf-8")
    env = {k: v for k, v in os.environ.items() if not k.startswith("READER_")}
    env.update(READER_HOME=str(tmp_path / "home"), READER_LLM_BASE_URL="scripted:")
    run = subprocess.run(
        [sys.executable, "example.py"], cwd=tmp_path, env=env, capture_output=True, text=True, timeout=300
    )
    assert run.returncode == 0, run.stderr[-2000:]
    lines = run.stdout.splitlines()
    assert lines[0].startswith("ingested ")
    assert any(line.startswith("critique ") and "sentences unsupported" in line for line in lines)
    assert any(line.startswith("synthesis ") for line in lines)
    assert "[待验证]" in run.stdout  # the invented claim is marked
    assert any(re.search(r"\(route \w+\)", line) for line in lines)
    notes = list((tmp_path / "notes").glob("*.md"))
    assert len(notes) >= 2  # the paper's note and index.md
    assert re.search(r"\d+ LLM calls$", lines[-1])
