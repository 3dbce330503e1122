"""Every setting is documented in the guide's settings table (docs/guide/configuration.md,
written by scripts/generate_docs.py) and shown by `reader config` (as datasette's
test_settings_are_documented checks its settings against its docs)."""

from __future__ import annotations

import re

from conftest import ROOT

from reader.config import SETTINGS, describe, load_settings

VARIABLE = re.compile(r"`(READER_[A-Z0-9_]+)`")


def configuration_table() -> list[str]:
    """The rows of the table under the guide's "## Settings" heading."""
    text = (ROOT / "docs" / "guide" / "configuration.md").read_text(encoding="utf-8")
    section = text.split("\n## Settings\n", 1)[1].split("\n#", 1)[0]
    return [line for line in section.splitlines() if line.startswith("| `READER_")]


def documented_variables() -> list[str]:
    """The variables the table's rows name in their first column."""
    return [name for row in configuration_table() for name in VARIABLE.findall(row.split("|")[1])]


def test_every_setting_is_in_the_guide_table():
    documented = set(documented_variables())
    missing = [s.variable for s in SETTINGS if s.variable not in documented]
    assert not missing, f"run python scripts/generate_docs.py: the guide's settings table lacks: {missing}"


def test_every_variable_in_the_guide_table_is_a_setting():
    registered = {s.variable for s in SETTINGS}
    unknown = [name for name in documented_variables() if name not in registered]
    assert not unknown, f"the guide's settings table names variables that are no setting: {unknown}"
    assert len(documented_variables()) == len(set(documented_variables())), "a variable is documented twice"


def test_reader_config_shows_every_setting(tmp_path):
    rows = describe(load_settings({"READER_HOME": str(tmp_path)}))
    assert [name for name, _ in rows] == [s.variable for s in SETTINGS]
    assert all(value for _, value in rows)


def test_every_setting_has_help():
    assert all(s.declaration.help.strip() for s in SETTINGS)
