"""`reader ingest`, `reader papers` and `reader rm`."""

from __future__ import annotations

import sys
from pathlib import Path

import click

from reader.commands.output import echo_json, printable, table_cell, zotero_options


def _result_line(result) -> str:
    """One line per file: the file's name for a stored one, the path as given for an error."""
    if result.status in ("error", "skipped"):
        return f"{result.status}: {printable(result.file)}: {result.error}"
    name = printable(Path(result.file).name)
    line = f"{result.status:<9} {name}  {result.title[:70]!r} ({result.pages} pages, {result.chunks} chunks)"
    if result.error:  # stored, but a later step (the index) complained
        line += f"\n          warning: {result.error}"
    return line


@click.command("ingest")
@click.argument("paths", nargs=-1, type=click.Path(path_type=str))
@zotero_options("Ingest")
@click.option(
    "--json",
    "as_json",
    is_flag=True,
    help='One JSON object per file: {"file", "paper_id", "status", "error", "title", "pages", "chunks"}.',
)
@click.option("--quiet", "-q", is_flag=True, help="No progress bar and no per-file lines; errors only.")
@click.pass_obj
def ingest(app, paths, zotero, collection, as_json, quiet):
    """Parse PDFs (and .txt/.md files) into the library: text in reading order,
    sections, captions, references, and passages for evidence search.

    PATHS are files or folders (searched recursively). A paper is identified by
    the sha256 of its bytes, so ingesting the same file again changes nothing.
    A file that cannot be read is reported and skipped; the exit status is 1 if
    any file failed. With --zotero, the PDFs come from a Zotero library instead
    (read from a copy of zotero.sqlite); an item without a usable PDF is one
    "skipped" line.

    \b
    Examples:
      reader ingest papers/sample_paper.pdf
      reader ingest ~/papers/ --json > ingest.jsonl
      reader ingest --zotero --collection "Thesis"
      reader ingest --zotero /data/Zotero
    """
    from reader.errors import ReaderError

    if zotero is None and collection:
        raise ReaderError("--collection chooses a Zotero collection: use it with --zotero")
    if zotero is not None and paths:
        raise ReaderError("give PATHS or --zotero, not both (the Zotero folder goes after --zotero)")
    if zotero is None and not paths:
        raise ReaderError("give files or folders to ingest, or --zotero for a Zotero library")
    lines = _IngestLines(as_json, quiet)
    try:
        if zotero is not None:
            results = app.library.ingest_zotero(
                zotero or None, collection, on_result=lines.report, on_note=lines.note
            )
        else:
            results = app.ingest(paths, on_result=lines.report, before_file=lines.before_file)
    finally:
        lines.stop()
    failed = sum(1 for r in results if r.status == "error")
    if not as_json and not quiet and len(results) > 1:
        counts = {s: sum(1 for r in results if r.status == s) for s in ("ingested", "unchanged", "skipped")}
        click.echo(
            f"{counts['ingested']} ingested, {counts['unchanged']} unchanged, {failed} failed"
            + (f", {counts['skipped']} Zotero items skipped" if counts["skipped"] else "")
        )
    if not results:
        where = "in the Zotero library" if zotero is not None else f"under {', '.join(paths)}"
        click.echo(f"error: no .pdf, .txt or .md files {where}", err=True)
        sys.exit(1)
    if failed:
        sys.exit(1)


class _IngestLines:
    """What `reader ingest` prints as it goes: a line (or JSON line) per file, and a rich
    progress bar while two or more files are ingested."""

    def __init__(self, as_json: bool, quiet: bool):
        self.as_json, self.quiet = as_json, quiet
        self.bar = None

    def before_file(self, source, n_files) -> None:
        if self.bar is None and n_files > 1 and not self.as_json and not self.quiet:
            from rich.console import Console
            from rich.progress import BarColumn, MofNCompleteColumn, Progress, TextColumn, TimeElapsedColumn

            columns = [
                TextColumn("ingest"),
                BarColumn(),
                MofNCompleteColumn(),
                TimeElapsedColumn(),
                TextColumn("{task.description}"),
            ]
            self.bar = Progress(*columns, console=Console(stderr=True), transient=True)
            self.bar.start()
            self.bar.add_task("", total=n_files)
        if self.bar is not None:
            self.bar.update(self.bar.task_ids[0], description=printable(source.name)[:40])

    def report(self, result, done, total) -> None:
        if self.as_json:
            echo_json(result.to_json(), indent=None)
        elif result.status in ("error", "skipped"):
            click.echo(_result_line(result), err=True)
        elif not self.quiet:
            click.echo(_result_line(result))
        if self.bar is not None:
            self.bar.advance(self.bar.task_ids[0])

    def note(self, line: str) -> None:
        click.echo(f"note: {line}", err=True)

    def stop(self) -> None:
        if self.bar is not None:
            self.bar.stop()


@click.command("papers")
@click.option(
    "--json",
    "as_json",
    is_flag=True,
    help="Print a JSON array of {id, title, authors, year, pages, chunks, language, source_path, "
    "ingested_at, status, apart}; apart: what tells a paper from others of its title.",
)
@click.pass_obj
def papers(app, as_json):
    """List the papers in the library with their review status.

    Papers of one title (two versions, the same paper downloaded twice) and a
    near-duplicate whose review was skipped say under the title what tells
    them apart: file name, pages, year, date added, where the text first
    differs, "near-duplicate of …" and the id.

    \b
    Example:
      reader papers
      reader papers --json | jq -r '.[].title'
    """
    rows = [p.to_json() for p in app.papers()]
    if as_json:
        echo_json(rows)
        return
    if not rows:
        click.echo("No papers yet. Add some with: reader ingest papers/")
        return
    from rich.console import Console
    from rich.table import Table

    table = Table(box=None, pad_edge=False)
    for name, justify in (
        ("id", "left"),
        ("title", "left"),
        ("pages", "right"),
        ("chunks", "right"),
        ("status", "left"),
    ):
        table.add_column(name, justify=justify, overflow="fold" if name == "title" else "ellipsis")
    for row in rows:
        title = table_cell(row["title"]) + (
            f"\n  [dim]{table_cell(row['apart'])}[/dim]" if row["apart"] else ""
        )
        table.add_row(row["id"][:12], title, str(row["pages"]), str(row["chunks"]), row["status"])
    Console(width=max(100, Console().width), soft_wrap=False).print(table)


@click.command("rm")
@click.argument("paper")
@click.option("--yes", "-y", is_flag=True, help="Do not ask for confirmation.")
@click.pass_obj
def rm(app, paper, yes):
    """Remove a paper and everything derived from it (passages, analyses,
    verdicts, answers, index rows). PAPER is an id, id prefix (6+ characters),
    file path or title prefix.

    \b
    Example:
      reader rm 8bbf99a4e2d9 --yes
    """
    found = app.paper(paper)
    if not yes:
        title = found.info.title
        click.confirm(
            f"Remove {found.id[:12]} {title!r} and everything derived from it?", abort=True, err=True
        )
    removed = found.remove()
    click.echo(f"removed {removed.id[:12]} {removed.title!r}")
