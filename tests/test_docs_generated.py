"""The guide's generated parts (the command reference and the settings table) are what
scripts/generate_docs.py writes from the code now, as simonw/llm checks its docs with cog."""

from __future__ import annotations

import importlib.util

import pytest
from conftest import ROOT


def generator():
    spec = importlib.util.spec_from_file_location("generate_docs", ROOT / "scripts" / "generate_docs.py")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def test_the_guide_is_what_the_code_generates():
    stale = [str(page.relative_to(ROOT)) for page in generator().stale_pages()]
    assert not stale, f"{stale} differ from the code: run python scripts/generate_docs.py and commit"


def test_only_the_text_between_the_markers_is_replaced():
    replace = generator().replace_generated
    page = "# Title\n\nby hand\n<!-- generated: x -->\nold\n<!-- end generated: x -->\nafter\n"
    assert replace(page, "x", "new\n") == (
        "# Title\n\nby hand\n<!-- generated: x -->\nnew\n<!-- end generated: x -->\nafter\n"
    )
    with pytest.raises(SystemExit, match="generated: y"):
        replace(page, "y", "new\n")
