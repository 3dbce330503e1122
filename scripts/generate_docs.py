"""Write the guide's generated parts from the code, the way simonw/llm keeps its docs with cog:

- docs/guide/commands.md: a table of every `reader` command and the full `--help` of each,
  from the click command tree (reader.cli.cli);
- docs/guide/configuration.md: the settings table, from the settings registry
  (reader.config.SETTINGS): each variable, its config file key, what it does (the setting's
  help) and its default (what `reader config` shows when nothing is set).

Only the text between a `<!-- generated: NAME -->` line and its `<!-- end generated: NAME -->`
line is rewritten; the rest of each page is written by hand.

    python scripts/generate_docs.py           # rewrite the generated parts
    python scripts/generate_docs.py --check   # exit 1 when a page differs from the code

tests/test_docs_generated.py runs the check, so a changed help text or setting fails CI until
this script has been run and its output committed.
"""

from __future__ import annotations

import argparse
import re
import sys
from pathlib import Path

import click

ROOT = Path(__file__).resolve().parent.parent
GUIDE = ROOT / "docs" / "guide"
COMMANDS_PAGE = GUIDE / "commands.md"
CONFIGURATION_PAGE = GUIDE / "configuration.md"

# `reader --help` in a terminal of 100 columns or more: click wraps at its max_content_width
# (100, reader.cli.CONTEXT_SETTINGS) less 2
HELP_WIDTH = 98
# the home `reader config` shows by default; a placeholder keeps the page the same on every machine
DEFAULT_HOME = "~/.local/share/reader"
_HOME_PLACEHOLDER = "/reader-home-placeholder"


def command_tree(command: click.Command, path: tuple[str, ...] = ()):
    """(path, command) for the command and every command under it, sorted by name."""
    yield path, command
    if isinstance(command, click.Group):
        for name, sub in sorted(command.commands.items()):
            yield from command_tree(sub, path + (name,))


def help_text(root: click.Command, path: tuple[str, ...]) -> str:
    """What `reader PATH... --help` prints, without running the group's callback."""
    context = click.Context(root, info_name="reader", terminal_width=HELP_WIDTH, **root.context_settings)
    command = root
    for name in path:
        command = command.commands[name]
        context = click.Context(command, info_name=name, parent=context, **command.context_settings)
    return context.get_help() + "\n"


def summary(command: click.Command) -> str:
    """The help text's first paragraph on one line."""
    first = (command.help or "").strip().split("\n\n", 1)[0]
    return " ".join(first.replace("\b", "").split())


def cell(text: str) -> str:
    return text.replace("|", "\\|")


def anchor(title: str) -> str:
    """GitHub's anchor for a heading."""
    return re.sub(r"[^\w\- ]", "", title.lower()).replace(" ", "-")


def commands_text(root: click.Command) -> str:
    commands = list(command_tree(root))
    lines = ["| command | what it does |", "|---|---|"]
    for path, command in commands[1:]:
        title = "reader " + " ".join(path)
        lines.append(f"| [`{title}`](#{anchor(title)}) | {cell(summary(command))} |")
    for path, command in commands:
        title = " ".join(("reader", *path))
        lines += ["", f"## {title}", "", "```", help_text(root, path).rstrip("\n"), "```"]
    return "\n".join(lines) + "\n"


def settings_text() -> str:
    from reader.config import SETTINGS, describe, load_settings

    # what `reader config` shows with nothing set, in the registry's order
    defaults = describe(load_settings({"READER_HOME": _HOME_PLACEHOLDER}))
    lines = ["| variable | config file key | what it sets | default |", "|---|---|---|---|"]
    for entry, (_, shown) in zip(SETTINGS, defaults, strict=True):
        key = f"`{entry.name}`" if entry.declaration.in_file else "(environment only)"
        meaning = " ".join(entry.declaration.help.split())
        default = shown.replace(_HOME_PLACEHOLDER, DEFAULT_HOME)
        lines.append(f"| `{entry.variable}` | {key} | {cell(meaning)} | {cell(default)} |")
    return "\n".join(lines) + "\n"


def replace_generated(page: str, name: str, body: str) -> str:
    """The page with the text between its markers for `name` replaced by `body`."""
    begin, end = f"<!-- generated: {name} -->\n", f"<!-- end generated: {name} -->"
    if page.count(begin) != 1 or page.count(end) != 1:
        raise SystemExit(f"the page needs one {begin.strip()} line and one {end} line")
    head, rest = page.split(begin)
    return head + begin + body + end + rest.split(end, 1)[1]


def generated_pages() -> dict[Path, str]:
    """Each generated page as it should read now."""
    from reader.cli import cli

    return {
        COMMANDS_PAGE: replace_generated(
            COMMANDS_PAGE.read_text(encoding="utf-8"), "commands", commands_text(cli)
        ),
        CONFIGURATION_PAGE: replace_generated(
            CONFIGURATION_PAGE.read_text(encoding="utf-8"), "settings", settings_text()
        ),
    }


def stale_pages() -> list[Path]:
    """The pages whose generated parts differ from the code."""
    return [page for page, text in generated_pages().items() if page.read_text(encoding="utf-8") != text]


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--check", action="store_true", help="exit 1 when a page differs; write nothing")
    args = parser.parse_args()
    if args.check:
        stale = stale_pages()
        for page in stale:
            print(f"{page.relative_to(ROOT)} differs from the code: run python scripts/generate_docs.py")
        return 1 if stale else 0
    for page, text in generated_pages().items():
        if page.read_text(encoding="utf-8") != text:
            page.write_text(text, encoding="utf-8")
            print(f"wrote {page.relative_to(ROOT)}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
