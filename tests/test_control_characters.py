"""Control characters from outside (an LLM's reply, a Zotero field) are taken out where the
text enters: nothing stored, exported or printed carries a NUL or a terminal's escape
sequence, and PostgreSQL, which refuses NUL in text, stores every reply. What was stored
before is escaped when it is printed to a terminal."""

from __future__ import annotations

import re

import pytest
from click.testing import CliRunner
from conftest import SAMPLE_PAPER, make_reader
from sqlalchemy import select, text, update
from test_headingless import PARAGRAPHS
from zotero_fixture import ZoteroBuilder

from reader.llm.base import user
from reader.llm.dryrun import dry_run_answer
from reader.llm.logged import LoggedLLM, cache_key
from reader.llm.scripted import ScriptedLLM
from reader.store.calls import CallStore
from reader.store.tables import Analysis, LLMCacheEntry, LLMCall, Paper, ReviewJob

# a terminal title change, a bell, a colour, an 8-bit CSI, a NUL and a carriage return
HOSTILE = "\x1b]0;pwned\x07\x1b[31m\x9b2J\x00\r"
CONTROL = re.compile("[\x00-\x08\x0b-\x1f\x7f-\x9f]")


def _hostile_answer(prompt: str, stage: str) -> str:
    answer = dry_run_answer(prompt, stage)
    return f"{answer}{HOSTILE}" if stage in ("verify", "audit") else f"{HOSTILE}{answer} Done{HOSTILE}."


def hostile_llm(model: str = "scripted") -> ScriptedLLM:
    """The dry-run answers of each stage, with HOSTILE around them."""
    return ScriptedLLM(_hostile_answer, model=model, with_stage=True)


def sparta_paper(tmp_path):
    paper = tmp_path / "sparta.txt"
    paper.write_text(
        "Sparse retrieval for long scientific documents\n\n" + "\n\n".join(PARAGRAPHS) + "\n",
        encoding="utf-8",
    )
    return paper


def test_a_reply_is_cleaned_before_it_is_returned_cached_or_logged(db):
    inner = ScriptedLLM(lambda prompt: f"ok{HOSTILE} then\tmore\nlines")
    llm = LoggedLLM(inner, "generator", CallStore(db))
    first = llm.complete(user("q"), stage="critique")
    again = llm.complete(user("q"), stage="critique")
    assert first.text == again.text == "ok]0;pwned[31m2J then\tmore\nlines"
    assert again.cached and inner.calls == 1
    with db() as session:
        assert [e.text for e in session.scalars(select(LLMCacheEntry))] == [first.text]

    failing = LoggedLLM(
        ScriptedLLM().enqueue(RuntimeError(f"bad reply {HOSTILE}")), "verifier", CallStore(db)
    )
    with pytest.raises(RuntimeError):
        failing.complete(user("other"), stage="verify")
    with db() as session:
        errors = [c.error for c in session.scalars(select(LLMCall).order_by(LLMCall.id))]
    assert errors == ["", "", "RuntimeError: bad reply ]0;pwned[31m2J"]


def test_a_cached_reply_stored_before_the_cleaning_is_served_clean(db):
    llm = LoggedLLM(ScriptedLLM(lambda prompt: "fresh"), "generator", CallStore(db))
    key = cache_key(llm.model, user("q"), 0.0, 512)
    CallStore(db).remember(
        key,
        {
            "model": "scripted",
            "text": f"old{HOSTILE}",
            "prompt_tokens": 1,
            "completion_tokens": 1,
            "logprobs": None,
        },
    )
    assert llm.complete(user("q")).text == "old]0;pwned[31m2J"


def _hostile_zotero(data_dir):
    z = ZoteroBuilder(data_dir)
    item = z.item(
        "EVIL2345",
        "journalArticle",
        {
            "title": f"Evil{HOSTILE} Paper",
            "date": "2021",
            "DOI": "10.1234/evil\x00",
            "publicationTitle": f"Journal{HOSTILE}",
        },
        authors=[("Mal\x1b[31mlory", f"Hacker{HOSTILE}")],
    )
    z.add_to(z.collection(f"Th{HOSTILE}esis", "COLL2345"), item)
    z.stored_pdf(item, "PDFK2345", SAMPLE_PAPER)
    z.close()


def _cli(args):
    from reader.cli import cli

    out = CliRunner().invoke(cli, args)
    assert out.exit_code == 0, out.output
    return out.output


