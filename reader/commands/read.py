"""`reader read` (deep read + audit), `reader show` (stored analyses) and `reader audit` (any text)."""

from __future__ import annotations

import sys
import time
from pathlib import Path

import click

from reader.commands.output import echo_json, for_terminal
from reader.errors import ReaderError

VERDICT_MARKS = {"supported": "✓", "unsupported": "✗", "unanswered": "?", "unchecked": "!"}
UNCHECKED_HINT = (
    "the verifier's reply could not be read or left them out, so they are marked [待验证], not verified; "
    "fix the verifier (see `reader stats`) and run this again"
)


def _summary_lines(result) -> list[str]:
    lines = []
    for k in result.analyses:
        its = k.loop.iterations
        final = k.loop.final
        # flagged among the sentences a model or a guard checked; restated and the tool's findings apart
        flagged = ", ".join(f"{it.audit.n_flagged}/{it.audit.n_checked}" for it in its)
        by = [s.decided_by for s in final.sentences]
        lines.append(
            f"{k.kind:<10} sentences {len(its[-1].audit.sentences):>3} · flagged per iteration "
            f"{flagged} checked · final ratio {final.flagged_ratio:.2f} · restated {by.count('restated')} · "
            f"tool's findings {by.count('tool')} · regenerations "
            f"{k.loop.regenerations} · unchecked {final.n_unchecked} · unanswered {final.n_unanswered}"
        )
        if final.n_unchecked:
            lines.append(f"{'':<10} {final.n_unchecked} unchecked: {UNCHECKED_HINT}")
        if k.left_out:
            lines.append(f"{'':<10} left out for length: {', '.join(k.left_out)}")
    if result.checklist is not None:
        missing = [i.key for i in result.checklist.items if not i.found]
        lines.append(
            f"checklist  {result.checklist.n_found} of {len(result.checklist.items)} items found"
            + (f" · not found: {', '.join(missing)}" if missing else "")
        )
    lines.append(f"{result.llm_calls} LLM calls · {result.tokens:,} tokens · {result.seconds:.1f} s")
    return lines


@click.command("read")
@click.argument("paper")
@click.option("--json", "as_json", is_flag=True, help="Print the analyses, verdicts and evidence as JSON.")
@click.option("--show", "show_text", is_flag=True, help="Also print the final critique and synthesis.")
@click.option(
    "--context-tokens",
    type=click.IntRange(500, 200_000),
    default=None,
    help="Paper tokens given to the generator (default: what the generator takes: docs/design/llm.md, Budgets).",
)
@click.option(
    "--words",
    type=click.IntRange(100, 5000),
    default=None,
    help="Target length of each analysis in words, shared evenly by its headings (default: what the "
    "generator can sustain: docs/design/llm.md, Budgets).",
)
@click.option(
    "--no-followup",
    is_flag=True,
    help="Do not ask the follow-up questions after the read (default: READER_FOLLOWUP, 3 questions).",
)
@click.option("--quiet", "-q", is_flag=True, help="No progress lines.")
@click.pass_obj
def read(app, paper, as_json, show_text, context_tokens, words, no_followup, quiet):
    """Deep-read a paper: write a critique and a synthesis and audit every sentence.

    PAPER is a file (ingested first if needed), a paper id or id prefix (6+ characters), or a
    title prefix. Sentences still unsupported after at most two rewrites are
    marked with the prefix [待验证], and so are sentences left unchecked because
    the verifier's reply could not be read (asked twice, never cached).

    \b
    Examples:
      reader read ../papers/specter.pdf
      reader read f4b6d4e5 --json > specter.json
      READER_LLM_BASE_URL=http://127.0.0.1:8080/v1 reader read "SPECTER" --words 1200
    """

    def echo(message: str) -> None:
        if not quiet:
            click.echo(f"[{time.strftime('%H:%M:%S')}] {message}", err=True)

    result = app.read(
        paper,
        on_progress=echo,
        context_tokens=context_tokens,
        words=words,
        followup=False if no_followup else None,
    )
    paper_id = result.paper_id
    if as_json:
        echo_json(result.to_json())
        return
    if show_text:
        for k in result.analyses:
            click.echo(f"=== {k.kind} ===\n{for_terminal(k.loop.final_text)}\n")
    for line in _summary_lines(result):
        click.echo(line)
    if result.followups is not None and result.followups.answers:
        _print_followups([a for a in result.followups.to_json()["questions"]])
    click.echo(f"See the texts with marks: reader show {paper_id[:12]}")


def _print_followups(items: list[dict]) -> None:
    click.echo(f"=== Follow-up questions ({len(items)}) ===")
    for item in items:
        click.echo(for_terminal(f"Q: {item['question']}"))
        click.echo(for_terminal(f"A: {item['answer']}"))
        for source in item["sources"]:
            click.echo(for_terminal(f"   - {source['label']}"))


