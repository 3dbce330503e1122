"""`reader cites` and `reader cited-by`: the citation graph of the library (reader.ingest.links)."""

from __future__ import annotations

import click

from reader.commands.output import echo_json, for_terminal


def _print(found) -> None:
    click.echo(for_terminal(f"{found.title}  ({found.paper_id[:12]})"))
    if found.direction == "cites":
        click.echo(
            f"{len(found.entries)} reference entries, {len(found.in_library)} of them in the library\n"
        )
    else:
        click.echo(f"cited by {len(found.entries)} reference entries of the library\n")
    for e in found.entries:
        if found.direction == "cites":
            where = (
                f"  → in the library: {e.cited_title} ({e.cited_id[:12]}, by {e.matched_by})"
                if e.cited_id
                else ""
            )
            line = f"{e.marker or '-'} p. {e.page}: {e.text[:200]}{where}"
        else:
            line = f"{e.citing_title} ({e.citing_id[:12]}) {e.marker or ''} p. {e.page}: {e.text[:160]}"
        click.echo(for_terminal(line))
    if found.external:
        click.echo("\nOutside the library:")
        for w in found.external:
            year = f", {w['year']}" if w.get("year") else ""
            click.echo(for_terminal(f"  [{w['source']}] {w['title']}{year} {w.get('url') or ''}"))
    for note in found.notes:
        click.echo(for_terminal(f"note: {note}"), err=True)


@click.command("cites")
@click.argument("paper")
@click.option("--json", "as_json", is_flag=True, help="Print the entries as JSON.")
@click.pass_obj
def cites(app, paper, as_json):
    """List what a paper cites: its reference entries, each with the library paper it names.

    An entry is matched to a library paper by its DOI, else by the paper's title.

    \b
    Examples:
      reader cites specter
      reader cites f4b6d4e5 --json
    """
    found = app.paper(paper).cites()
    if as_json:
        echo_json(found.to_json())
    else:
        _print(found)


@click.command("cited-by")
@click.argument("paper")
@click.option(
    "--external",
    metavar="NAMES",
    help="Also ask these services which works cite the paper (by its DOI): semantic-scholar, openalex "
    "(comma-separated), or off. Sends the DOI to them. Default: READER_EXTERNAL_SEARCH (off).",
)
@click.option("--json", "as_json", is_flag=True, help="Print the entries as JSON.")
@click.pass_obj
def cited_by(app, paper, external, as_json):
    """List what cites a paper: the reference entries of the library's papers that name it.

    \b
    Examples:
      reader cited-by "Construction of the Literature Graph"
      reader cited-by specter --external openalex --json
    """
    found = app.paper(paper).cited_by(external=external)
    if as_json:
        echo_json(found.to_json())
    else:
        _print(found)