def test_escapes_from_zotero_and_the_llm_reach_no_terminal_note_or_bibtex(
    reader_env, tmp_path, monkeypatch, capsys
):
    import reader.index.dense as dense
    from reader.commands.review import print_table

    monkeypatch.setattr(dense, "load_embedder", lambda settings: dense.HashingEmbedder())
    monkeypatch.setenv("READER_LLM_BASE_URL", "scripted:")
    _hostile_zotero(tmp_path / "Zotero")
    llm = hostile_llm()
    app = make_reader(llm=llm, verifier=llm, cache=None)
    report = app.review([], jobs=1, zotero=app.library.zotero_library(tmp_path / "Zotero"))
    assert len(report.by_status("reviewed")) == 1, report.to_json()

    with app.services.db() as session:
        paper = session.scalars(select(Paper)).one()
        assert paper.title == "Evil]0;pwned[31m2J Paper"
        assert paper.authors == ["Mal[31mlory Hacker]0;pwned[31m2J"] and paper.doi == "10.1234/evil"
        stored = [paper.title, *paper.authors, paper.doi, repr(paper.zotero_meta)]
        stored += session.scalars(select(Analysis.final_text)).all()
    assert not any(CONTROL.search(t) for t in stored), stored

    exported = app.export(tmp_path / "notes")
    app.library.bibtex(tmp_path / "papers.bib")
    written = [p.read_text(encoding="utf-8") for p in (tmp_path / "notes").glob("*.md")]
    written.append((tmp_path / "papers.bib").read_text(encoding="utf-8"))
    assert len(exported.notes) == 1 and len(written) == 3
    assert all("pwned" in t and not CONTROL.search(t) for t in written)

    print_table(report)
    assert not CONTROL.search(capsys.readouterr().out)
    for args in (["papers"], ["show", paper.id, "--verdicts"], ["jobs"]):
        output = _cli(args)
        assert "pwned" in output and not CONTROL.search(output), (args, output)


def test_controls_stored_by_an_earlier_version_are_escaped_on_the_terminal(
    reader_env, tmp_path, monkeypatch, capsys
):
    """What reaches a terminal is escaped even when the database holds raw escapes (written
    before they were cleaned, or by hand); rich's markup in a title is shown as written."""
    import reader.index.dense as dense
    from reader.commands.review import print_table

    monkeypatch.setattr(dense, "load_embedder", lambda settings: dense.HashingEmbedder())
    monkeypatch.setenv("READER_LLM_BASE_URL", "scripted:")
    app = make_reader(llm=ScriptedLLM(dry_run_answer, with_stage=True), cache=None)
    report = app.review([sparta_paper(tmp_path)], jobs=1)
    raw = f"Old{HOSTILE} [/b] title"
    db = app.services.db
    with db() as session:
        session.execute(update(Paper).values(title=raw))
        session.execute(update(Analysis).values(final_text=f"A critique{HOSTILE}."))
        session.execute(update(ReviewJob).values(error=f"failed{HOSTILE}", status="error"))
        session.execute(text("UPDATE sentence_verdicts SET text = :t"), {"t": f"A sentence{HOSTILE}."})
        session.commit()
        paper_id = session.scalars(select(Paper.id)).one()
    report.papers[0].title = raw

    print_table(report)
    outputs = [capsys.readouterr().out]
    outputs += [_cli(args) for args in (["papers"], ["show", paper_id, "--verdicts"], ["jobs"])]
    for output in outputs:
        assert "\\x1b" in output and not CONTROL.search(output), output
    assert "[/b]" in outputs[0] + outputs[1]
    assert "A critique\\x1b]0;pwned\\x07" in outputs[2]


# ---------------------------------------------------------------- bidi overrides, and every surface

# U+202E (right-to-left override) shows what follows it backwards: "evil\u202efdp.exe" reads as
# "evilexe.pdf"; the other embeddings, overrides and isolates do the like
BIDI = "\u202a\u202b\u202c\u202d\u202e\u2066\u2067\u2068\u2069"
BIDI_OR_CONTROL = re.compile(f"[\x00-\x08\x0b-\x1f\x7f-\x9f{BIDI}]")


