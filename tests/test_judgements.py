"""The reader's own judgement of a sentence: stored beside the audit's verdict, shown by
`reader show`, carried into the exported note as a callout that says who decided."""

from __future__ import annotations

import json

import pytest
from click.testing import CliRunner
from sqlalchemy import select
from test_export import add_analysis, add_paper, front_matter

from reader.annotations.judgements import sentence_key
from reader.errors import ReaderError
from reader.export import export_notes
from reader.store.db import transaction
from reader.store.tables import Paper, SentenceJudgement

PID = "cd" * 32
SENTENCES = [
    ("Retrieval is done in two stages.", "supported"),
    ("It beats BM25 by 0.3% on every dataset.", "unsupported"),
    ("The index fits in 2 GB.", "supported"),
]


@pytest.fixture
def reviewed(db):
    add_paper(db, PID, "Two-Stage Retrieval")
    add_analysis(db, PID, "critique", SENTENCES, evidence={SENTENCES[1][0]: ("BM25 is the baseline.", 4)})
    return PID


def stored(db) -> list[SentenceJudgement]:
    with db() as s:
        return list(s.scalars(select(SentenceJudgement).order_by(SentenceJudgement.id)))


def note_text(db, tmp_path) -> str:
    result = export_notes(db, [PID], tmp_path / "notes")
    return result.notes[0].read_text(encoding="utf-8")


# ---------------------------------------------------------------- storing


def test_a_judgement_is_stored_with_the_audit_verdict_it_overrules(app, reviewed):
    result = app.paper(PID[:10]).judge("critique-2", "supported", comment="Table 3 shows it.", by="Ada")

    assert result.sentence == SENTENCES[1][0]
    assert result.audit_verdict == "unsupported"
    assert result.judgement.overrules and result.judgement.sentence_id == "critique-2"
    [row] = stored(app.services.db)
    assert (row.paper_id, row.sentence, row.verdict, row.comment, row.judged_by, row.audit_verdict) == (
        PID,
        SENTENCES[1][0],
        "supported",
        "Table 3 shows it.",
        "Ada",
        "unsupported",
    )
    assert row.sentence_sha256 == sentence_key(SENTENCES[1][0])
    assert json.loads(json.dumps(result.to_json()))["judgement"]["overrules_audit"] is True


def test_judging_again_replaces_the_judgement_and_withdrawing_removes_it(app, reviewed):
    app.paper(PID).judge("critique-1", "unsupported", comment="first")
    again = app.paper(PID).judge("critique-1", "supported", comment="  second thoughts\x1b[31m ")
    assert not again.judgement.overrules  # the audit passed it too
    [row] = stored(app.services.db)
    assert (row.verdict, row.comment) == ("supported", "second thoughts[31m")

    withdrawn = app.paper(PID).judge("critique-1", None)
    assert withdrawn.judgement is None
    assert stored(app.services.db) == []


def test_a_sentence_that_does_not_exist_or_changed_is_refused_in_one_line(app, reviewed):
    with pytest.raises(
        ReaderError, match=r"'critique-9': no such sentence; give one of critique-1 … critique-3"
    ):
        app.paper(PID).judge("critique-9", "supported")
    with pytest.raises(ReaderError, match="no such sentence"):
        app.paper(PID).judge("synthesis-1", "supported")
    with pytest.raises(ReaderError, match="reload the page"):
        app.paper(PID).judge("critique-2", "supported", expected=sentence_key("Another sentence."))
    with pytest.raises(ReaderError, match="'maybe': a judgement is 'supported' or 'unsupported'"):
        app.paper(PID).judge("critique-2", "maybe")
    with pytest.raises(ReaderError, match="comment is 2,001 characters long; keep it to 2,000"):
        app.paper(PID).judge("critique-2", "supported", comment="x" * 2001)
    assert stored(app.services.db) == []


def test_a_judgement_stays_with_its_sentence_across_a_new_review_and_goes_with_the_paper(app, reviewed):
    db = app.services.db
    app.paper(PID).judge("critique-2", "supported")
    with transaction(db) as s:  # reviewed again: the sentence now comes first, and passes
        from reader.store.tables import Analysis

        s.delete(s.scalars(select(Analysis)).one())
    add_analysis(db, PID, "critique", [(SENTENCES[1][0], "supported"), ("A new sentence.", "supported")])

    shown = app.paper(PID).analyses().to_json()
    [first, second] = shown["analyses"][0]["sentences"]
    assert first["id"] == "critique-1" and first["judgement"]["verdict"] == "supported"
    assert first["judgement"]["audit_verdict"] == "supported" and not first["judgement"]["overrules_audit"]
    assert second["judgement"] is None

    with transaction(db) as s:
        s.delete(s.get(Paper, PID))
    assert stored(db) == []


