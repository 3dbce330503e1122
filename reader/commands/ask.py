"""`reader ask` (Corrective RAG over the library) and `reader calibrate`."""

from __future__ import annotations

import contextlib
import json
import sys

import click

from reader.commands.output import echo_json, for_terminal
from reader.config import CragSettings
from reader.errors import ReaderError

# the settings' defaults (READER_CRAG_*), shown in --threshold's help and the grid's single values
_DEFAULT = CragSettings()


def format_result(result) -> str:
    lines = [result.answer, ""]
    if result.sources:
        lines.append("Sources:")
        for n, source in enumerate(result.sources, 1):
            tag = " [external]" if source.external else ""
            lines.append(f"  [{n}] {source.source_label}{tag}  (relevance {source.score:.2f})")
            quote = source.refined or source.text
            lines.append(f'      "{quote[:400]}{"…" if len(quote) > 400 else ""}"')
        lines.append("")
    lines.append(f"Grounded: {'yes' if result.grounded else 'no'} — {result.grounded_reason}")
    lines.append(
        f"Route: {result.route} · confidence {result.confidence:.2f}"
        + (f" · rewrites: {'; '.join(result.rewrites)}" if result.rewrites else "")
        + (" · searched the rest of the library" if result.fallback_used and result.paper_id else "")
    )
    lines.append(f"{result.llm_calls} LLM calls · {result.tokens:,} tokens · {result.seconds:.1f} s")
    lines.extend(f"note: {note}" for note in result.notes)
    return "\n".join(lines)


@click.command("ask")
@click.argument("question", required=False)
@click.option(
    "--paper",
    "paper_ref",
    help="Ask about this paper (id, id prefix of 6+ characters, path or title prefix); default: the whole library.",
)
@click.option("--json", "as_json", is_flag=True, help="Print the answer, sources and grades as JSON.")
@click.option("--interactive", "-i", is_flag=True, help="Keep asking until an empty line or Ctrl-D.")
@click.option(
    "--threshold",
    type=click.FloatRange(0, 1),
    default=None,
    help="Grade a chunk must reach to be used as evidence (default: READER_CRAG_THRESHOLD, "
    f"{_DEFAULT.threshold:g}).",
)
@click.option(
    "--max-corrections",
    type=click.IntRange(0, 3),
    default=1,
    show_default=True,
    help="Corrective retrieval rounds allowed per question.",
)
@click.option(
    "--external",
    metavar="NAMES",
    help="Also search these scholarly services when the papers do not answer: "
    "semantic-scholar, arxiv, openalex (comma-separated), or off. Sends the question to "
    "them. Default: READER_EXTERNAL_SEARCH (off).",
)
@click.pass_obj
def ask_cmd(app, question, paper_ref, as_json, interactive, threshold, max_corrections, external):
    """Answer a question from the papers with Corrective RAG.

    Only evidence the grader judged relevant is used; the answer lists its
    sources with pages and says whether an independent check found every
    sentence supported. When the papers do not say, it answers
    "Not found in the papers."

    \b
    Examples:
      reader ask "Which baselines do they compare against?" --paper specter
      reader ask "Which papers evaluate on ACL data?" --json
      reader ask --interactive --paper 8bbf99a4
      reader ask "Who introduced the Transformer?" --external arxiv,openalex
    """
    paper_id = app.paper(paper_ref).id if paper_ref else None

    def answer(text: str) -> None:
        result = app.ask(
            text, paper_id, threshold=threshold, max_corrections=max_corrections, external=external
        )
        if as_json:
            echo_json(result.to_json())
        else:
            click.echo(for_terminal(format_result(result)))

    if not interactive:
        if not question:
            raise ReaderError(
                'give a question, e.g. reader ask "Which baselines do they compare '
                'against?", or use --interactive'
            )
        answer(question)
        return
    if question:
        answer(question)
    while True:
        try:
            text = click.prompt("question", default="", show_default=False, prompt_suffix="> ", err=True)
        except (EOFError, click.Abort):
            break
        if text.strip().lower() in ("", "quit", "exit", ":q"):
            break
        try:
            answer(text)
        except ReaderError as exc:
            click.echo(f"error: {exc}", err=True)
        click.echo("", err=True)


_QUOTE_DEFAULT = "off" if _DEFAULT.quote_threshold is None else f"{_DEFAULT.quote_threshold:g}"