def test_bidi_overrides_and_escapes_in_a_zotero_attachment_name_reach_no_terminal_note_or_bibtex(
    reader_env, tmp_path, monkeypatch
):
    """A Zotero attachment's file name put a raw escape code into the exported note, and U+202E
    reached the terminal, the notes and BibTeX. Each surface is checked: what Zotero gives is
    cleaned where it enters, the file name (kept as the file's real name) where it is shown."""
    import reader.index.dense as dense

    monkeypatch.setattr(dense, "load_embedder", lambda settings: dense.HashingEmbedder())
    monkeypatch.setenv("READER_LLM_BASE_URL", "scripted:")
    z = ZoteroBuilder(tmp_path / "Zotero")
    item = z.item(
        "BIDI2345",
        "journalArticle",
        {"title": "Harmless\u202eTitle\u2066", "date": "2022", "publicationTitle": "Jour\u202dnal"},
        authors=[("Ada\u202e", "Love\u2067lace")],
    )
    z.stored_pdf(item, "PDFB2345", SAMPLE_PAPER, name="report\x1b[31m\u202efdp.exe.pdf")
    z.close()
    llm = ScriptedLLM(dry_run_answer, with_stage=True)
    app = make_reader(llm=llm, verifier=llm, cache=None)
    report = app.review([], jobs=1, zotero=app.library.zotero_library(tmp_path / "Zotero"))
    assert len(report.by_status("reviewed")) == 1, report.to_json()
    with app.services.db() as session:
        paper = session.scalars(select(Paper)).one()
        assert paper.title == "HarmlessTitle" and paper.authors == ["Ada Lovelace"]
        assert "\x1b" in paper.file_name  # the file's real name, kept to find it again

    exported = app.export(tmp_path / "notes")
    app.library.bibtex(tmp_path / "papers.bib")
    [note] = exported.notes
    written = {p.name: p.read_text(encoding="utf-8") for p in (tmp_path / "notes").glob("*.md")}
    written["papers.bib"] = (tmp_path / "papers.bib").read_text(encoding="utf-8")
    assert "report[31mfdp.exe.pdf" in written[note.name]  # the name, without what it hid
    assert "HarmlessTitle" in written["papers.bib"] and "Journal" in written["papers.bib"]
    for name, body in written.items():
        assert not BIDI_OR_CONTROL.search(body), (name, BIDI_OR_CONTROL.findall(body))

    for args in (["papers"], ["show", paper.id], ["show", paper.id, "--verdicts"], ["jobs"]):
        output = _cli(args)
        assert not BIDI_OR_CONTROL.search(output), (args, output)


def test_bidi_overrides_stored_by_an_earlier_version_are_cleaned_on_every_surface(
    reader_env, tmp_path, monkeypatch
):
    """Text stored before bidi controls were taken out (or by hand) is cleaned where it leaves:
    escaped on the terminal (`\\u202e`), dropped from the note, the notes zip's index and BibTeX."""
    import reader.index.dense as dense

    monkeypatch.setattr(dense, "load_embedder", lambda settings: dense.HashingEmbedder())
    monkeypatch.setenv("READER_LLM_BASE_URL", "scripted:")
    app = make_reader(llm=ScriptedLLM(dry_run_answer, with_stage=True), cache=None)
    app.review([sparta_paper(tmp_path)], jobs=1)
    with app.services.db() as session:
        session.execute(
            update(Paper).values(
                title="Old\u202e title\u2066",
                authors=["Mal\u202elory"],
                file_name="a\u202efdp.exe.txt",
                doi="10.1/x\u202e",
            )
        )
        session.execute(update(Analysis).values(final_text="A critique\u202e that\u2067 hides."))
        session.execute(
            text("UPDATE chunks SET text = :t"), {"t": "Sparse retrieval\u202e hides\x1b[31m here."}
        )
        session.commit()
        paper_id = session.scalars(select(Paper.id)).one()

    exported = app.export(tmp_path / "notes")
    app.library.bibtex(tmp_path / "papers.bib")
    files = [*exported.notes, exported.index, tmp_path / "papers.bib"]
    for path in files:
        body = path.read_text(encoding="utf-8")
        assert "Old title" in body and not BIDI_OR_CONTROL.search(body), (path.name, body[:500])

    for args in (
        ["papers"],
        ["show", paper_id],
        ["jobs"],
        ["export", paper_id, "--out", str(tmp_path / "again")],
        ["search", "sparse retrieval"],
        ["stats"],
    ):
        output = _cli(args)
        assert not BIDI_OR_CONTROL.search(output), (args, output)
    assert "Sparse retrieval\\u202e hides\\x1b[31m here." in _cli(["search", "sparse retrieval"])
    shown = _cli(["show", paper_id])
    assert "Old\\u202e title" in shown and "A critique\\u202e that" in shown
