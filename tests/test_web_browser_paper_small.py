"""The paper page's smaller faults where its script decides, in a real browser (headless
chromium, as tests/test_web_browser.py): a page link on a phone brings the highlight on screen
and a way back to the text; a link in the flagged list moves the PDF viewer as a click on the
sentence does; a passage across two pages opens on the page holding most of it and says where
it goes on. Also the sentences' names as a screen reader gets them and the library's zero
"Unchecked" count in the ordinary colour. Screenshots at 1280 and 390 px under tmp_path."""

from __future__ import annotations

import time
from pathlib import Path

import pymupdf
import pytest
from test_web import add_analysis, add_paper
from test_web_browser import (  # noqa: F401 - served and page are fixtures
    FABRICATED,
    NARROW,
    page,
    sentence_id,
    served,
    store_audited_synthesis,
)

from reader.web import paper_page

PHONE = {"width": NARROW, "height": 664}  # an iPhone's screen under the browser's bars


def two_page_pdf(path: Path) -> Path:
    """Two pages: an introduction filling page 1, then a Methods section that starts with a line
    at the foot of page 1 and goes on down page 2 (its first passage is a sliver on page 1)."""
    doc = pymupdf.open()
    first = doc.new_page()
    first.insert_text((72, 80), "Carryover of Passages Across Pages", fontsize=18)
    first.insert_text((72, 110), "Ada Lovelace and Charles Babbage", fontsize=11)
    first.insert_text((72, 140), "1 Introduction", fontsize=12, fontname="helvetica-bold")
    y = 160
    for i in range(40):
        first.insert_text(
            (72, y),
            f"Intro line {i}: the measured yield of plot {i} rose by {i}.5 percent over the control.",
            fontsize=10,
        )
        y += 14
    first.insert_text((72, y + 10), "2 Methods", fontsize=12, fontname="helvetica-bold")
    first.insert_text(
        (72, y + 30),
        "The field trial ran for three seasons at two sites with four replicate plots.",
        fontsize=10,
    )
    second = doc.new_page()
    for i in range(30):
        second.insert_text(
            (72, 72 + 14 * i),
            f"Method line {i}: each plot {i} was sown at a density of {200 + i} seeds per square metre.",
            fontsize=10,
        )
    doc.save(path)
    doc.close()
    return path


def page_areas(chunk) -> dict[int, float]:
    areas: dict[int, float] = {}
    for page_no, x0, y0, x1, y1 in chunk.rects or []:
        areas[page_no] = areas.get(page_no, 0.0) + (x1 - x0) * (y1 - y0)
    return areas


@pytest.fixture(scope="module")
def reviewed(served, tmp_path_factory):  # noqa: F811
    """The two-page paper ingested, with a synthesis whose flagged sentence's nearest passage is
    the lowest one on page 1; and the passage that runs from page 1 onto page 2."""
    from sqlalchemy import select

    from reader.index.hits import SearchHit
    from reader.store.tables import Chunk

    pdf = two_page_pdf(tmp_path_factory.mktemp("two_pages") / "two_pages.pdf")
    [result] = served.ctx.ingest([pdf])
    pid = result.paper_id
    with served.ctx.services.db() as session:
        chunks = list(session.scalars(select(Chunk).where(Chunk.paper_id == pid).order_by(Chunk.ordinal)))
    across = next(c for c in chunks if len(page_areas(c)) == 2)
    # the sliver first: the page it starts on holds less of it than the next
    assert page_areas(across)[across.page_start] < page_areas(across)[across.page_start + 1]
    on_one_page = [c for c in chunks if len(page_areas(c)) == 1]
    low = max(
        (c for c in on_one_page if c.rects[0][0] == 1),
        key=lambda c: max(r[4] for r in c.rects),
    )
    claims = [c.text.split(": ", 1)[1].split(". ")[0].strip() + "." for c in on_one_page[1:3]]

    def search(query, paper_id):
        ranked = [low] + [c for c in on_one_page if c is not low][:2]
        return [
            SearchHit(c.id, pid, c.text, c.section or "", c.page_start, c.page_end, 0.9 - 0.1 * i)
            for i, c in enumerate(ranked)
        ]

    store_audited_synthesis(served.ctx, pid, claims + [FABRICATED], search)
    return pid, low, across


def in_view(locator) -> bool:
    return locator.evaluate(
        "e => { const r = e.getBoundingClientRect();"
        " return r.height > 0 && r.top >= 0 && r.bottom <= window.innerHeight; }"
    )


def comes_into_view(locator, timeout_s: float = 10.0) -> bool:
    """In view within `timeout_s`: the viewer scrolls to its highlight after the highlight is
    drawn, and the window may still be scrolling to the sentence the link named."""
    deadline = time.monotonic() + timeout_s
    while not in_view(locator):
        if time.monotonic() > deadline:
            return False
        time.sleep(0.1)
    return True


