"""`reader import`: papers by DOI, arXiv id or URL, or from a RIS/BibTeX file."""

from __future__ import annotations

import sys

import click

from reader.commands.output import echo_json, for_terminal


@click.command("import")
@click.argument("items", nargs=-1, required=True)
@click.option(
    "--services",
    metavar="NAMES",
    help="Where the metadata and the open-access PDF may be fetched: arxiv, openalex, unpaywall, crossref "
    "(comma-separated), or off. Sends the identifier to them. Default: READER_IMPORT_SERVICES (off).",
)
@click.option("--json", "as_json", is_flag=True, help="One JSON object per paper imported.")
@click.pass_obj
def import_cmd(app, items, services, as_json):
    """Bring papers in by identifier: a DOI, an arXiv id or URL, or a .bib/.ris file of references.

    An entry of a .bib/.ris file that names a PDF on this machine is ingested from it; otherwise,
    with services allowed, the open-access PDF they point to is fetched (arXiv for an arXiv id;
    OpenAlex, Unpaywall for a DOI); when none is found the title and abstract are stored as the
    paper's text, and its row says so. Nothing leaves the machine unless services are allowed.

    \b
    Examples:
      reader import library.bib
      reader import 10.18653/v1/2020.acl-main.207 --services openalex,unpaywall
      reader import https://arxiv.org/abs/1706.03762 --services arxiv
    """
    report = app.library.import_papers(list(items), services=services)
    for row in report.rows:
        if as_json:
            echo_json(row.to_json(), indent=None)
        elif row.error:
            click.echo(for_terminal(f"error: {row.source}: {row.error}"), err=True)
        else:
            where = {"file": "from its file", "metadata": "title and abstract only"}.get(
                row.pdf, f"PDF from {row.pdf}"
            )
            click.echo(for_terminal(f"{row.status:<9} {row.paper_id[:12]} {row.title[:70]!r} ({where})"))
        if not as_json:
            for note in row.notes:
                click.echo(for_terminal(f"note: {row.source}: {note}"), err=True)
    if any(row.error for row in report.rows):
        sys.exit(1)
