"""`reader table`: the extraction table across papers, on the terminal and as CSV."""

from __future__ import annotations

from pathlib import Path

import click

from reader.commands.output import echo_json, for_terminal


@click.command("table")
@click.argument("papers", nargs=-1, required=True)
@click.option(
    "--csv",
    "csv_file",
    type=click.Path(dir_okay=False, path_type=Path),
    metavar="FILE",
    help="Also write the table to FILE as CSV (UTF-8 with a BOM, so spreadsheets read Chinese text): "
    "one line per paper; for each column its value, verdict, pages and source passage.",
)
@click.option(
    "--json", "as_json", is_flag=True, help="Print the table as JSON: columns, and per paper its cells."
)
@click.option(
    "--column",
    "columns",
    multiple=True,
    metavar="ITEM",
    help="Add an item of the rigour checklist as a column (repeatable): metrics, ablations, variance, "
    "runs, hyperparameters, compute, code, data, limitations, ethics, contributions.",
)
@click.option(
    "--ask",
    "questions",
    multiple=True,
    metavar="QUESTION",
    help="Add a column of your own (repeatable, at most 5): the question is asked of every paper with "
    "the question pipeline (`reader ask`), and its answer audited against the passages it cites.",
)
@click.pass_obj
def table(app, papers, csv_file, as_json, columns, questions):
    """An extraction table of the chosen papers: for each, the task, the datasets and their
    sizes, the method, the baselines and the headline result, and the columns you add.

    Method and headline result come from the paper's abstract where a sentence of it says what
    the paper proposes or gives a figure with an outcome, else from the paper's stored synthesis
    (`reader read` or `reader review` first); the task from the synthesis's Problem where it names
    the problem or goal, else from the abstract's sentence saying what is missing or hard; the
    datasets' sizes and the baselines from the paper's rigour
    checklist (stored by the read, else found by its rules: a size of data in a sentence about
    data, a sentence that names the baselines compared). Every cell names the passage and page
    it rests on and is audited like any sentence of an analysis: one the paper does not support
    is shown with [待验证].

    PAPERS are paper ids, id prefixes (6+ characters) or title prefixes (`reader papers` lists them).

    \b
    Examples:
      reader table 3fa9c2 b71c0e --csv table.csv
      reader table "Attention Is All" --json
      reader table 3fa9c2 b71c0e --column variance --column code --ask "Which languages are the data in?"
    """
    from reader.errors import ReaderError

    result = app.library.extraction_table(papers, columns=columns, questions=questions)
    if csv_file is not None:
        try:
            csv_file.write_text(result.to_csv(), encoding="utf-8-sig", newline="")
        except OSError as exc:
            raise ReaderError(
                f"{csv_file}: cannot write the table ({exc.strerror}); give a file in a folder you can write"
            ) from None
    if as_json:
        echo_json(result.to_json())
        return
    for row in result.rows:
        click.echo(for_terminal(f"{row.title or row.paper_id[:12]}  ({row.paper_id[:12]})"))
        for key, heading in result.columns:
            cell = row.cells.get(key)
            if cell is None:
                continue
            where = f"  ({cell.pages})" if cell.pages else ""
            click.echo(for_terminal(f"  {heading}: {cell.shown or '–'}{where}"))
        for note in row.notes:
            click.echo(for_terminal(f"  note: {note}"))
        click.echo("")
    marked = result.n_marked
    click.echo(
        f"{len(result.rows)} papers · {marked} cell{'s' if marked != 1 else ''} without support ([待验证])"
    )
    if csv_file is not None:
        click.echo(for_terminal(f"wrote {csv_file}"))
