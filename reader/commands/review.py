"""`reader review` (review a collection on this machine, resumable: queued, then worked off by
in-process workers; or only queued for `reader worker` with --queue) and `reader export`
(Markdown notes)."""

from __future__ import annotations

import os
import sys
import threading
from pathlib import Path

import click

from reader.commands.output import echo_json, for_terminal, printable, table_cell, zotero_options
from reader.commands.progress import ProgressPrinter, duration
from reader.errors import ReaderError


def print_enqueued(report) -> None:
    """One line per file that was not simply queued, then the counts."""
    for row in report.rows:
        if row.status in ("queued", "requeued"):
            continue
        where = "error" if row.status == "error" else "skipped"
        click.echo(
            f"{where}: {printable(row.source)}: {row.status}{': ' + row.detail if row.detail else ''}",
            err=True,
        )
    data = report.to_json()
    click.echo(
        f"Queued {data['queued']} paper{'s' * (data['queued'] != 1)} "
        f"({data['already_queued']} already queued or running, {data['skipped']} skipped, "
        f"{data['failed']} failed). Start `reader worker` on any machine sharing "
        f"READER_DATABASE_URL; `reader jobs` shows the queue."
    )


NEAR_DUPLICATE = "near-duplicate"  # a version of a reviewed paper: its review skipped
_NO_FIGURES_STATUS = {
    "error": "[red]error[/red]",
    "removed": "[yellow]removed[/yellow]",
    NEAR_DUPLICATE: "[cyan]near-duplicate[/cyan]",
}


def print_table(report) -> None:
    from rich.console import Console
    from rich.table import Table

    console = Console(highlight=False, width=None if sys.stdout.isatty() else 132)
    twins = len(report.by_status(NEAR_DUPLICATE))
    table = Table(
        title=f"Review: {len(report.by_status('reviewed'))} reviewed, "
        f"{len(report.by_status('skipped'))} already done, "
        + (f"{twins} near-duplicate{'s' * (twins != 1)} not reviewed, " if twins else "")
        + f"{len(report.failed)} failed · {duration(report.seconds)}"
    )
    # 132 columns when piped: the paper's name gives way to the figures.
    table.add_column("Paper", overflow="ellipsis", no_wrap=True, max_width=34)
    # "unanswered" is what earlier versions recorded; its column only when a stored review has it
    with_unanswered = any(row.unanswered for row in report.papers)
    names = ("Sentences", "Flagged", "Unchecked") + (("Unanswered",) if with_unanswered else ())
    for name in names + ("Regens", "LLM calls", "Time"):
        table.add_column(name, justify="right", no_wrap=True, min_width=len(name))
    table.add_column("Status", no_wrap=True, min_width=8)
    for row in report.papers:
        name = table_cell(row.title or printable(Path(row.source).name))
        if row.status in ("error", "removed", "busy", NEAR_DUPLICATE):  # nothing read: no figures
            blank = [""] * (len(names) + 2)
            table.add_row(name, *blank, duration(row.seconds), _NO_FIGURES_STATUS.get(row.status, row.status))
            continue
        unchecked = f"[yellow]{row.unchecked}[/yellow]" if row.unchecked else "0"
        table.add_row(
            name,
            str(row.sentences),
            f"{row.flagged} ({row.final_ratio:.1%})",
            unchecked,
            *([str(row.unanswered)] if with_unanswered else []),
            str(row.regenerations),
            str(row.llm_calls),
            duration(row.seconds),
            row.status,
        )
    console.print(table)


def unchecked_warning(report) -> str | None:
    """What to tell the user when some sentences could not be checked at all."""
    papers = [row for row in report.papers if row.unchecked]
    if not papers:
        return None
    n = report.unchecked
    return (
        f"warning: {n} sentence{'s' * (n != 1)} unchecked in {len(papers)} "
        f"paper{'s' * (len(papers) != 1)}: the verifier's replies could not be read or left them out, so they "
        f"are marked [待验证], not verified. Fix the verifier (see `reader stats`), then run "
        f"`reader review --force` on them."
    )