def test_a_page_link_on_a_phone_brings_the_highlight_on_screen_and_a_way_back(
    served,  # noqa: F811
    page,  # noqa: F811
    reviewed,
    tmp_path,
):
    pid, low, _ = reviewed
    page.set_viewport_size(PHONE)
    page.goto(f"{served.url}/paper/{pid}")
    sentence = page.locator(f"#{sentence_id(page, FABRICATED)}")
    sentence.click()  # pins its tooltip with the closest passages
    link = sentence.locator(f'.tip a.ev-page[data-passage="{low.id}"]')
    link.click()
    page.wait_for_function(f"() => document.getElementById('pdf').dataset.highlighted === '{low.id}'")
    page.wait_for_function("() => document.getElementById('page-image').complete")
    page.wait_for_timeout(200)  # a scroll after the image came
    highlight = page.locator("#page-frame .hl").first
    assert in_view(highlight), highlight.bounding_box()
    back = page.locator("#back-to-text")
    assert back.is_visible() and in_view(back)
    page.screenshot(path=str(tmp_path / "page_link_phone_390.png"))
    back.click()
    assert in_view(sentence)
    assert page.evaluate("document.activeElement.id") == sentence.get_attribute("id")
    assert not back.is_visible()
    page.screenshot(path=str(tmp_path / "back_to_text_390.png"))

    # beside the text on a wide screen, the text stays where it was: no button to go back
    page.set_viewport_size({"width": 1280, "height": 900})
    page.goto(f"{served.url}/paper/{pid}")
    sentence.click()
    sentence.locator(f'.tip a.ev-page[data-passage="{low.id}"]').click()
    page.wait_for_function(f"() => document.getElementById('pdf').dataset.highlighted === '{low.id}'")
    assert in_view(sentence) and comes_into_view(page.locator("#page-frame .hl").first)
    assert not back.is_visible()
    page.screenshot(path=str(tmp_path / "page_link_1280.png"))


def test_a_link_in_the_flagged_list_moves_the_viewer_to_the_passage(served, page, reviewed, tmp_path):  # noqa: F811
    pid, low, _ = reviewed
    for width in (1280, NARROW):
        page.set_viewport_size({"width": width, "height": 900})
        page.goto(f"{served.url}/paper/{pid}")
        anchor = sentence_id(page, FABRICATED)
        sentence = page.locator(f"#{anchor}")
        passage = sentence.get_attribute("data-passage")
        assert passage == str(low.id)
        page.locator(f'#flagged-list a[href="#{anchor}"]').click()
        page.wait_for_function(f"() => document.getElementById('pdf').dataset.highlighted === '{passage}'")
        assert page.evaluate("location.hash") == f"#{anchor}"
        assert "open" in sentence.get_attribute("class") and sentence.locator(".tip").is_visible()
        assert sentence.get_attribute("aria-expanded") == "true"
        assert in_view(sentence)
        if width == 1280:  # the viewer beside the text shows the highlight, once its page is drawn
            page.wait_for_function("() => document.getElementById('page-image').complete")
            assert comes_into_view(page.locator("#page-frame .hl").first)
        page.screenshot(path=str(tmp_path / f"flagged_list_link_{width}.png"))


def test_a_passage_across_two_pages_opens_where_most_of_it_is(served, page, reviewed, tmp_path):  # noqa: F811
    pid, _, across = reviewed
    start, end = across.page_start, across.page_start + 1
    for width in (1280, NARROW):
        page.set_viewport_size({"width": width, "height": 900})
        # as a page link in a tooltip opens it: on the page the passage starts on
        page.goto(f"{served.url}/paper/{pid}?page={start}&passage={across.id}#pdf")
        page.wait_for_function(f"() => document.getElementById('pdf').dataset.highlighted === '{across.id}'")
        viewer = page.locator("#pdf")
        assert viewer.get_attribute("data-page") == str(end)
        label = page.locator("#passage-label")
        assert f"continued from p. {start}" in label.inner_text()
        assert page.locator("#page-frame .hl").count() >= 1
        page.screenshot(path=str(tmp_path / f"passage_across_pages_{width}.png"))
        label.locator("button", has_text=f"continued from p. {start}").click()
        assert viewer.get_attribute("data-page") == str(start)
        assert page.locator("#page-frame .hl").count() >= 1
        assert f"continues on p. {end}" in label.inner_text()
        label.locator("button", has_text=f"continues on p. {end}").click()
        assert viewer.get_attribute("data-page") == str(end)


def test_sentences_are_buttons_named_by_their_verdict_and_text(served, page, reviewed):  # noqa: F811
    import re

    pid, _, _ = reviewed
    page.goto(f"{served.url}/paper/{pid}")
    flagged = page.get_by_role("button", name=f"Flagged, to be verified: {FABRICATED}")
    assert flagged.count() == 1 and flagged.get_attribute("id") == sentence_id(page, FABRICATED)
    supported = page.locator(".sent.verdict-supported").first
    assert supported.get_attribute("role") is None  # not in the Tab order: plain text
    page.check("#show-all")
    name = supported.get_attribute("aria-label")
    assert re.fullmatch(r"Supported: .+\.", name) and "Supported by the paper" not in name
    assert page.get_by_role("button", name=name, exact=True).count() == 1
    page.uncheck("#show-all")
    assert supported.get_attribute("role") is None


def test_a_zero_unchecked_count_is_in_the_ordinary_colour(served, page, tmp_path):  # noqa: F811
    db = served.ctx.services.db
    none = add_paper(db, title="Zero unchecked here")
    add_analysis(db, none, "synthesis", "Fine.", [("Fine.", "supported", [])])
    some = add_paper(db, title="Two unchecked here")
    add_analysis(
        db,
        some,
        "synthesis",
        f"{paper_page.MARK}Unread one. {paper_page.MARK}Unread two.",
        [("Unread one.", "unchecked", []), ("Unread two.", "unchecked", [])],
    )
    page.goto(f"{served.url}/library?q=unchecked+here")

    def colours(pid):
        row = page.locator(f'tr[data-paper="{pid}"]')
        return [
            row.locator(f"td.{cls}").first.evaluate("e => getComputedStyle(e).color")
            for cls in ("unchecked", "num")
        ]

    zero, ordinary = colours(none)
    assert zero == ordinary
    two, ordinary = colours(some)
    assert two != ordinary
    page.screenshot(path=str(tmp_path / "library_unchecked_1280.png"))
