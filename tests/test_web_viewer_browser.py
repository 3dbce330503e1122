"""The PDF viewer in a real browser (headless Debian chromium, Playwright): zoom, the page
number box, search inside the paper and selectable text over the page image.

The app is served on 127.0.0.1 by uvicorn in a thread over a private READER_HOME; the paper
is ingested (no LLM: the viewer needs only the PDF and its words). Screenshots at 1280 and
390 px are saved under the test's tmp_path and copied to /tmp/reader_viewer_<width>.png.
"""

from __future__ import annotations

import shutil
from pathlib import Path
from types import SimpleNamespace

import pymupdf
import pytest
from conftest import SAMPLE_PAPER, SHARED_PAPERS, make_reader, serving
from test_web import add_analysis

# a shared paper when ../shared is here (8 pages), else the project's 2-page sample
PAPER = next((p for p in [SHARED_PAPERS / "acl2007_P07-1088.pdf"] if p.exists()), SAMPLE_PAPER)
NARROW = 390


@pytest.fixture(scope="module")
def served(tmp_path_factory):
    """The web app on a free loopback port with PAPER ingested and a long analysis of it, so
    that on a phone the viewer is well below the first screen."""
    from reader.llm.scripted import ScriptedLLM
    from reader.web.app import create_app

    home = tmp_path_factory.mktemp("viewer_home")
    ctx = make_reader(home, llm=ScriptedLLM(lambda prompt: "unused", model="scripted"))
    [result] = ctx.ingest([PAPER])
    sentences = [f"Sentence {i} says the method reads the paper carefully." for i in range(40)]
    add_analysis(
        ctx.services.db,
        result.paper_id,
        "synthesis",
        " ".join(sentences),
        [(s, "supported", []) for s in sentences],
    )
    with serving(create_app(ctx, allowed_hosts=["127.0.0.1"])) as url:
        yield SimpleNamespace(url=url, ctx=ctx, paper_id=result.paper_id)


@pytest.fixture
def page(chromium):
    context = chromium.new_context(viewport={"width": 1280, "height": 900})
    page = context.new_page()
    errors = []
    page.on("pageerror", lambda exc: errors.append(str(exc)))
    page.errors = errors
    yield page
    assert errors == [], errors  # no script error on the way
    context.close()


def open_paper(page, served, query: str = "", in_view: bool = True) -> None:
    page.goto(f"{served.url}/paper/{served.paper_id}{query}")
    if not in_view:  # a page image out of sight is not loaded (loading="lazy"), nor its words
        return
    page.wait_for_function("() => document.getElementById('page-image').complete")
    page.wait_for_function(
        "() => { const v = document.getElementById('pdf'); return v.dataset.textLayer === (v.dataset.page || '1'); }"
    )


def image_box(page) -> dict:
    return page.locator("#page-image").bounding_box()


def on_screen(page, pdf_page, rect) -> dict:
    """A rectangle of the PDF page (points) where the page image shows it (CSS pixels)."""
    image = image_box(page)
    sx, sy = image["width"] / pdf_page.rect.width, image["height"] / pdf_page.rect.height
    return {
        "x": image["x"] + rect[0] * sx,
        "y": image["y"] + rect[1] * sy,
        "width": (rect[2] - rect[0]) * sx,
        "height": (rect[3] - rect[1]) * sy,
    }


def overlap(a: dict, b: dict) -> bool:
    return (
        a["x"] < b["x"] + b["width"]
        and b["x"] < a["x"] + a["width"]
        and a["y"] < b["y"] + b["height"]
        and b["y"] < a["y"] + a["height"]
    )


def test_zoom_by_buttons_and_keys_changes_the_page_s_width_and_never_the_screen_s(served, page):
    open_paper(page, served)
    fit = image_box(page)["width"]
    span = page.locator("#text-layer span").first
    span_width = span.bounding_box()["width"]
    page.click("#zoom-in")
    assert image_box(page)["width"] == pytest.approx(fit * 1.25, rel=0.01)
    assert page.locator("#zoom-level").inner_text() == "125%"
    # the text layer grows with the image: its lines still lie over the page's lines
    assert span.bounding_box()["width"] == pytest.approx(span_width * 1.25, rel=0.03)
    page.focus("#page-frame")
    page.keyboard.press("+")
    assert image_box(page)["width"] == pytest.approx(fit * 1.5, rel=0.01)
    # wider than the viewer, the page scrolls sideways inside it; the screen does not
    assert page.evaluate(
        "document.getElementById('page-scroll').scrollWidth > document.getElementById('page-scroll').clientWidth"
    )
    assert page.evaluate("document.documentElement.scrollWidth") <= 1280
    page.keyboard.press("0")
    assert image_box(page)["width"] == pytest.approx(fit, rel=0.01)
    page.keyboard.press("-")
    assert image_box(page)["width"] == pytest.approx(fit * 0.75, rel=0.01)
    page.click("#zoom-fit")
    assert image_box(page)["width"] == pytest.approx(fit, rel=0.01)
    for _ in range(8):
        page.click("#zoom-out") if page.locator("#zoom-out").is_enabled() else None
    assert page.locator("#zoom-level").inner_text() == "50%" and page.locator("#zoom-out").is_disabled()