@click.command("review")
@click.argument("paths", nargs=-1, type=click.Path(path_type=Path))
@zotero_options("Review")
@click.option("--force", is_flag=True, help="Review again papers that were already reviewed.")
@click.option(
    "--jobs",
    "-j",
    default=2,
    show_default=True,
    type=click.IntRange(1, 32),
    help="Papers read at once (LLM calls are bounded separately by READER_LLM_CONCURRENCY).",
)
@click.option(
    "--export",
    "export_dir",
    type=click.Path(path_type=Path),
    help="Afterwards, write the Markdown notes of every reviewed paper into this folder.",
)
@click.option("--quiet", "-q", is_flag=True, help="No progress lines.")
@click.option("--json", "as_json", is_flag=True, help="Print the result table as JSON.")
@click.option(
    "--queue",
    "to_queue",
    is_flag=True,
    help="Only put the papers on the queue (their bytes into the database) and return; "
    "`reader worker` on any machine reviews them (docs/guide/scale.md).",
)
@click.pass_obj
def review(app, paths, zotero, collection, force, jobs, export_dir, quiet, as_json, to_queue):
    """Ingest, deep read and audit every paper under PATHS (folders and files).

    The papers are queued in the database, as with --queue, and reviewed by
    --jobs workers in this process, the engine of `reader worker`. The run is
    resumable: after Ctrl-C or a crash, run the same command again and it
    continues where it stopped. Papers already reviewed are skipped unless
    --force, and so is a near-duplicate: another file of a paper already
    reviewed (the same DOI, or the same title and nearly the same text) is
    ingested but not reviewed, and its row names the twin; --force reviews
    it, `reader rm` removes the copy. A paper that fails READER_QUEUE_ATTEMPTS times is reported and
    skipped; the exit status is 1 if any failed. A paper removed with
    `reader rm` while it is reviewed is reported as removed, not as a failure.

    \b
    Examples:
      reader review papers/                       # the whole folder
      reader review papers/ --export notes/       # then write Obsidian notes
      reader review new.pdf --force --json        # redo one paper, JSON result
      reader review papers/ --queue               # for `reader worker`s; returns at once
      reader review --zotero --collection Thesis --export ~/vault/papers
    """
    _check_review_options(paths, zotero, collection, to_queue, export_dir)
    if to_queue:
        _queue_only(app, paths, force, as_json)
        return
    library = app.library.zotero_library(zotero or None, collection) if zotero is not None else None
    report = _review_or_exit(app, paths, jobs, force, quiet, library)
    exported = app.export(export_dir) if export_dir is not None else None
    if as_json:
        data = report.to_json()
        if exported is not None:
            data["export"] = exported.to_json()
        echo_json(data)
    else:
        print_table(report)
        if exported is not None:
            count = len(exported.notes)
            click.echo(
                f"Notes: {exported.out_dir.resolve()} ({count} paper{'s' * (count != 1)}, "
                f"index: {exported.index.name if exported.index else 'none'})"
            )
    _print_review_notes(report)
    if report.failed:
        sys.exit(1)


def _check_review_options(paths, zotero, collection, to_queue, export_dir) -> None:
    if zotero is None and collection:
        raise ReaderError("--collection chooses a Zotero collection: use it with --zotero")
    if zotero is not None and (paths or to_queue):
        raise ReaderError("--zotero reviews a Zotero library: give it without PATHS or --queue")
    if zotero is None and not paths:
        raise ReaderError("give files or folders to review, or --zotero for a Zotero library")
    if to_queue and export_dir is not None:
        raise ReaderError(
            "--export writes notes after a review; with --queue nothing is "
            "reviewed yet: run `reader export --all --out DIR` when "
            "`reader jobs` shows the papers done"
        )


def _queue_only(app, paths, force: bool, as_json: bool) -> None:
    """`reader review --queue`: the files on the queue for `reader worker`s; exit 1 if one failed."""
    enqueued = app.queue.enqueue(paths, force=force)
    if as_json:
        echo_json(enqueued.to_json())
    else:
        print_enqueued(enqueued)
    if enqueued.failed:
        sys.exit(1)


def _review_or_exit(app, paths, jobs: int, force: bool, quiet: bool, library):
    """The review's report; Ctrl-C exits at once with status 130."""
    stop = threading.Event()
    try:
        return app.review(
            paths,
            jobs=jobs,
            force=force,
            on_event=None if quiet else ProgressPrinter(),
            stop=stop,
            zotero=library,
        )
    except KeyboardInterrupt:
        stop.set()
        click.echo("Interrupted. Finished papers are kept; run the same command again to continue.", err=True)
        sys.stderr.flush()
        sys.stdout.flush()
        # Worker threads may be inside an LLM call; the papers in hand were handed back to the
        # queue, their reads commit nothing, and the next run redoes them.
        os._exit(130)


