"""The upload page in Chromium for a near-duplicate (issue 47, item 17): a job the queue set aside
as the version of a reviewed paper says so, links that paper's review, and its "Review anyway"
posts the page's form token to the paper's review route (tests/test_near_duplicates.py checks
what the server does with it)."""

from __future__ import annotations

import json
from urllib.parse import parse_qs

import pytest
from conftest import make_reader, serving


@pytest.fixture(scope="module")
def served(tmp_path_factory):
    from reader.llm.scripted import ScriptedLLM
    from reader.web.app import create_app

    home = tmp_path_factory.mktemp("near_duplicate_home")
    ctx = make_reader(home, llm=ScriptedLLM(lambda prompt: "unused", model="scripted"))
    _two_versions(ctx.services.db)
    with serving(create_app(ctx, allowed_hosts=["127.0.0.1"])) as url:
        yield url


def _two_versions(db) -> None:
    """The twin, reviewed, and a copy of it set aside as its near-duplicate (a later version)."""
    from test_near_duplicates import FEB, JAN, WORDS, add_version

    from reader.store.db import transaction
    from reader.store.tables import Analysis, ReviewJob

    add_version(db, TWIN, "Wheat Grain Filling", WORDS, file_name="wheat.pdf", pages=12, added=JAN)
    revised = WORDS[:400] + ["now", "revised"] + WORDS[402:]
    add_version(db, COPY, "Wheat Grain Filling", revised, file_name="wheat-v2.pdf", pages=13, added=FEB)
    twin = {"paper_id": TWIN, "title": "Wheat Grain Filling", "reason": "the same DOI"}
    with transaction(db) as s:
        s.add_all(
            Analysis(paper_id=TWIN, kind=kind, final_text="Fine.") for kind in ("critique", "synthesis")
        )
        s.add(
            ReviewJob(
                source_path="wheat-v2.pdf",
                paper_id=COPY,
                status="near-duplicate",
                summary={"near_duplicate": twin},
            )
        )


TWIN, COPY = "a" * 64, "c" * 64
JOB = {
    "id": "9",
    "name": "wheat-v2.pdf",
    "stage": "not reviewed",
    "percent": 100,
    "status": "near-duplicate",
    "paper_id": COPY,
    "error": "",
    "note": f"near-duplicate of Wheat Grain Filling ({TWIN[:8]}), the same DOI: not reviewed",
    "similar": {"paper_id": TWIN, "title": "Wheat Grain Filling", "reason": "the same DOI"},
}


def test_a_near_duplicate_upload_links_the_twin_s_review_and_can_be_reviewed_anyway(
    served, chromium, tmp_path
):
    context = chromium.new_context(viewport={"width": 1280, "height": 900})
    page = context.new_page()
    errors, posted = [], []
    page.on("pageerror", lambda exc: errors.append(str(exc)))
    jobs = json.dumps(
        {"jobs": [JOB], "batch": {"percent": 100, "done": 1, "total": 1, "text": "The review finished."}}
    )
    page.route("**/api/jobs*", lambda r: r.fulfill(status=200, content_type="application/json", body=jobs))
    page.route(
        "**/upload",
        lambda r: (
            r.fulfill(status=200, content_type="application/json", body=json.dumps({"jobs": [JOB]}))
            if r.request.method == "POST"
            else r.continue_()
        ),
    )

    def review_route(route):
        posted.append((route.request.url, parse_qs(route.request.post_data or "")))
        route.fulfill(status=200, content_type="text/html", body="<p>queued</p>")

    page.route(f"**/paper/{COPY}/review", review_route)
    page.goto(f"{served}/upload")
    page.set_input_files(
        "#file-input", {"name": "wheat-v2.pdf", "mimeType": "application/pdf", "buffer": b"%PDF-1.4"}
    )
    note = page.locator('tr[data-job="9"] .job-near-duplicate')
    note.wait_for()
    assert page.locator('tr[data-job="9"] .job-status').inner_text().startswith("near-duplicate")
    assert "A version of Wheat Grain Filling (the same DOI)" in note.inner_text()
    assert "this copy was not reviewed" in note.inner_text()
    assert note.locator("a").first.get_attribute("href") == f"/paper/{TWIN}"
    assert note.locator("a.similar-remove").get_attribute("href") == f"/paper/{COPY}/delete"
    for width in (1280, 390):
        page.set_viewport_size({"width": width, "height": 900})
        page.screenshot(path=str(tmp_path / f"near_duplicate_{width}.png"), full_page=True)
        page.screenshot(path=f"/tmp/reader_near_duplicate_{width}.png", full_page=True)
    token = page.locator('#upload-form input[name="csrf_token"]').get_attribute("value")
    note.locator("button.review-anyway").click()
    page.wait_for_url(f"**/paper/{COPY}/review")
    assert posted == [(f"{served}/paper/{COPY}/review", {"csrf_token": [token], "cache": ["reuse"]})]
    assert errors == []
    context.close()


def test_the_library_tells_the_two_versions_apart(served, chromium, tmp_path):
    context = chromium.new_context(viewport={"width": 1280, "height": 900})
    page = context.new_page()
    page.goto(f"{served}/library")
    rows = {
        row.locator("td.title a").get_attribute("href"): row.locator(".apart").inner_text()
        for row in page.locator("tbody tr").all()
    }
    assert rows[f"/paper/{TWIN}"] == f"wheat.pdf · 12 pages · added 2026-01-05 10:00 · id {TWIN[:8]}"
    copy = rows[f"/paper/{COPY}"]
    assert copy.startswith("wheat-v2.pdf · 13 pages · added 2026-02-05 10:00 · ")
    assert f"near-duplicate of Wheat Grain Filling ({TWIN[:8]}), not reviewed" in copy
    assert f"differs from {TWIN[:8]} on p. 3: “… w10x398 w11x399 now revised" in copy
    for width in (1280, 390):
        page.set_viewport_size({"width": width, "height": 900})
        page.screenshot(path=f"/tmp/reader_near_duplicate_library_{width}.png", full_page=True)
    context.close()
