"""The `reader` command: a thin layer that parses arguments, calls the façade (reader.facade.Reader) and prints.

Command modules live in reader/commands/ and keep heavy imports inside their
functions so `reader --help` stays instant.
"""

from __future__ import annotations

import sys

import click

from reader.commands.output import for_terminal
from reader.errors import ReaderError, describe_error, is_disk_full

CONTEXT_SETTINGS = {"help_option_names": ["-h", "--help"], "max_content_width": 100}


class ReaderGroup(click.Group):
    def invoke(self, ctx):
        try:
            return super().invoke(ctx)
        except ReaderError as exc:  # a file's or a title's control characters shown escaped
            raise click.ClickException(for_terminal(str(exc))) from exc
        except Exception as exc:
            if not is_disk_full(exc):
                raise
            # a full disk wherever it struck (the database, a file): one line, not a traceback
            home = getattr(getattr(ctx.obj, "settings", None), "home", None)
            where = f"under READER_HOME ({home})" if home else "under READER_HOME"
            raise click.ClickException(
                f"the disk is full {where} ({describe_error(exc)}); free some space and run the command again"
            ) from exc


@click.group(cls=ReaderGroup, context_settings=CONTEXT_SETTINGS)
@click.version_option(package_name="audited-reader")
@click.option(
    "--no-cache",
    is_flag=True,
    help="Ask the LLM again instead of reusing cached answers (fresh answers refresh the cache).",
)
@click.pass_context
def cli(ctx, no_cache):
    """Read academic papers deeply and audit every sentence written about them.

    \b
    Examples:
      reader ingest papers/                 # parse PDFs into the library
      reader papers                         # list what is stored
      reader search "baseline comparison"   # evidence search over the library
      reader config                         # show the effective settings

    Data lives in READER_HOME (default ~/.local/share/reader); see `reader config`.
    """
    from reader.facade import Reader

    ctx.obj = Reader(
        use_cache=False if no_cache else None,
        on_notice=lambda message: click.echo(for_terminal(f"note: {message}"), err=True),
    )


@cli.command("config")
@click.option("--json", "as_json", is_flag=True, help="Print the settings as JSON.")
@click.pass_obj
def config_cmd(app, as_json):
    """Show the effective settings (secrets masked).

    \b
    Example:
      READER_LLM_BASE_URL=http://127.0.0.1:8080/v1 reader config
    """
    import json

    from reader.config import describe

    rows = describe(app.settings)
    if as_json:
        click.echo(json.dumps(dict(rows), indent=2, ensure_ascii=False))
        return
    width = max(len(name) for name, _ in rows)
    for name, value in rows:
        click.echo(f"{name.ljust(width)}  {value}")


def _register_commands() -> None:
    from reader.commands import ALL_COMMANDS

    for command in ALL_COMMANDS():
        cli.add_command(command)


_register_commands()


def main() -> None:
    try:
        cli(prog_name="reader")
    except KeyboardInterrupt:
        click.echo("Interrupted.", err=True)
        sys.exit(130)