@click.command("calibrate")
@click.option(
    "--questions",
    "questions_file",
    required=True,
    type=click.Path(dir_okay=False),
    help="JSONL file of labelled questions (see eval/questions.jsonl).",
)
@click.option(
    "--thresholds",
    default="0.5,0.6,0.7",
    show_default=True,
    help="Comma-separated grade thresholds to compare.",
)
@click.option(
    "--routing",
    default=_DEFAULT.routing,
    show_default=True,
    help="Routing rules to compare: counts, confidence or counts,confidence.",
)
@click.option(
    "--theta-high",
    default=f"{_DEFAULT.theta_high:g}",
    show_default=True,
    help="Comma-separated theta_high values (confidence routing).",
)
@click.option(
    "--theta-low",
    default=f"{_DEFAULT.theta_low:g}",
    show_default=True,
    help="Comma-separated theta_low values (confidence routing).",
)
@click.option(
    "--keep",
    "keep",
    default=None,
    help="Comma-separated P(YES) thresholds for keeping a passage under confidence routing "
    "(default: the --thresholds values).",
)
@click.option(
    "--quote",
    "quote",
    default=_QUOTE_DEFAULT,
    show_default=True,
    help="Comma-separated quote thresholds: the grader's P(YES) at which a refused answer "
    "quotes the passage instead; off never quotes.",
)
@click.option(
    "--refusal",
    default=_DEFAULT.refusal,
    show_default=True,
    help='Who may answer "not found" once evidence was kept: writer, grader (not the writer '
    "on a correct route), p_yes (the grader's best P(YES) decides) or several to compare.",
)
@click.option(
    "--answer-p-yes",
    "answer_p_yes",
    default=f"{_DEFAULT.answer_p_yes:g}",
    show_default=True,
    help="With --refusal p_yes: comma-separated P(YES) values the best graded passage needs "
    'for the writer to answer (below them the answer is "not found").',
)
@click.option(
    "--ungrounded",
    default=_DEFAULT.ungrounded,
    show_default=True,
    help="An answer the groundedness check finds unsupported: keep (marked ungrounded), "
    "refuse (withheld: not found) or keep,refuse to compare.",
)
@click.option(
    "--grader",
    default=None,
    help="The trained relevance grader grades passages first (on) or the LLM grades every passage "
    "(off); on,off to compare. Default: READER_CRAG_GRADER.",
)
@click.option(
    "--rows",
    "rows_file",
    type=click.Path(dir_okay=False),
    default=None,
    help="Append every answer (setting and scored row) to this JSONL file as it comes, "
    "so a run cut short keeps what it measured.",
)
@click.option("--write", is_flag=True, help="Store the recommended setting in the config file.")
@click.option("--limit", type=int, default=None, help="Only the first N questions.")
@click.option("--ids", default=None, help="Only these question ids (comma-separated), e.g. a01,n05.")
@click.option("--json", "as_json", is_flag=True, help="Print the report as JSON.")
@click.pass_obj
def calibrate_cmd(app, questions_file, rows_file, write, limit, ids, as_json, **grid):
    """Run a labelled question set through `ask` for a grid of settings and recommend one.

    For each setting (routing rule, grade threshold, for confidence routing theta_high
    and theta_low, the quote threshold and who may refuse) it reports the route distribution, answer and
    refusal accuracy, grounded share, LLM calls and latency p50/p95, then recommends the best accuracy at the fewest
    calls; --write stores it in the config file. Questions name their papers by file name or
    sha256; the papers must already be in the library.

    \b
    Examples:
      reader calibrate --questions eval/questions.jsonl --thresholds 0.5,0.6,0.7
      reader calibrate --questions eval/questions.jsonl --routing counts,confidence \\
          --theta-high 0.6,0.7,0.8 --theta-low 0.2,0.3 --quote off,0.8,0.7 --write
      reader calibrate --questions eval/questions.jsonl --ids a01,a14,n01,n05 --json
    """

    wanted = [i.strip() for i in ids.split(",") if i.strip()] if ids else None  # ids keep their case
    thresholds, dimensions = _grid(**grid)
    with _rows_writer(rows_file) as save_row:
        report = app.questions.calibrate(
            questions_file,
            thresholds,
            ids=wanted,
            limit=limit,
            on_progress=lambda msg: click.echo(msg, err=True),
            on_row=save_row,
            **dimensions,
        )
    if as_json:
        echo_json(report.to_json())
    else:
        click.echo(report.text())
    if write and report.to_json().get("recommended"):
        path = app.questions.write_routing(report.to_json()["recommended"])
        click.echo(f"wrote the recommended setting to {path}", err=True)
    sys.stdout.flush()


def _numbers(option: str, text: str) -> list[float]:
    try:
        return [float(t) for t in text.split(",") if t.strip()]
    except ValueError:
        raise ReaderError(f"{option} {text!r}: give numbers like 0.5,0.6,0.7") from None


def _words(text: str) -> list[str]:
    return [t.strip().lower() for t in text.split(",") if t.strip()]


def _switches(option: str, text: str) -> list[bool]:
    values = _words(text)
    unknown = [v for v in values if v not in ("on", "off")]
    if unknown or not values:
        raise ReaderError(f"{option} {text!r}: give on, off or on,off")
    return [v == "on" for v in values]


def _quote_values(text: str) -> list[float | None]:
    values = _words(text)
    out = [None if v in ("off", "none") else _numbers("--quote", v)[0] for v in values]
    if any(v is not None and not 0.0 <= v <= 1.0 for v in out):
        raise ReaderError(f"--quote {text!r}: give probabilities between 0 and 1, or off")
    return out or [None]


def _grid(
    thresholds, routing, theta_high, theta_low, keep, quote, refusal, answer_p_yes, ungrounded, grader
) -> tuple[list[float], dict]:
    """The calibration grid's options as (the grade thresholds, the other dimensions, as
    Questions.calibrate takes them)."""
    return _numbers("--thresholds", thresholds), {
        "routings": _words(routing),
        "theta_highs": _numbers("--theta-high", theta_high),
        "theta_lows": _numbers("--theta-low", theta_low),
        "quote_thresholds": _quote_values(quote),
        "refusals": _words(refusal),
        "keep_thresholds": _numbers("--keep", keep) if keep else None,
        "ungrounded": _words(ungrounded),
        "answer_p_yes": _numbers("--answer-p-yes", answer_p_yes),
        "graders": _switches("--grader", grader) if grader else None,
    }


@contextlib.contextmanager
def _rows_writer(rows_file: str | None):
    """save_row(setting, row): each answer appended to the --rows JSONL file as it comes."""
    try:
        rows_out = open(rows_file, "a", encoding="utf-8") if rows_file else None
    except OSError as exc:
        raise ReaderError(f"--rows {rows_file}: cannot write to it ({exc.strerror})") from None

    def save_row(setting, row) -> None:
        if rows_out is not None:
            rows_out.write(json.dumps({"setting": setting.to_json(), **row}, ensure_ascii=False) + "\n")
            rows_out.flush()

    try:
        yield save_row
    finally:
        if rows_out is not None:
            rows_out.close()
