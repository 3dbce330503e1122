"""The upload and ask pages' smaller promises in a real browser (headless chromium, as
tests/test_web_browser.py): the upload page says when the server stops answering, its file
input and progress bars have names, Ctrl/Cmd+Enter asks, and a "Not found" answer's badge is
not the green of a checked one. Screenshots at 1280 and 390 px."""

from __future__ import annotations

import shutil
from contextlib import contextmanager
from datetime import UTC, datetime, timedelta
from pathlib import Path

from sqlalchemy import delete
from test_web_browser import (  # noqa: F401 - served and page are fixtures
    NARROW,
    page,
    served,
)

from reader.store.db import transaction
from reader.store.tables import Question, ReviewJob

ELSEWHERE = "/elsewhere-small/"


def screenshots(tab, tmp_path, name: str) -> None:
    """The page at 1280 and 390 px, full height, kept in tmp_path and /tmp."""
    for width in (1280, NARROW):
        tab.set_viewport_size({"width": width, "height": 900})
        shot = tmp_path / f"{name}_{width}.png"
        tab.screenshot(path=str(shot), full_page=True)
        shutil.copyfile(shot, Path(f"/tmp/reader_{name}_{width}.png"))
        assert tab.evaluate("document.documentElement.scrollWidth") <= width
    tab.set_viewport_size({"width": 1280, "height": 900})


@contextmanager
def running_elsewhere(db, *names: str):
    """Reviews another worker holds (so the page polls, and no worker here takes them)."""
    add_running(db, *names)
    try:
        yield
    finally:
        with transaction(db) as session:
            session.execute(delete(ReviewJob).where(ReviewJob.source_path.like(f"{ELSEWHERE}%")))


def add_running(db, *names: str) -> None:
    now = datetime.now(UTC)
    with transaction(db) as session:
        for name in names:
            session.add(
                ReviewJob(
                    source_path=f"{ELSEWHERE}{name}",
                    status="running",
                    stage="read",
                    queued_at=now - timedelta(seconds=30),
                    started_at=now - timedelta(seconds=20),
                    worker="elsewhere:1",
                    lease_until=now + timedelta(hours=1),
                )
            )


def test_the_upload_page_says_when_the_server_stops_answering(served, page, tmp_path):  # noqa: F811
    with running_elsewhere(served.ctx.services.db, "slow.pdf"):
        page.goto(f"{served.url}/upload")
        status = page.locator("#server-status")
        page.locator("#jobs tbody tr", has_text="slow.pdf").wait_for()
        page.wait_for_timeout(1500)  # polls that answer: no word of trouble
        assert not status.is_visible()

        # a proxy's error page, then no answer at all
        page.route("**/api/jobs*", lambda route: route.fulfill(status=502, body="Bad gateway"))
        status.wait_for(state="visible", timeout=10_000)
        assert status.inner_text() == "The server is not answering; retrying…"
        page.unroute("**/api/jobs*")
        page.route("**/api/jobs*", lambda route: route.abort("connectionrefused"))
        page.wait_for_timeout(2500)
        assert status.is_visible() and "not answering" in status.inner_text()
        assert status.get_attribute("role") == "status"
        screenshots(page, tmp_path, "upload_server_down")

        page.unroute("**/api/jobs*")  # the server is back: the line goes
        status.wait_for(state="hidden", timeout=10_000)
        assert page.locator("#jobs tbody tr", has_text="slow.pdf").count() == 1


def accessible_names(tab, role: str) -> list[str]:
    """The names Chromium's accessibility tree gives the page's elements of `role`."""
    cdp = tab.context.new_cdp_session(tab)
    nodes = cdp.send("Accessibility.getFullAXTree")["nodes"]
    return [
        (node.get("name") or {}).get("value", "")
        for node in nodes
        if (node.get("role") or {}).get("value") == role and not node.get("ignored")
    ]