@click.command("show")
@click.argument("paper")
@click.option("--json", "as_json", is_flag=True, help="Print the stored analyses as JSON.")
@click.option("--verdicts", is_flag=True, help="Also list every sentence with its verdict and reasons.")
@click.pass_obj
def show(app, paper, as_json, verdicts):
    """Print the stored critique and synthesis of a paper, with [待验证] marks.

    \b
    Examples:
      reader show f4b6d4e5
      reader show "SPECTER" --verdicts
    """
    target = app.paper(paper).analyses()
    analyses = target.analyses
    if as_json:
        echo_json(target.to_json())
        return
    if not analyses:
        raise ReaderError(
            f"paper {target.paper_id[:12]} has no analyses yet: run `reader read {target.paper_id[:12]}`"
        )
    click.echo(f"{for_terminal(target.title)}  ({target.paper_id[:12]})\n")
    for a in analyses:
        ratios = " → ".join(f"{r:.2f}" for r in a["ratio_per_iteration"])
        click.echo(
            f"=== {a['kind']} · flagged ratio per iteration {ratios} · "
            f"regenerations {a['regenerations']} · unchecked {a['n_unchecked']} · "
            f"unanswered {a['n_unanswered']} ==="
        )
        if a["left_out_sections"]:
            click.echo(for_terminal(f"(left out for length: {', '.join(a['left_out_sections'])})"))
        click.echo(for_terminal(a["final_text"]) + "\n")
        if verdicts:
            _print_sentences(a["sentences"], evidence=False)
            click.echo("")
    if target.checklist:
        _print_checklist(target.checklist)
    if target.judgements and not verdicts:
        _print_judgements(target.judgements)
    if target.highlights:
        _print_highlights(target.highlights)
    followups = app.paper(target.paper_id).followups()
    if followups:
        _print_followups([f.to_json() for f in followups])


def _print_checklist(checklist: dict) -> None:
    items = checklist["items"]
    made = "" if checklist["stored"] else " (by the rules alone: the paper was read before the checklist)"
    click.echo(f"=== Rigour checklist: {checklist['found']} of {len(items)} found{made} ===")
    for item in items:
        if item["found"]:
            where = f" (p. {item['pages']})" if item["pages"] else ""
            click.echo(for_terminal(f"  {item['label']}: {item['value'] or 'found'}{where}"))
        else:
            click.echo(for_terminal(f"  {item['label']}: not found"))
    click.echo("")


def _print_sentences(sentences: list[dict], *, evidence: bool) -> None:
    for n, s in enumerate(sentences, 1):
        click.echo(
            f"{n:>3} {VERDICT_MARKS.get(s['verdict'], '?')} {s['verdict']:<11} {for_terminal(s['text'])}"
        )
        if s.get("decided"):
            click.echo(f"{'':16}decided by {for_terminal(s['decided']['label'])}")
        for reason in s["reasons"]:
            click.echo(f"{'':16}- {for_terminal(reason)}")
        if judged := s.get("judgement"):
            click.echo(f"{'':16}reader: {_judgement_words(judged)}")
        if evidence:
            for e in s["evidence"]:
                snippet = for_terminal(" ".join(e["text"].split()))
                click.echo(f"{'':16}p. {e['pages']}: {snippet[:160]}{'…' if len(snippet) > 160 else ''}")


def _judgement_words(judged: dict) -> str:
    """supported (overrules the audit's 待验证 flag) — comment (who)"""
    words = f"{judged['verdict']} ({judged['relation']})"
    if judged["comment"]:
        words += f" — {judged['comment']}"
    if judged["judged_by"]:
        words += f" ({judged['judged_by']})"
    return for_terminal(words)


def _print_judgements(judgements: list[dict]) -> None:
    click.echo(f"=== Reader's judgements ({len(judgements)}) ===")
    for judged in judgements:
        where = judged["sentence_id"] or "(no longer in the review)"
        sentence = " ".join(judged["sentence"].split())
        click.echo(f"{where}: {for_terminal(sentence[:100])}{'…' if len(sentence) > 100 else ''}")
        click.echo(f"{'':4}{_judgement_words(judged)}")


def _print_highlights(highlights: list[dict]) -> None:
    click.echo(f"=== Your highlights ({len(highlights)}) ===")
    for h in highlights:
        click.echo(f"p. {h['page']}: “{for_terminal(h['text'])}”")
        if h["note"]:
            click.echo(f"{'':4}note: {for_terminal(h['note'])}")


@click.command("audit")
@click.option(
    "--paper", "paper_ref", required=True, help="The paper to check against (id, path or title prefix)."
)
@click.option(
    "--text-file",
    type=click.Path(exists=True, dir_okay=False, path_type=Path),
    help="The text to audit (default: read standard input).",
)
@click.option(
    "--json", "as_json", is_flag=True, help="Print every sentence with verdict and evidence as JSON."
)
@click.pass_obj
def audit(app, paper_ref, text_file, as_json):
    """Audit any text (notes, a draft, a summary) against a paper, sentence by sentence.

    Uses the same machinery as `reader read`: evidence search, the verifier
    model and the deterministic guards on numbers, names and citations.

    \b
    Examples:
      reader audit --paper f4b6d4e5 --text-file my_notes.md
      echo "SPECTER beats SciBERT by 12 points." | reader audit --paper specter --json
    """
    if text_file is not None:
        try:
            text = text_file.read_text(encoding="utf-8")
        except UnicodeDecodeError:
            raise ReaderError(f"{text_file}: not UTF-8 text; save it as UTF-8 and retry") from None
    else:
        if sys.stdin.isatty():
            click.echo("Reading the text to audit from standard input (end with Ctrl-D)…", err=True)
        text = sys.stdin.read()
    report = app.audit(text, paper_ref)
    result = report.result
    if as_json:
        echo_json(report.to_json())
        return
    _print_sentences([s.to_json() for s in result.sentences], evidence=True)
    click.echo(
        f"\n{result.n_flagged}/{len(result.sentences)} sentences unsupported "
        f"(ratio {result.flagged_ratio:.2f}) · {result.n_unchecked} unchecked · "
        f"{result.n_unanswered} unanswered · {result.llm_calls} LLM calls · "
        f"{result.seconds:.1f} s"
    )
    if result.n_unchecked:
        click.echo(f"{result.n_unchecked} unchecked: {UNCHECKED_HINT}")
