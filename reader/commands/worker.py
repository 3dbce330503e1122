"""`reader worker` (review queued papers, on any number of machines) and `reader jobs` (the
queue's state)."""

from __future__ import annotations

import os
import signal
import sys
import threading
from datetime import UTC, datetime
from pathlib import Path

import click

from reader.commands.output import echo_json, printable, table_cell
from reader.commands.progress import ProgressPrinter


def _ago(moment: datetime | None) -> str:
    if moment is None:
        return ""
    seconds = max(0, int((datetime.now(UTC) - moment).total_seconds()))
    if seconds < 60:
        return f"{seconds}s ago"
    if seconds < 3600:
        return f"{seconds // 60}m{seconds % 60:02d}s ago"
    return f"{seconds // 3600}h{seconds % 3600 // 60:02d}m ago"


@click.command("jobs")
@click.option(
    "--queued",
    "queued_only",
    is_flag=True,
    help="Only jobs that went through the queue (every review's do; not those of "
    "one-machine `reader review` runs of earlier versions).",
)
@click.option("--json", "as_json", is_flag=True, help="Print every job as JSON.")
@click.pass_obj
def jobs(app, queued_only, as_json):
    """Show the review jobs of every machine: queued, running (on which worker, since when),
    done and failed (with the error). A running job whose worker stopped renewing its lease
    shows as stale until another worker takes it over.

    \b
    Examples:
      reader jobs
      reader jobs --queued --json
    """
    report = app.queue.jobs(queued_only=queued_only)
    if as_json:
        echo_json(report.to_json())
        return
    from rich.console import Console
    from rich.table import Table

    counts = report.counts()
    console = Console(highlight=False, width=None if sys.stdout.isatty() else 132)
    table = Table(title=", ".join(f"{n} {name}" for name, n in counts.items()))
    table.add_column("Id", justify="right")
    table.add_column("Paper", overflow="ellipsis", no_wrap=True, max_width=36)
    table.add_column("Status", no_wrap=True)
    table.add_column("Worker", no_wrap=True)
    table.add_column("Since", no_wrap=True)
    table.add_column("Tries", justify="right")
    table.add_column("Error", overflow="fold", max_width=50)
    for row in report.rows:
        status = row.status + (f": {row.stage}" if row.status in ("running", "stale") and row.stage else "")
        table.add_row(
            str(row.id),
            table_cell(row.title or printable(Path(row.source).name)),
            status,
            table_cell(row.worker) if row.status in ("running", "stale") else "",
            _ago(row.since),
            str(row.attempts),
            table_cell(row.error or row.note),  # note: a near-duplicate's twin
        )
    console.print(table)


def _work_left(app, report, should_be_empty: bool) -> str:
    """What is left undone when the worker stopped on an error, or the queue is not empty
    after `--until-empty`; "" when nothing is."""
    if report.error:
        return f"worker stopped: {report.error}"
    if not should_be_empty:
        return ""
    counts = app.queue.jobs(queued_only=True).counts()
    left = counts.get("queued", 0) + counts.get("running", 0) + counts.get("stale", 0)
    return f"{left} queued paper{'s' * (left != 1)} left undone" if left else ""


@click.command("worker")
@click.option(
    "--jobs",
    "-j",
    default=1,
    show_default=True,
    type=click.IntRange(1, 32),
    help="Papers read at once by this worker (LLM calls are bounded separately by READER_LLM_CONCURRENCY).",
)
@click.option("--once", is_flag=True, help="Process one queued paper, then exit (for schedulers).")
@click.option(
    "--until-empty", is_flag=True, help="Exit when no queued paper is pending or running on any worker."
)
@click.option(
    "--poll",
    default=2.0,
    show_default=True,
    type=click.FloatRange(0.05, 600),
    help="Seconds between looks at an empty queue.",
)
@click.option("--quiet", "-q", is_flag=True, help="No progress lines.")
@click.option("--json", "as_json", is_flag=True, help="Print what this worker did as JSON at the end.")
@click.pass_obj
def worker(app, jobs, once, until_empty, poll, quiet, as_json):
    """Review queued papers (`reader review PATHS --queue`) until stopped.

    Run it on any number of machines that share one PostgreSQL database
    (READER_DATABASE_URL) and an LLM endpoint; each paper is claimed by one
    worker, with a lease its heartbeat renews (READER_QUEUE_LEASE seconds). A
    worker that dies loses its paper to another when the lease runs out; a paper
    that fails READER_QUEUE_ATTEMPTS times is marked failed. Ctrl-C (or SIGTERM)
    finishes the paper in hand and exits; a second Ctrl-C hands it back to the
    queue at once. See docs/guide/scale.md.

    \b
    Examples:
      reader worker                      # until Ctrl-C
      reader worker --jobs 4             # four papers at a time
      reader worker --once               # one paper, for cron or a batch scheduler
      reader worker --until-empty --json
    """
    stop, abandon = threading.Event(), threading.Event()

    def drain(_signum, _frame):  # SIGTERM: finish the paper in hand, take no other
        stop.set()

    try:
        signal.signal(signal.SIGTERM, drain)
    except ValueError:  # not the main thread
        pass
    report = app.queue.work(
        jobs=jobs,
        once=once,
        until_empty=until_empty,
        poll_s=poll,
        stop=stop,
        abandon=abandon,
        on_event=None if quiet else ProgressPrinter(),
    )
    _print_worked(report, as_json)
    if not abandon.is_set():
        left = _work_left(app, report, until_empty and not stop.is_set())
        if left:
            click.echo(f"error: {left}", err=True)
            sys.exit(1)
    if abandon.is_set():
        # The papers were handed back; their reads may still be inside an LLM call, and
        # whatever they would commit now is refused (their claims are gone).
        sys.stdout.flush()
        sys.stderr.flush()
        os._exit(130)


def _print_worked(report, as_json: bool) -> None:
    """What the worker did (JSON, or one summary line), then one line per paper not reviewed."""
    if as_json:
        echo_json(report.to_json())
    else:
        data = report.to_json()
        click.echo(
            f"Worker {report.worker}: {data['reviewed']} reviewed, {data['retrying']} "
            f"queued again after a failure, {data['failed']} failed, {data['lost']} lost "
            f"to another worker, {data['near_duplicates']} near-duplicate"
            f"{'s' * (data['near_duplicates'] != 1)} not reviewed, "
            f"{len(report.handed_back)} handed back "
            f"({report.seconds:.0f} s).",
            err=True,
        )
    for row in report.papers:
        if row.status in ("error", "retry", "lost", "near-duplicate"):  # near-duplicate: not reviewed
            click.echo(f"{row.status}: {printable(row.source)}: {row.error}", err=True)
