"""`reader stats`: what the LLM calls cost, per stage, per role/model and per paper."""

from __future__ import annotations

import unicodedata

import click

from reader.commands.output import echo_json, for_terminal

WIDTH = 100  # every line of `reader stats` fits in this many columns
UNKNOWN = "–"  # the backend did not report it
_COLUMNS = ("calls", "hits", "errors", "prompt tok", "gen tok", "cached tok", "prompt s", "gen s", "wall s")
# Tokens speculative decoding drafted / accepted: a column only when some call reported them, so
# the tables of a run without drafting keep their room for the stage names.
_DRAFT_COLUMN = "drafted/acc"
_PAPER_COLUMNS = ("calls", "tokens", "prompt s", "gen s", "wall s")


def _width(text: str) -> int:
    """Columns the text takes in a terminal (wide CJK characters take two)."""
    return sum(
        0 if unicodedata.combining(c) else 2 if unicodedata.east_asian_width(c) in "WF" else 1 for c in text
    )


def _clip(text: str, width: int) -> str:
    if _width(text) <= width:
        return text
    out, used = [], 0
    for c in text:
        w = _width(c)
        if used + w > width - 1:
            break
        out.append(c)
        used += w
    return "".join(out) + "…"


def _pad(text: str, width: int) -> str:
    return text + " " * max(0, width - _width(text))


def _seconds(value: float | None) -> str:
    return UNKNOWN if value is None else f"{value:.1f}"


def _count(value: int | None) -> str:
    return UNKNOWN if value is None else str(value)


def _drafts(row) -> str:
    """The row's drafted/accepted tokens, "–" when no call of the row drafted any."""
    if row.drafted_tokens is None:
        return UNKNOWN
    return f"{row.drafted_tokens}/{_count(row.accepted_tokens)}"


def _layout(header: tuple, body: list[tuple]) -> tuple[int, list[int]]:
    """(room left for the first column within WIDTH, widths of the other columns)."""
    widths = [max(_width(row[i]) for row in [header, *body]) for i in range(1, len(header))]
    return WIDTH - sum(widths) - 2 * len(widths), widths


def _format(first: str, first_width: int, cells: tuple, widths: list[int], *, last_free: bool = False) -> str:
    """One line: the first cell padded, the figures right-aligned; with `last_free` the last
    cell is left-aligned text, not padded."""
    numbers = [c.rjust(w) for c, w in zip(cells, widths)]
    if last_free and cells:
        numbers[-1] = cells[-1]
    return "  ".join([_pad(first, first_width), *numbers]).rstrip()


def _table(title: str, rows, *, drafts: bool = False) -> list[str]:
    """Stage or role/model rows: a key (or the title) that does not fit beside the figures gets a
    line of its own.
    With `drafts`, a column of the tokens speculative decoding drafted / accepted after cached tok."""
    at = _COLUMNS.index("cached tok") + 1
    header = (title, *_COLUMNS[:at], *((_DRAFT_COLUMN,) if drafts else ()), *_COLUMNS[at:])
    body = [
        (
            r.key,
            str(r.calls),
            str(r.cached),
            str(r.errors),
            str(r.prompt_tokens),
            str(r.completion_tokens),
            _count(r.cached_prompt_tokens),
            *((_drafts(r),) if drafts else ()),
            _seconds(r.prompt_s),
            _seconds(r.generation_s),
            f"{r.time_s:.1f}",
        )
        for r in rows
    ]
    room, widths = _layout(header, body)
    first_width = min(max(_width(row[0]) for row in [header, *body]), room)
    lines = []
    for row in [header, *body]:  # the title too, when the drafted/acc column leaves it no room
        if _width(row[0]) > first_width:
            lines.append(row[0])
            lines.append(_format("", first_width, row[1:], widths))
        else:
            lines.append(_format(row[0], first_width, row[1:], widths))
    return lines


def _paper_label(row) -> str:
    if row.key == "(no paper)":
        return row.key
    return for_terminal(f"{row.key[:8]} {' '.join(row.title.split())}".rstrip())