@pytest.mark.parametrize("width", [1280, NARROW])
def test_a_page_number_jumps_to_that_page_and_brings_it_into_view(served, chromium, width):
    context = chromium.new_context(viewport={"width": width, "height": 800})
    page = context.new_page()
    open_paper(page, served, in_view=width != NARROW)
    pages = int(page.locator("#pdf").get_attribute("data-pages"))
    target = min(3, pages)
    if width == NARROW:
        # on a phone the viewer is below the analyses, out of sight
        assert image_box(page)["y"] > 800
    else:
        page.evaluate("document.getElementById('pdf').scrollTop = 10000")
    page.fill("#page-input", str(target))
    page.keyboard.press("Enter")
    page.wait_for_function(
        f"() => document.getElementById('page-image').getAttribute('src').endsWith('/page/{target}.png')"
    )
    page.wait_for_function("() => document.getElementById('page-image').complete")
    assert page.locator("#pdf").get_attribute("data-page") == str(target)
    assert page.locator("#page-label").inner_text() == f"Page {target} of {pages}"
    top = image_box(page)["y"]
    assert 0 <= top < 800 * 0.5, top  # the page's top is on the screen
    # its words come after its image, and lie over it
    page.wait_for_function(f"() => document.getElementById('pdf').dataset.textLayer === '{target}'")
    assert page.locator("#text-layer span").count() > 20
    # the box follows the page shown by the other buttons
    page.click("#page-prev")
    assert page.locator("#page-input").input_value() == str(target - 1)
    # a number past the end shows the last page
    page.fill("#page-input", "999")
    page.keyboard.press("Enter")
    assert page.locator("#pdf").get_attribute("data-page") == str(pages)
    context.close()


def search_word() -> tuple[str, list]:
    """A word of PAPER on at least two pages, and where pymupdf finds it: [(page, rect), ...]."""
    with pymupdf.open(PAPER) as doc:
        for word in ("reading", "column", "model", "the"):
            hits = [(n, hit) for n, p in enumerate(doc, start=1) for hit in p.search_for(word)]
            if len({n for n, _ in hits}) >= 2:
                return word, hits
    raise AssertionError("no word on two pages")


def search_count(served, word: str) -> int:
    from reader.web.page_text import search_paper

    return search_paper(served.ctx.library, served.paper_id, word)["count"]


def search_paper_matches(served, word: str) -> list[dict]:
    from reader.web.page_text import search_paper

    return search_paper(served.ctx.library, served.paper_id, word)["matches"]


def current_hit_lies_on(page, hits) -> None:
    """The current match is drawn on the page shown, over a place where pymupdf finds the word."""
    shown = int(page.locator("#pdf").get_attribute("data-page") or 1)
    page.wait_for_function("() => document.getElementById('page-image').complete")
    boxes = [h.bounding_box() for h in page.locator("#page-frame .search-hit.current").all()]
    assert boxes, "no current match drawn"
    with pymupdf.open(PAPER) as doc:
        places = [on_screen(page, doc[shown - 1], hit) for n, hit in hits if n == shown]
    assert places and any(overlap(b, p) for b in boxes for p in places), (boxes, places[:3])


