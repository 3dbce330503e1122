"""Every command registered on `reader` (at any depth) has help text and a working --help."""

import click
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