def _print_review_notes(report) -> None:
    """The review's notes, the unchecked warning, and one line per paper not reviewed."""
    for line in report.notes:
        click.echo(f"note: {printable(line)}", err=True)
    warning = unchecked_warning(report)
    if warning:
        click.echo(warning, err=True)
    for row in report.failed:
        click.echo(f"error: {printable(row.source)}: {row.error}", err=True)
    for row in report.by_status("busy"):
        click.echo(f"skipped: {printable(row.source)}: {row.error}", err=True)
    for row in report.by_status("removed"):  # the user's own `reader rm`: not a failure
        click.echo(f"removed: {printable(row.source)}: {row.error}", err=True)
    for row in report.by_status(NEAR_DUPLICATE):
        click.echo(for_terminal(near_duplicate_advice(row)), err=True)


def near_duplicate_advice(row) -> str:
    """The line of a paper whose review was skipped for its reviewed twin: what it is a version
    of, how to review it all the same, and how to keep one of the two."""
    copy = (row.paper_id or "")[:8]
    return (
        f"near-duplicate: {printable(row.source)}: {row.error}; "
        f"`reader review {printable(row.source)} --force` reviews it, "
        f"`reader rm {copy}` removes this copy (the twin's review stays)"
    )


@click.command("export")
@click.argument("papers", nargs=-1)
@click.option("--all", "export_all", is_flag=True, help="Every reviewed paper.")
@click.option(
    "--out",
    "out_dir",
    type=click.Path(path_type=Path),
    help="Folder for the notes (e.g. inside an Obsidian vault); created if missing.",
)
@click.option(
    "--bibtex",
    "bibtex_file",
    type=click.Path(path_type=Path),
    help="Also (or only) write the papers' BibTeX entries to this file, keyed by each note's citekey.",
)
@click.option(
    "--lookup",
    type=click.Choice(["crossref", "openalex", "semantic-scholar", "off"]),
    help="Check each cited reference entry in Crossref, OpenAlex or Semantic Scholar (sends the "
    "entries' text there; default: READER_REFERENCE_LOOKUP, off) and write whether it was found, "
    "with its year; an entry not found gets ⚠.",
)
@click.option("--json", "as_json", is_flag=True, help="Print the written files as JSON.")
@click.pass_obj
def export(app, papers, export_all, out_dir, bibtex_file, lookup, as_json):
    """Write one annotated Markdown note per reviewed paper, plus index.md.

    Each note has YAML front matter (title, authors, year, source, DOI, the
    Zotero link and collections, citekey, sha256, models, audit figures, tags),
    the abstract, the synthesis and the critique
    with every 待验证 sentence in a callout next to its nearest evidence and
    page, and a verification summary. Exporting again overwrites the notes.

    \b
    Examples:
      reader export --all --out ~/vault/papers
      reader export "Attention is all" 3f2a9c --out notes/
      reader export --all --out ~/vault/papers --bibtex ~/vault/papers.bib
    """
    if bool(papers) == export_all:
        raise ReaderError("name the papers to export, or use --all (not both)")
    if out_dir is None and bibtex_file is None:
        raise ReaderError("say where to write: --out FOLDER for the notes, --bibtex FILE for BibTeX, or both")
    if lookup and lookup != "off" and out_dir is None:
        raise ReaderError("--lookup checks the references cited in the notes: give --out FOLDER too")
    chosen = list(papers) if papers else None
    bib = app.library.bibtex(bibtex_file, chosen) if bibtex_file is not None else None
    if out_dir is None:
        if as_json:
            echo_json({"bibtex": bib.to_json()})
        else:
            click.echo(_bibtex_line(bib))
        return
    result = app.export(out_dir, chosen, lookup=lookup)
    if papers and not result.notes:
        titles = "; ".join(title for _, title in result.not_reviewed)
        raise ReaderError(f"nothing to export: not reviewed yet ({titles}); run `reader review` first")
    if as_json:
        echo_json({**result.to_json(), **({"bibtex": bib.to_json()} if bib is not None else {})})
    else:
        _print_exported(result, bib)
    for paper_id, title in result.not_reviewed:
        if papers:
            click.echo(
                for_terminal(f"warning: {title} ({paper_id[:8]}): not reviewed yet, no note written"),
                err=True,
            )


def _bibtex_line(bib) -> str:
    return f"{len(bib.entries)} BibTeX entr{'ies' if len(bib.entries) != 1 else 'y'} in {bib.path}"


def _print_exported(result, bib) -> None:
    if bib is not None:
        click.echo(_bibtex_line(bib))
    for path in result.notes:
        click.echo(str(path))
    if result.index is not None:
        click.echo(f"Index: {result.index}")
    count = len(result.notes)
    click.echo(f"{count} note{'s' * (count != 1)} in {result.out_dir.resolve()}")
