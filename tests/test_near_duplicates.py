"""Near-duplicates (issue 47, item 17): a paper that comes in as another file of a paper already
reviewed (another version, a re-download: another sha256, the same title and text) is ingested
but not reviewed again; its job says whose near-duplicate it is, `--force` (or the upload
page's "Review anyway") reviews it, and the library's rows of the two say what differs."""

from __future__ import annotations

import hashlib
import os
from datetime import UTC, datetime

import pytest
from conftest import make_reader
from sqlalchemy import func, select
from test_review_cli import write_sample_copy
from test_web import client_for  # noqa: F401 - a fixture

from reader.store.db import transaction
from reader.store.tables import Analysis, Chunk, LLMCall, Paper, ReviewJob
from reader.store.versions import first_difference, told_apart

WRITING = ("critique", "synthesis")


@pytest.fixture
def reviewer(reader_env):
    from reader.llm.dryrun import DryRunLLM

    llm = DryRunLLM()
    return make_reader(llm=llm, verifier=llm), llm


def writing_calls(app, paper_id: str) -> int:
    with app.services.db() as s:
        return s.scalar(select(func.count()).where(LLMCall.paper_id == paper_id, LLMCall.stage.in_(WRITING)))


def test_a_near_duplicate_queued_after_its_twin_is_reviewed_is_not_reviewed_until_forced(reviewer, tmp_path):
    app, llm = reviewer
    first, second = tmp_path / "paper.pdf", tmp_path / "paper (1).pdf"
    write_sample_copy(first, 1)
    write_sample_copy(second, 2)  # the same text, other metadata: another sha256
    (reviewed,) = app.review([first]).papers
    assert reviewed.status == "reviewed", reviewed.error
    twin = reviewed.paper_id
    calls = len(llm.history)

    report = app.review([second])
    (row,) = report.papers
    assert row.status == "near-duplicate" and row.paper_id != twin
    assert len(llm.history) == calls and writing_calls(app, row.paper_id) == 0  # no call made for it
    assert row.near_duplicate["paper_id"] == twin
    assert row.error.startswith("near-duplicate of ") and f"({twin[:8]})" in row.error
    assert (
        report.to_json()["near_duplicates"] == 1
        and report.to_json()["papers"][0]["status"] == "near-duplicate"
    )
    job = next(j for j in app.queue.jobs().rows if j.paper_id == row.paper_id)
    assert job.status == "near-duplicate" and job.near_duplicate["paper_id"] == twin and twin[:8] in job.note
    assert app.queue.jobs().counts()["near-duplicate"] == 1
    with app.services.db() as s:
        assert s.scalar(select(func.count()).where(Analysis.paper_id == row.paper_id)) == 0

    # queued again without --force: still set aside, still no call
    assert app.review([second]).papers[0].status == "near-duplicate" and len(llm.history) == calls

    # the library tells the two rows apart: by file name, and the copy as a near-duplicate
    listed = {p.id: p for p in app.papers()}
    assert listed[row.paper_id].status == "near-duplicate"
    assert listed[twin].apart != listed[row.paper_id].apart
    assert listed[twin].apart.startswith("paper.pdf") and listed[row.paper_id].apart.startswith(
        "paper (1).pdf"
    )
    assert f"near-duplicate of {reviewed.title}" in listed[row.paper_id].apart
    assert f"the same text as {twin[:8]}" in listed[row.paper_id].apart

    # the command line says it too: `reader review` how to review it or keep one, `reader jobs` whose twin
    from click.testing import CliRunner

    from reader.cli import cli

    said = CliRunner().invoke(cli, ["review", str(second), "--quiet"], obj=app, catch_exceptions=False)
    flat = " ".join(said.output.split())
    assert said.exit_code == 0 and "1 near-duplicate not reviewed" in flat
    assert f"--force` reviews it, `reader rm {row.paper_id[:8]}` removes this copy" in flat
    jobs = CliRunner().invoke(cli, ["jobs"], obj=app, catch_exceptions=False).output
    assert "near-duplicate" in jobs and f"({twin[:8]})" in " ".join(jobs.split())
    assert len(llm.history) == calls

    forced = app.review([second], force=True).papers[0]
    assert forced.status == "reviewed", forced.error
    assert writing_calls(app, row.paper_id) > 0 and len(llm.history) > calls


