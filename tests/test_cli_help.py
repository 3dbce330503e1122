"""Every command registered on `reader` (at any depth) has help text and a working --help."""

import click
import pytest
from click.testing import CliRunner

from reader.cli import cli


def walk(command: click.Command, path: tuple[str, ...] = ()):
    yield path, command
    if isinstance(command, click.Group):
        for name, sub in sorted(command.commands.items()):
            yield from walk(sub, path + (name,))


def test_every_command_has_help():
    commands = list(walk(cli))
    assert len(commands) > 3  # the group plus the registered commands
    names = {p[-1] for p, _ in commands if p}
    assert {"ingest", "papers", "rm"} <= names
    runner = CliRunner()
    for path, command in commands:
        label = "reader " + " ".join(path)
        assert (command.help or "").strip(), f"{label} has no help text"
        if path and not isinstance(command, click.Group):
            assert "Example" in command.help, f"{label}: the help text shows no example"
        result = runner.invoke(cli, [*path, "--help"])
        assert result.exit_code == 0, f"{label} --help failed: {result.output}"
        assert "Usage:" in result.output
        for param in command.params:
            if isinstance(param, click.Option) and not param.hidden:
                assert (param.help or "").strip(), f"{label} option {param.opts} has no help"


def test_every_help_agrees_with_the_guide():
    """`reader --help` and every command's `--help`, as a terminal of 100 columns or more shows
    them, stand in docs/guide/commands.md, each under its own heading and in the guide's table
    (scripts/generate_docs.py writes them there)."""
    import os
    import re
    import subprocess
    import sys

    from conftest import ROOT

    guide = (ROOT / "docs" / "guide" / "commands.md").read_text(encoding="utf-8")
    commands = list(walk(cli))
    titles = [" ".join(("reader", *path)) for path, _ in commands]
    assert re.findall(r"^## (reader.*)$", guide, re.M) == titles

    def in_guide(title: str, output: str) -> None:
        section = guide.split(f"\n## {title}\n", 1)[1]
        assert section.startswith(f"\n```\n{output}```\n"), (
            f"`{title} --help` differs from docs/guide/commands.md: run python scripts/generate_docs.py"
        )

    # the command itself, in a wide terminal (click wraps at reader's max_content_width)
    env = {**os.environ, "COLUMNS": "200"}
    shown = subprocess.run(
        [sys.executable, "-m", "reader", "--help"], env=env, capture_output=True, text=True, timeout=60
    )
    assert shown.returncode == 0, shown.stderr
    in_guide("reader", shown.stdout)
    # every command, at the same width (CliRunner would otherwise wrap at 80 columns)
    runner = CliRunner()
    for (path, _), title in zip(commands, titles, strict=True):
        result = runner.invoke(cli, [*path, "--help"], prog_name="reader", terminal_width=98)
        assert result.exit_code == 0, f"{title} --help failed: {result.output}"
        in_guide(title, result.output)
        if path:
            assert f"| [`{title}`](#" in guide, f"{title} is missing from the guide's table"


def test_id_prefixes_in_the_examples_are_long_enough_to_work():
    """`reader table 3fa9 b71c` cannot work: an id prefix needs MIN_PREFIX characters (a shorter
    one is read as a title). Every example in the commands' help, README and docs follows the
    rule, and the help that takes a paper says it."""
    import re

    from conftest import ROOT

    from reader.store.queries import MIN_PREFIX

    def short_prefixes(line: str) -> list[str]:
        words = re.findall(r"(?<![\w./:,-])[0-9a-f]{3,}(?![\w./:,-])", line)
        return [w for w in words if len(w) < MIN_PREFIX and re.search(r"[a-f]", w) and re.search(r"\d", w)]

    examples = [
        (f"reader {' '.join(path)} --help", line)
        for path, command in walk(cli)
        for line in (command.help or "").splitlines()
        if line.strip().startswith("reader ")
    ]
    for doc in [ROOT / "README.md", *sorted((ROOT / "docs").rglob("*.md"))]:
        examples += [
            (doc.name, line)
            for line in doc.read_text(encoding="utf-8").splitlines()
            if line.startswith("reader ")
        ]
    assert len(examples) > 20
    wrong = [(where, line) for where, line in examples if short_prefixes(line)]
    assert not wrong, wrong
    for path, command in walk(cli):
        words = " ".join((command.help or "").split() + [p.help or "" for p in command.params])
        if "id prefix" in words:
            assert f"{MIN_PREFIX}+ characters" in words, (
                f"reader {' '.join(path)}: say how long an id prefix must be"
            )


def test_a_short_id_prefix_is_told_how_long_it_must_be(app):
    from reader.errors import PaperNotFound
    from reader.store.queries import resolve_paper

    with (
        app.services.db() as session,
        pytest.raises(PaperNotFound, match="an id prefix needs 6 or more"),
    ):
        resolve_paper(session, "3fa9")
