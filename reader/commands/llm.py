"""`reader stats`: what the LLM calls cost, per stage, per role/model and per paper."""

from __future__ import annotations

import click

from reader.commands.output import echo_json

_COLUMNS = ("calls", "cached", "errors", "prompt tok", "gen tok", "time s")


def _table(title: str, rows, *, with_title: bool = False) -> list[str]:
    header = (title, *_COLUMNS) + (("title",) if with_title else ())
    body = []
    for r in rows:
        cells = (r.key if not with_title else r.key[:12], str(r.calls), str(r.cached), str(r.errors),
                 str(r.prompt_tokens), str(r.completion_tokens), f"{r.time_s:.1f}")
        body.append(cells + ((r.title[:60],) if with_title else ()))
    widths = [max(len(str(row[i])) for row in [header, *body]) for i in range(len(header))]

    def fmt(row):
        first = str(row[0]).ljust(widths[0])
        numbers = [str(c).rjust(w) for c, w in zip(row[1:len(_COLUMNS) + 1], widths[1:])]
        rest = list(row[len(_COLUMNS) + 1:])
        return "  ".join([first, *numbers, *rest]).rstrip()

    return [fmt(header), *(fmt(row) for row in body)]


@click.command("stats")
@click.option("--paper", "paper", metavar="PAPER", help="Only calls for this paper (id, id prefix, file path or title prefix).")
@click.option("--json", "as_json", is_flag=True, help="Print the figures as JSON.")
@click.pass_obj
def stats(app, paper, as_json):
    """Show LLM calls, cache hits, errors, tokens and time per stage, model and paper.

    Tokens and time count what was spent: answers served from the cache are
    counted under "cached" only.

    \b
    Examples:
      reader stats
      reader stats --paper 3fa9c2 --json
    """

    report = app.stats(paper)
    if as_json:
        echo_json(report.to_json())
        return
    t = report.total
    if t.calls == 0:
        click.echo("No LLM calls recorded" + (f" for paper {report.paper_id}." if paper else "."))
        return
    scope = f" for paper {report.paper_id[:12]}" if report.paper_id else ""
    click.echo(
        f"{t.calls} LLM calls{scope}: {t.cached} from the cache, {t.errors} failed, "
        f"{t.prompt_tokens} prompt + {t.completion_tokens} generated tokens, {t.time_s:.1f} s"
    )
    for title, rows, with_title in (("stage", report.by_stage, False),
                                    ("role / model", report.by_model, False),
                                    ("paper", report.by_paper, True)):
        click.echo("")
        for line in _table(title, rows, with_title=with_title):
            click.echo(line)