def test_search_shows_the_count_and_highlights_each_match_on_its_page(served, page, tmp_path):
    word, hits = search_word()
    # pymupdf counts a match across two lines twice (a rectangle each) and misses "mod-" "els"
    total = search_count(served, word)
    assert abs(total - len(hits)) <= len(hits) // 5
    open_paper(page, served)
    page.fill("#search-input", word.upper())
    page.keyboard.press("Enter")
    count = page.locator("#search-count")
    page.wait_for_function("() => /^1 of /.test(document.getElementById('search-count').textContent)")
    assert count.inner_text() == f"1 of {total}"
    current_hit_lies_on(page, hits)
    shown = int(page.locator("#pdf").get_attribute("data-page") or 1)
    matches = search_paper_matches(served, word)
    # every match of the page shown is drawn, each of its lines a box
    assert page.locator("#page-frame .search-hit").count() == sum(
        len(m["rects"]) for m in matches if m["page"] == shown
    )
    page.keyboard.press("Enter")
    assert count.inner_text() == f"2 of {total}"
    current_hit_lies_on(page, hits)
    page.keyboard.press("Shift+Enter")
    assert count.inner_text() == f"1 of {total}"
    # backwards from the first: the last match, on the last page that has one
    page.click("#search-prev")
    assert count.inner_text() == f"{total} of {total}"
    assert page.locator("#pdf").get_attribute("data-page") == str(hits[-1][0])
    current_hit_lies_on(page, hits)
    page.screenshot(path=str(tmp_path / "viewer_search_1280.png"))
    shutil.copyfile(tmp_path / "viewer_search_1280.png", "/tmp/reader_viewer_1280.png")
    page.fill("#search-input", "lunar photographs")
    page.keyboard.press("Enter")
    page.wait_for_function("() => document.getElementById('search-count').textContent === 'No matches'")
    assert page.locator("#page-frame .search-hit").count() == 0


def word_on_page(n: int = 1, min_len: int = 7) -> tuple[str, tuple, tuple]:
    """A long plain word in the top 40 % of page n (on the first screen), its rect, and the word
    after it and the one after that on its line with its rect."""
    with pymupdf.open(PAPER) as doc:
        words = doc[n - 1].get_text("words", sort=False)
        size = doc[n - 1].rect
    for i, w in enumerate(words[:-2]):
        after = words[i + 2]
        if (
            len(w[4]) >= min_len
            and w[4].isalpha()
            and (w[5], w[6]) == (after[5], after[6])
            and after[4].isalpha()
            and size.height * 0.1 < w[1] < size.height * 0.4
        ):
            return w[4], tuple(w[:4]), (after[4], tuple(after[:4]), words[i + 1][4], size)
    raise AssertionError("no long word")


def test_the_page_s_text_can_be_selected_a_word_by_double_click_and_a_range_by_dragging(served, page):
    open_paper(page, served)
    word, rect, (third, third_rect, second, _) = word_on_page()
    with pymupdf.open(PAPER) as doc:
        box = on_screen(page, doc[0], rect)
        end = on_screen(page, doc[0], third_rect)
    page.mouse.dblclick(box["x"] + box["width"] / 2, box["y"] + box["height"] / 2)
    assert page.evaluate("window.getSelection().toString()").strip() == word
    # a drag from the word's first letter to the end of the word two after it (a drag that starts
    # on a selection would move that instead)
    page.evaluate("window.getSelection().removeAllRanges()")
    page.mouse.move(box["x"] + box["width"] / len(word) / 4, box["y"] + box["height"] / 2)
    page.mouse.down()
    page.mouse.move(end["x"] + end["width"] / 2, end["y"] + end["height"] / 2, steps=8)
    page.mouse.move(end["x"] + end["width"] - 0.5, end["y"] + end["height"] / 2, steps=2)
    page.mouse.up()
    assert page.evaluate("window.getSelection().toString()").strip() == f"{word} {second} {third}"
    # zoomed in, the same word is still under the pointer
    page.click("#zoom-in")
    page.click("#zoom-in")
    with pymupdf.open(PAPER) as doc:
        box = on_screen(page, doc[0], rect)
    page.locator(f"#text-layer span >> text={word}").first.scroll_into_view_if_needed()
    with pymupdf.open(PAPER) as doc:
        box = on_screen(page, doc[0], rect)
    page.mouse.dblclick(box["x"] + box["width"] / 2, box["y"] + box["height"] / 2)
    assert page.evaluate("window.getSelection().toString()").strip() == word


def test_screenshots_of_the_viewer_at_1280_and_390_px_without_sideways_scrolling(served, chromium, tmp_path):
    word, _ = search_word()
    for width in (1280, NARROW):
        context = chromium.new_context(viewport={"width": width, "height": 900})
        page = context.new_page()
        open_paper(page, served, in_view=width != NARROW)
        page.click("#zoom-in")
        page.fill("#search-input", word)
        page.keyboard.press("Enter")
        page.wait_for_function("() => /^1 of /.test(document.getElementById('search-count').textContent)")
        assert page.evaluate("document.documentElement.scrollWidth") <= width
        # the tools stay on the screen with the page: the bar is in view with the match
        bar = page.locator(".pdf-bar").bounding_box()
        assert bar["x"] >= 0 and bar["x"] + bar["width"] <= width
        shot = tmp_path / f"viewer_{width}.png"
        page.screenshot(path=str(shot))
        shutil.copyfile(shot, Path(f"/tmp/reader_viewer_{width}.png"))
        context.close()