def test_reader_worker_sets_a_queued_near_duplicate_aside_and_says_so(reviewer, tmp_path):
    from click.testing import CliRunner

    from reader.cli import cli

    app, llm = reviewer
    for n in (1, 2):
        write_sample_copy(tmp_path / f"copy{n}.pdf", n)
    (twin,) = app.review([tmp_path / "copy1.pdf"]).papers
    calls = len(llm.history)
    assert app.queue.enqueue([tmp_path / "copy2.pdf"]).rows[0].status == "queued"
    out = CliRunner().invoke(cli, ["worker", "--until-empty", "--quiet"], obj=app, catch_exceptions=False)
    flat = " ".join(out.output.split())
    assert out.exit_code == 0 and "0 reviewed" in flat and "1 near-duplicate not reviewed" in flat
    assert (
        f"near-duplicate: {tmp_path / 'copy2.pdf'}: near-duplicate of {twin.title} ({twin.paper_id[:8]})"
        in flat
    )
    assert len(llm.history) == calls


def test_with_review_near_duplicates_on_a_version_is_reviewed_in_full(reader_env, monkeypatch, tmp_path):
    from reader.llm.dryrun import DryRunLLM

    monkeypatch.setenv("READER_REVIEW_NEAR_DUPLICATES", "on")
    llm = DryRunLLM()
    app = make_reader(llm=llm, verifier=llm)
    for n in (1, 2):
        write_sample_copy(tmp_path / f"copy{n}.pdf", n)
    rows = app.review([tmp_path / "copy1.pdf"]).papers + app.review([tmp_path / "copy2.pdf"]).papers
    assert [r.status for r in rows] == ["reviewed", "reviewed"]
    assert writing_calls(app, rows[1].paper_id) > 0


def add_version(
    db, pid: str, title: str, words: list[str], *, file_name: str, pages=2, year=None, added=None
):
    with transaction(db) as s:
        s.add(Paper(id=pid, title=title, source_path=file_name, source_kind="pdf", pages=pages, year=year))
        if added is not None:
            s.flush()
            s.get(Paper, pid).ingested_at = added
        s.flush()
        s.get(Paper, pid).file_name = file_name
        for n, start in enumerate(range(0, len(words), 50)):  # 60 words, 10 repeated, as ingest does
            s.add(
                Chunk(
                    paper_id=pid,
                    ordinal=n,
                    page_start=1 + n // 3,
                    page_end=1 + n // 3,
                    text=" ".join(words[start : start + 60]),
                )
            )


JAN, FEB = datetime(2026, 1, 5, 10, 0, tzinfo=UTC), datetime(2026, 2, 5, 10, 0, tzinfo=UTC)
WORDS = [f"w{n % 97}x{n}" for n in range(600)]


def test_rows_of_one_title_say_what_differs_and_where_the_text_first_does(db):
    old, new, other = "a" * 64, "b" * 64, "c" * 64
    revised = WORDS[:400] + ["now", "revised"] + WORDS[402:]
    add_version(db, old, "Grain Filling", WORDS, file_name="grain.pdf", pages=12, year=2021, added=JAN)
    add_version(db, new, "Grain filling", revised, file_name="grain-v2.pdf", pages=13, year=2022, added=FEB)
    add_version(db, other, "Something Else", WORDS[:100], file_name="else.pdf")
    with transaction(db) as s:  # the second's review was skipped for the first
        twin = {
            "paper_id": old,
            "title": "Grain Filling",
            "reason": "the same title and nearly the same text",
        }
        s.add(
            ReviewJob(
                source_path="grain-v2.pdf",
                paper_id=new,
                status="near-duplicate",
                summary={"near_duplicate": twin},
            )
        )
    with db() as s:
        apart = told_apart(s, [old, new, other])
        assert (
            first_difference(s, new, old)
            == f"differs from {old[:8]} on p. 3: “… w10x398 w11x399 now revised w14x402 w15x403 w16x404 w17x405 …”"
        )
        assert first_difference(s, old, old) == f"the same text as {old[:8]}"
    assert other not in apart  # alone under its title
    assert apart[old] == f"grain.pdf · 12 pages · 2021 · added 2026-01-05 10:00 · id {old[:8]}"
    assert apart[new].startswith("grain-v2.pdf · 13 pages · 2022 · added 2026-02-05 10:00 · ")
    assert f"near-duplicate of Grain Filling ({old[:8]}), not reviewed" in apart[new]
    assert "differs from aaaaaaaa on p. 3" in apart[new] and apart[new].endswith(f"id {new[:8]}")