def _longest(row) -> str:
    if not row.longest_stage:
        return ""
    if row.time_s <= 0:
        return row.longest_stage
    return f"{row.longest_stage} ({round(100 * row.longest_stage_s / row.time_s)}%)"


def _paper_table(rows) -> list[str]:
    """Per paper: calls, tokens spent, server prompt/generation seconds, wall seconds, and the
    stage that took the most wall time; titles are clipped to keep the line within WIDTH."""
    header = ("paper", *_PAPER_COLUMNS, "longest stage")
    body = [
        (
            _paper_label(r),
            str(r.calls),
            str(r.tokens),
            _seconds(r.prompt_s),
            _seconds(r.generation_s),
            f"{r.time_s:.1f}",
            _longest(r),
        )
        for r in rows
    ]
    room, widths = _layout(header, body)
    room = max(room, 20)
    body = [(_clip(row[0], room), *row[1:]) for row in body]
    first_width = max(_width(row[0]) for row in [header, *body])
    return [_format(row[0], first_width, row[1:], widths, last_free=True) for row in [header, *body]]


def _summary(report, scope: str) -> list[str]:
    t = report.total
    lines = [f"{t.calls} LLM calls{scope}: {t.cached} from the cache, {t.errors} failed"]
    tokens = f"tokens: {t.prompt_tokens} prompt + {t.completion_tokens} generated"
    if t.cached_prompt_tokens is not None:
        tokens += f"; {t.cached_prompt_tokens} prompt tokens reused from the server's prompt cache"
    lines.append(tokens)
    spent = t.calls - t.cached
    if t.timed_calls:
        lines.append(
            f"time: {t.time_s:.1f} s wall; the server reported {_seconds(t.prompt_s)} s "
            f"prompt + {_seconds(t.generation_s)} s generation ({t.timed_calls} of "
            f"{spent} calls)"
        )
    else:
        lines.append(
            f"time: {t.time_s:.1f} s wall; the backend reported no prompt/generation times ({UNKNOWN} below)"
        )
    if t.drafted_tokens is not None:
        accepted = t.accepted_tokens or 0
        share = f" ({round(100 * accepted / t.drafted_tokens)}%)" if t.drafted_tokens else ""
        lines.append(
            f"speculative decoding: {t.drafted_tokens} tokens drafted, {accepted} of them accepted{share}"
        )
    return lines


@click.command("stats")
@click.option(
    "--paper",
    "paper",
    metavar="PAPER",
    help="Only calls for this paper (id, id prefix of 6+ characters, file path or title prefix).",
)
@click.option("--json", "as_json", is_flag=True, help="Print the figures as JSON.")
@click.pass_obj
def stats(app, paper, as_json):
    """Show LLM calls, cache hits, errors, tokens and time per stage, model and paper.

    Tokens and time count what was spent: answers served from the response
    cache are counted under "hits" only. "cached tok" are prompt tokens the
    server reused from its prompt cache (part of "prompt tok"). "prompt s" and
    "gen s" are the seconds the server reported spending on the prompt and on
    generating (llama.cpp's timings; "–" when the backend does not report
    them); "wall s" is the time each call took as the caller saw it, waiting
    for a busy model included. "drafted/acc" are the tokens speculative
    decoding (READER_SPECULATIVE) drafted and how many of them the model
    accepted; that column and the summary's line on speculative decoding
    appear only when some call drafted ("–" for a row none of whose calls
    did). The paper table names each paper's stage with the most wall time.

    \b
    Examples:
      reader stats
      reader stats --paper 3fa9c2
      reader stats --json
    """

    report = app.stats(paper)
    if as_json:
        echo_json(report.to_json())
        return
    if report.total.calls == 0:
        click.echo("No LLM calls recorded" + (f" for paper {report.paper_id}." if paper else "."))
        return
    scope = f" for paper {report.paper_id[:12]}" if report.paper_id else ""
    for line in _summary(report, scope):
        click.echo(line)
    drafts = report.total.drafted_tokens is not None
    for lines in (
        _table("stage", report.by_stage, drafts=drafts),
        _table("role / model", report.by_model, drafts=drafts),
        _paper_table(report.by_paper),
    ):
        click.echo("")
        for line in lines:
            click.echo(line)