# ---------------------------------------------------------------- the note


def test_an_overruled_flag_is_a_readers_callout_under_the_audits_in_the_note(app, reviewed, tmp_path):
    app.paper(PID).judge("critique-2", "supported", comment="Table 3 <b>shows</b> it.", by="Ada")
    text = note_text(app.services.db, tmp_path)

    warning = text.index("> [!warning] 待验证")
    callout = text.index("> [!note] Reader's judgement: supported — overrules the audit's 待验证 flag")
    assert warning < callout
    block = text[callout:].split("\n\n", 1)[0]
    assert "> Comment: Table 3 &lt;b&gt;shows&lt;/b&gt; it." in block
    assert "> Decided by Ada on 20" in block
    front = front_matter(text)
    assert front["reader_judgements"] == 1 and front["overruled_by_reader"] == 1
    assert front["flagged"] == 1  # the audit's own figures are left as they were
    assert "reader/judged" in front["tags"]
    assert "Reader's judgements: 1 (1 overrules the audit)" in text


def test_a_sentence_the_audit_passed_flagged_by_the_reader_is_cut_out_into_its_callout(
    app, reviewed, tmp_path
):
    app.paper(PID).judge("critique-3", "unsupported", comment="The paper says 20 GB.")
    text = note_text(app.services.db, tmp_path)

    head = "> [!note] Reader's judgement: unsupported — overrules the audit, which passed it"
    assert head in text
    block = text[text.index(head) :].split("\n\n", 1)[0].splitlines()
    assert block[1] == "> The index fits in 2 GB."
    assert "> Comment: The paper says 20 GB." in block
    assert "> Decided by the reader on 20" in block[-1]
    # the sentence is in the note once: in the callout, not also left in its paragraph
    assert text.count("The index fits in 2 GB.") == 1
    assert "Retrieval is done in two stages." in text


def test_a_note_without_judgements_is_unchanged(app, reviewed, tmp_path):
    before = note_text(app.services.db, tmp_path)
    app.paper(PID).judge("critique-1", "supported")
    app.paper(PID).judge("critique-1", None)
    assert note_text(app.services.db, tmp_path) == before
    assert "Reader's judgement" not in before and "reader_judgements" not in before


# ---------------------------------------------------------------- the commands


def invoke(app, *args):
    from reader.cli import cli

    return CliRunner().invoke(cli, list(args), obj=app, catch_exceptions=False)


def test_reader_judge_records_and_reader_show_and_export_include_it(app, reviewed, tmp_path):
    done = invoke(app, "judge", PID[:8], "critique-2", "--supported", "--comment", "Table 3.", "--by", "Ada")
    assert done.exit_code == 0, done.output
    assert "critique-2: supported (overrules the audit's 待验证 flag)" in done.output

    shown = invoke(app, "show", PID[:8])
    assert "Reader's judgement" in shown.output and "critique-2" in shown.output
    assert "Table 3." in shown.output
    verdicts = invoke(app, "show", PID[:8], "--verdicts")
    assert "reader: supported (overrules the audit's 待验证 flag) — Table 3. (Ada)" in verdicts.output
    as_json = json.loads(invoke(app, "show", PID[:8], "--json").output)
    assert as_json["judgements"][0]["sentence_id"] == "critique-2"

    exported = invoke(app, "export", "--all", "--out", str(tmp_path / "out"))
    assert exported.exit_code == 0, exported.output
    [note] = (tmp_path / "out").glob("two-stage-retrieval-*.md")
    assert "Reader's judgement: supported" in note.read_text(encoding="utf-8")

    withdrawn = invoke(app, "judge", PID[:8], "critique-2", "--withdraw")
    assert "withdrawn" in withdrawn.output and stored(app.services.db) == []


def test_reader_judge_without_a_verdict_says_what_to_give(app, reviewed):
    from reader.cli import cli

    result = CliRunner().invoke(cli, ["judge", PID[:8], "critique-2"], obj=app)
    assert result.exit_code != 0
    assert "--supported, --unsupported or --withdraw" in result.output
    assert "Traceback" not in result.output


# ---------------------------------------------------------------- at the same moment