def test_the_cli_lists_what_tells_the_rows_apart(db, app):
    from click.testing import CliRunner

    from reader.cli import cli

    add_version(db, "a" * 64, "Grain Filling", WORDS, file_name="grain.pdf")
    add_version(db, "b" * 64, "Grain Filling", WORDS, file_name="grain (copy).pdf")
    out = CliRunner().invoke(cli, ["papers"], obj=app, catch_exceptions=False)
    assert out.exit_code == 0, out.output
    assert "grain.pdf" in out.output and "grain (copy).pdf" in out.output
    assert "the same text as aaaaaaaa · id bbbbbbbb" in " ".join(out.output.split())


# ---------------------------------------------------------------- the upload page


def test_an_upload_of_a_reviewed_paper_s_version_is_not_reviewed_and_review_anyway_reviews_it(db, client_for):  # noqa: F811
    from test_web import PDF_BYTES, page_token
    from test_web_small import BODY, JSON, VersionReview, stored_paper

    old = "a" * 64
    stored_paper(db, old, "Wheat Grain Filling Under Heat", BODY)
    with transaction(db) as s:
        for kind in WRITING:
            s.add(Analysis(paper_id=old, kind=kind, final_text="Fine."))
    review = VersionReview("Wheat grain filling under heat", BODY)
    client = client_for(review=review)
    posted = client.post("/upload", headers=JSON, files={"files": ("v2.pdf", PDF_BYTES, "application/pdf")})
    job_id = posted.json()["jobs"][0]["id"]
    job = client.app.state.runner.wait(job_id, 10)
    assert job.status == "near-duplicate" and review.forced == []  # not read
    listed = next(j for j in client.get("/api/jobs").json()["jobs"] if j["id"] == job_id)
    assert (
        listed["similar"]["paper_id"] == old
        and old[:8] in listed["note"]
        and listed["stage"] == "not reviewed"
    )
    batch = client.get(f"/api/jobs?batch={job_id}").json()["batch"]
    assert batch["done"] == batch["total"] == 1
    new = hashlib.sha256(PDF_BYTES).hexdigest()
    row = client.get("/upload").text.split(f'data-job="{job_id}"')[1].split("</tr>")[0]
    assert "near-duplicate" in row and f'href="/paper/{old}"' in row and "not reviewed" in row
    assert (
        f'action="/paper/{new}/review"' in row
        and "Review anyway" in row
        and f'href="/paper/{new}/delete"' in row
    )
    library = client.get("/library").text
    assert "near-duplicate of Wheat Grain Filling Under Heat" in library

    answer = client.post(
        f"/paper/{new}/review",
        data={"csrf_token": page_token(client), "cache": "reuse"},
        follow_redirects=False,
    )
    assert answer.status_code == 303
    again = answer.headers["location"].split("job=")[1].split("&")[0]
    assert client.app.state.runner.wait(again, 10).status == "done"
    assert review.forced == [True]  # read this time


def test_a_near_duplicate_is_set_aside_on_postgresql(pg_url, tmp_path):
    from postgres_cluster import empty_database

    from reader.llm.dryrun import DryRunLLM

    llm = DryRunLLM()
    app = make_reader(
        tmp_path / "home",
        env=os.environ,
        database_url=empty_database(pg_url, "near_duplicates"),
        llm=llm,
        verifier=llm,
    )
    for n in (1, 2):
        write_sample_copy(tmp_path / f"copy{n}.pdf", n)
    (twin,) = app.review([tmp_path / "copy1.pdf"]).papers
    calls = len(llm.history)
    (row,) = app.review([tmp_path / "copy2.pdf"]).papers
    assert (row.status, row.near_duplicate["paper_id"], len(llm.history)) == (
        "near-duplicate",
        twin.paper_id,
        calls,
    )
    assert [j.status for j in app.queue.jobs().rows] == ["done", "near-duplicate"]
    assert "near-duplicate of" in next(p.apart for p in app.papers() if p.id == row.paper_id)
