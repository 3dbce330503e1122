"""`reader figures`: a paper's figures written out as PNG files (reader.export.figures)."""

from __future__ import annotations

import click

from reader.commands.output import echo_json, for_terminal


@click.command("figures")
@click.argument("paper")
@click.option(
    "--out",
    "out_dir",
    type=click.Path(file_okay=False),
    default=None,
    help="Folder to write the PNG files to (made if missing; default: the current folder).",
)
@click.option("--json", "as_json", is_flag=True, help="Print the figures and their files as JSON.")
@click.pass_obj
def figures(app, paper, out_dir, as_json):
    """Write a paper's figures as PNG files, one per figure caption ingest found a picture for.

    Each file is named as the exported note names it (<slug>-<sha8>-figure-3.png); papers
    ingested before figures were read have none until ingested again.

    \b
    Examples:
      reader figures specter --out figs/
      reader figures f4b6d4e5 --json
    """
    written = app.paper(paper).figures(out_dir)
    if as_json:
        echo_json(written.to_json())
        return
    click.echo(for_terminal(f"{written.title}  ({written.paper_id[:12]})"))
    if not written.figures:
        click.echo(
            "no figures stored (a paper ingested before figures were read: `reader rm`, then ingest it)"
        )
        return
    for f in written.figures:
        caption = " ".join(f["caption"].split())
        click.echo(for_terminal(f"{f['label']:<10} p. {f['page']:<3} {f['file']}  {caption[:90]}"))
    click.echo(f"{len(written.figures)} figures written to {written.out_dir}")