def test_the_file_input_and_every_progress_bar_have_names(served, page, tmp_path):  # noqa: F811
    db = served.ctx.services.db
    with running_elsewhere(db, "listed.pdf"):
        page.goto(f"{served.url}/upload")
        page.locator("#jobs tbody tr", has_text="listed.pdf").wait_for()
        add_running(db, "polled.pdf")  # a row the page's script adds
        page.locator("#jobs tbody tr", has_text="polled.pdf").wait_for()
        page.locator("#overall").wait_for(state="visible")

        assert page.get_by_label("Choose PDF files").evaluate("e => e.id") == "file-input"
        bars = accessible_names(page, "progressbar")
        assert len(bars) == page.locator("progress:visible").count() >= 3, bars
        assert all(name.strip() for name in bars), bars
        assert any("listed.pdf" in name for name in bars), bars
        assert any("polled.pdf" in name for name in bars), bars
        screenshots(page, tmp_path, "upload_labels")


def test_ctrl_or_cmd_enter_in_the_question_box_asks(served, page, tmp_path):  # noqa: F811
    page.goto(f"{served.url}/ask")
    box = page.locator("#question")
    box.fill("What is measured?")
    box.press("Enter")  # a plain Enter is a new line, not a question
    page.wait_for_timeout(300)
    assert box.input_value() == "What is measured?\n"
    assert page.locator("#ask-wait").is_hidden()
    for keys in ("Control+Enter", "Meta+Enter"):
        page.goto(f"{served.url}/ask")
        page.fill("#question", "What is measured?")
        # the server's answer to the POST, not the waiting line: with the scripted model the
        # page can have moved on to the stored answer before a locator looks at it
        with page.expect_response("**/api/ask") as answered:
            page.press("#question", keys)
        sent = answered.value.request
        assert "question=What+is+measured" in (sent.post_data or "") or "What is measured?" in (
            sent.post_data or ""
        )
        assert answered.value.ok and answered.value.json().get("id"), answered.value.text()
    page.goto(f"{served.url}/ask")
    assert "Ctrl+Enter" in page.locator("#ask-form").inner_text()
    screenshots(page, tmp_path, "ask_shortcut")


def test_a_not_found_answer_is_not_badged_green(served, page, tmp_path):  # noqa: F811
    ids = {}
    with transaction(served.ctx.services.db) as session:
        for key, answer, grounded in (
            ("answered", "The yield rose [1].", True),
            ("not found", "Not found in the papers.", True),
        ):
            row = Question(
                question=f"A {key} question?",
                answer=answer,
                grounded=grounded,
                grounded_reason="",
                route="correct",
                confidence=0.5,
                details={"sources": [], "notes": []},
            )
            session.add(row)
            session.flush()
            ids[key] = row.id

    def badge_colour(question_id: int) -> str:
        page.goto(f"{served.url}/ask/{question_id}")
        return page.locator("#grounded").evaluate("e => getComputedStyle(e).backgroundColor")

    green = badge_colour(ids["answered"])
    grey = badge_colour(ids["not found"])
    assert grey != green
    assert page.locator("#grounded").inner_text() == "not found in the papers"
    screenshots(page, tmp_path, "ask_not_found")


def test_review_again_explains_the_cache_and_lands_on_the_job_s_progress(served, page, tmp_path):  # noqa: F811
    from conftest import SAMPLE_PAPER
    from sqlalchemy import select

    [result] = served.ctx.ingest([SAMPLE_PAPER])
    pid = result.paper_id
    page.goto(f"{served.url}/paper/{pid}")
    page.click("#review-again")
    page.wait_for_url(f"**/paper/{pid}/review")
    assert "reused from the cache" in page.locator("main").inner_text()
    assert page.locator("#cache-reuse").is_checked()  # the quick read unless asked otherwise
    screenshots(page, tmp_path, "review_again_choice")

    page.check("#cache-fresh")
    page.click("#confirm-review")
    page.wait_for_url("**/upload?job=*&read=fresh")
    notice = page.locator("#upload-messages .message.info")
    assert "asking the model afresh" in notice.inner_text()
    job_id = page.url.split("job=")[1].split("&")[0]
    row = page.locator(f'#jobs tbody tr[data-job="{job_id}"]')
    assert row.is_visible()
    page.locator("#overall").wait_for(state="visible")  # the bar follows this job
    page.wait_for_function("() => /reviewed/.test(document.getElementById('overall-text').textContent)")
    with served.ctx.services.db() as session:
        job = session.get(ReviewJob, int(job_id))
        assert job.paper_id == pid and (job.summary or {}).get("fresh") is True
        assert session.scalars(select(ReviewJob.id).where(ReviewJob.paper_id == pid)).all() == [int(job_id)]
    screenshots(page, tmp_path, "review_again_landing")
