"""`reader judge`: the reader's own verdict of one sentence of a paper's review."""

from __future__ import annotations

import click

from reader.commands.output import echo_json, for_terminal
from reader.errors import ReaderError


@click.command("judge")
@click.argument("paper")
@click.argument("sentence")
@click.option(
    "--supported", is_flag=True, help="The paper supports the sentence (overrules a [待验证] flag)."
)
@click.option(
    "--unsupported",
    is_flag=True,
    help="The paper does not support it (confirms a flag, or flags a sentence the audit passed).",
)
@click.option("--withdraw", is_flag=True, help="Remove your judgement of the sentence.")
@click.option("--comment", default="", help="Why, in a few words (shown on the page and in the note).")
@click.option("--by", "judged_by", default="", help="Your name, shown as who decided.")
@click.option("--json", "as_json", is_flag=True, help="Print the sentence and the judgement stored as JSON.")
@click.pass_obj
def judge(app, paper, sentence, supported, unsupported, withdraw, comment, judged_by, as_json):
    """Keep your own judgement of a sentence beside the audit's: confirm or overrule a
    [待验证] flag, or flag a sentence the audit passed, with an optional comment.

    PAPER is an id, id prefix (6+ characters), file path or title prefix. SENTENCE is the sentence's id,
    e.g. critique-3 or synthesis-1: the numbers `reader show PAPER --verdicts` prints. The
    judgement is shown on the paper's web page and in `reader show`, and carried into the
    exported note as a "Reader's judgement" callout; the audit's own verdict is kept.

    \b
    Examples:
      reader show f4b6d4e5 --verdicts
      reader judge f4b6d4e5 critique-3 --supported --comment "Table 2, p. 6"
      reader judge f4b6d4e5 synthesis-7 --unsupported --by Ada
      reader judge f4b6d4e5 critique-3 --withdraw
    """
    given = [
        flag
        for flag, on in (("--supported", supported), ("--unsupported", unsupported), ("--withdraw", withdraw))
        if on
    ]
    if not given:
        raise ReaderError("give --supported, --unsupported or --withdraw (the judgement to keep)")
    if len(given) > 1:
        raise ReaderError(f"give one of --supported, --unsupported or --withdraw, not {' and '.join(given)}")
    verdict = {"--supported": "supported", "--unsupported": "unsupported"}.get(given[0])
    result = app.paper(paper).judge(sentence, verdict, comment=comment, by=judged_by)
    if as_json:
        echo_json(result.to_json())
        return
    text = " ".join(result.sentence.split())
    click.echo(for_terminal(f"{result.title}  ({result.paper_id[:12]})"))
    click.echo(for_terminal(f"“{text}”"))
    judged = result.judgement
    if judged is None and not result.withdrawn:
        click.echo(
            f"{result.sentence_id}: you had no judgement of it to withdraw; nothing changed "
            f"(the audit's verdict, {result.audit_verdict}, stands)"
        )
        return
    if judged is None:
        click.echo(
            f"{result.sentence_id}: your judgement is withdrawn; the audit's verdict ({result.audit_verdict}) stands"
        )
        return
    line = f"{result.sentence_id}: {judged.verdict} ({judged.relation})"
    if judged.comment:
        line += f" — {judged.comment}"
    click.echo(for_terminal(line))