def _at_once(n: int, work) -> list:
    """work(i) in n threads released together; each result, or the exception it raised."""
    import threading

    start = threading.Barrier(n)
    results: list = [None] * n

    def run(i):
        start.wait()
        try:
            results[i] = work(i)
        except Exception as exc:  # noqa: BLE001 - the test looks at what each got
            results[i] = exc

    threads = [threading.Thread(target=run, args=(i,)) for i in range(n)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join(60)
    return results


def test_first_judgements_of_one_sentence_at_the_same_moment_all_succeed_and_the_last_one_stays(
    app, reviewed, reader_env
):
    """Six `reader judge` runs at once (each its own Reader, as processes are), on each sentence,
    four times over: none fails on the unique (paper, sentence) row (it was an IntegrityError
    with the SQL in about one round in two); one row per sentence stays, the last one's."""
    from reader.facade import Reader

    readers = [Reader() for _ in range(6)]
    verdicts = ("supported", "unsupported")
    for round_ in range(4):
        for n in (1, 2, 3):
            sid = f"critique-{n}"
            results = _at_once(
                6, lambda i: readers[i].paper(PID).judge(sid, verdicts[i % 2], comment=f"run {round_}.{i}")
            )
            failed = [r for r in results if isinstance(r, Exception)]
            assert not failed, [f"{type(r).__name__}: {str(r)[:200]}" for r in failed]
        rows = stored(app.services.db)
        assert len(rows) == 3
        for row in rows:
            assert row.comment.startswith(f"run {round_}.")
            assert row.verdict == verdicts[int(row.comment[-1]) % 2]
        for n in (1, 2, 3):
            app.paper(PID).judge(f"critique-{n}", None)


def test_reader_judge_refuses_conflicting_verdicts_in_one_line(app, reviewed):
    from reader.cli import cli

    for flags in (["--supported", "--unsupported"], ["--unsupported", "--withdraw"]):
        result = CliRunner().invoke(cli, ["judge", PID[:8], "critique-2", *flags], obj=app)
        assert result.exit_code != 0, result.output
        assert "Traceback" not in result.output
        assert f"give one of --supported, --unsupported or --withdraw, not {flags[0]} and {flags[1]}" in (
            result.output
        )
    assert stored(app.services.db) == []


def test_withdrawing_what_was_never_judged_says_so(app, reviewed):
    nothing = invoke(app, "judge", PID[:8], "critique-2", "--withdraw")
    assert nothing.exit_code == 0, nothing.output
    assert "withdrawn" not in nothing.output
    assert "critique-2: you had no judgement of it to withdraw; nothing changed" in nothing.output
    assert app.paper(PID).judge("critique-2", None).withdrawn is False

    invoke(app, "judge", PID[:8], "critique-2", "--supported")
    done = invoke(app, "judge", PID[:8], "critique-2", "--withdraw")
    assert "critique-2: your judgement is withdrawn" in done.output
    as_json = json.loads(invoke(app, "judge", PID[:8], "critique-2", "--withdraw", "--json").output)
    assert as_json["judgement"] is None and as_json["withdrawn"] is False


def test_a_judgement_whose_sentence_a_new_review_dropped_stays_in_the_note(app, reviewed, tmp_path):
    """After "Review again" without the judged sentence, the judgement vanished from the note
    (only `reader show` listed it): it is listed as no longer in the review."""
    from reader.store.tables import Analysis

    db = app.services.db
    app.paper(PID).judge("critique-2", "supported", comment="Table 3 shows it.", by="Ada")
    app.paper(PID).judge("critique-1", "unsupported")
    with transaction(db) as s:
        s.delete(s.scalars(select(Analysis)).one())
    add_analysis(db, PID, "critique", [(SENTENCES[0][0], "supported"), ("A new sentence.", "supported")])

    text = note_text(db, tmp_path)
    section = text.split("## Reader's judgements no longer in the review", 1)[1].split("\n## ", 1)[0]
    head = "> [!note] Reader's judgement: supported — the sentence is no longer in the review"
    assert head in section
    block = section[section.index(head) :].split("\n\n", 1)[0].splitlines()
    assert block[1] == "> " + SENTENCES[1][0]
    assert "> Comment: Table 3 shows it." in block and "> Decided by Ada on 20" in block[-1]
    # the judgement of the sentence still there stays under it
    assert "> [!note] Reader's judgement: unsupported — overrules the audit, which passed it" in text
    assert text.count("Reader's judgement:") == 2
    front = front_matter(text)
    assert front["reader_judgements"] == 1 and front["reader_judgements_no_longer_in_review"] == 1
    assert front["overruled_by_reader"] == 1  # the dropped one overrules nothing now
    assert "Reader's judgements of sentences no longer in the review: 1" in text
