"""`reader zotero-note`: the audited note back into Zotero, as a child note of the paper's item."""

from __future__ import annotations

import sys

import click

from reader.commands.output import echo_json, for_terminal


@click.command("zotero-note")
@click.argument("papers", nargs=-1)
@click.option("--json", "as_json", is_flag=True, help="Print one row per paper as JSON.")
@click.pass_obj
def zotero_note(app, papers, as_json):
    """Write the audited note of papers from Zotero into Zotero, as a child note of each item.

    The note holds the critique and synthesis with their 待验证 marks, your judgements, the
    follow-up questions and your highlights. Written through Zotero's web API: set
    READER_ZOTERO_LIBRARY (users/ID or groups/ID) and READER_ZOTERO_API_KEY (a key with write
    access). Writing again updates the note, unless it was edited in Zotero since. No PAPERS:
    every paper that came from Zotero.

    \b
    Examples:
      reader zotero-note specter
      READER_ZOTERO_LIBRARY=users/123456 reader zotero-note --json
    """
    report = app.library.zotero_note(list(papers) or None)
    if as_json:
        echo_json(report.to_json())
    else:
        for row in report.rows:
            line = f"{row.status:<8} {row.paper_id[:12]} {row.title[:60]!r}"
            line += f" note {row.note_key}" if row.note_key else ""
            line += f": {row.detail}" if row.detail else ""
            click.echo(for_terminal(line), err=row.status == "error")
    if any(row.status == "error" for row in report.rows):
        sys.exit(1)
