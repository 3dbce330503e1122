"""The reader's own highlights in a real browser (headless Debian chromium, Playwright): text
selected in the PDF viewer is highlighted with a note, drawn on the page in its own colour,
listed under "Your highlights", found in the downloaded Markdown note, and deleted from the
list. Screenshots at 1280 and 390 px go to /tmp/reader_highlights_<width>.png."""

from __future__ import annotations

import shutil
from pathlib import Path
from types import SimpleNamespace

import pymupdf
import pytest
from conftest import make_reader, serving
from test_web import add_analysis
from test_web_viewer_browser import (
    NARROW,
    PAPER,
    on_screen,
    open_paper,
    overlap,
    word_on_page,
)


@pytest.fixture(scope="module")
def served(tmp_path_factory):
    """The web app on a free loopback port with PAPER ingested and a short reviewed synthesis
    (the Markdown note needs a review)."""
    from reader.llm.scripted import ScriptedLLM
    from reader.web.app import create_app

    home = tmp_path_factory.mktemp("highlights_home")
    ctx = make_reader(home, llm=ScriptedLLM(lambda prompt: "unused", model="scripted"))
    [result] = ctx.ingest([PAPER])
    sentence = "The method reads the paper carefully."
    add_analysis(ctx.services.db, result.paper_id, "synthesis", sentence, [(sentence, "supported", [])])
    with serving(create_app(ctx, allowed_hosts=["127.0.0.1"])) as url:
        yield SimpleNamespace(url=url, ctx=ctx, paper_id=result.paper_id)


def new_page(chromium, width):
    context = chromium.new_context(viewport={"width": width, "height": 900}, accept_downloads=True)
    page = context.new_page()
    errors = []
    page.on("pageerror", lambda exc: errors.append(str(exc)))
    return context, page, errors


def wait_for_reload_with_highlight(page) -> None:
    page.wait_for_url("**highlight=*")
    page.wait_for_function("() => document.getElementById('page-image').complete")
    page.wait_for_function("() => document.querySelectorAll('#page-frame .own-hl').length > 0")


def delete_all_from_the_list(page) -> None:
    while page.locator("#highlights .hl-delete").count():
        page.locator("#highlights .hl-delete").first.click()
        page.wait_for_load_state()
    assert "Your highlights (0)" in page.locator("#highlights-heading").inner_text()


def test_selected_text_highlighted_with_a_note_is_drawn_listed_and_in_the_note(served, chromium, tmp_path):
    context, page, errors = new_page(chromium, 1280)
    open_paper(page, served)
    assert page.locator("#selection-tools").is_hidden()
    word, rect, (third, third_rect, second, _) = word_on_page()
    with pymupdf.open(PAPER) as doc:
        start, end = on_screen(page, doc[0], rect), on_screen(page, doc[0], third_rect)
    # drag from the word's first letter to the end of the word two after it
    page.mouse.move(start["x"] + start["width"] / len(word) / 4, start["y"] + start["height"] / 2)
    page.mouse.down()
    page.mouse.move(end["x"] + end["width"] / 2, end["y"] + end["height"] / 2, steps=8)
    page.mouse.move(end["x"] + end["width"] - 0.5, end["y"] + end["height"] / 2, steps=2)
    page.mouse.up()
    selected = f"{word} {second} {third}"
    page.locator("#selection-tools").wait_for(state="visible")
    assert selected in page.locator("#selection-label").inner_text()

    page.click("#highlight-note")
    page.fill("#highlight-note-text", "Compare with the baseline in Table 2.")
    page.click("#highlight-save")
    wait_for_reload_with_highlight(page)

    # drawn over the words selected (where they are now, after the reload), in a colour of its
    # own (not the passage highlight's)
    with pymupdf.open(PAPER) as doc:
        start, end = on_screen(page, doc[0], rect), on_screen(page, doc[0], third_rect)
    boxes = [b.bounding_box() for b in page.locator("#page-frame .own-hl").all()]
    assert len(boxes) == 1, boxes  # three words of one line: one rectangle
    assert any(overlap(b, start) for b in boxes) and any(overlap(b, end) for b in boxes), (boxes, start, end)
    colours = page.evaluate(
        """() => {
          const frame = document.getElementById('page-frame');
          const passage = document.createElement('div'); passage.className = 'hl'; frame.appendChild(passage);
          const own = getComputedStyle(frame.querySelector('.own-hl')).backgroundColor;
          const theirs = getComputedStyle(passage).backgroundColor; passage.remove();
          return [own, theirs];
        }"""
    )
    assert colours[0] != colours[1] and colours[0] not in ("", "rgba(0, 0, 0, 0)"), colours
    listed = page.locator("#highlights li")
    assert listed.count() == 1
    assert (
        selected in listed.inner_text()
        and "Note: Compare with the baseline in Table 2." in listed.inner_text()
    )
    assert "Your highlights (1)" in page.locator("#highlights-heading").inner_text()
    page.screenshot(path=str(tmp_path / "highlights_1280.png"), full_page=False)
    shutil.copyfile(tmp_path / "highlights_1280.png", "/tmp/reader_highlights_1280.png")

    with page.expect_download() as download:
        page.click("#download-note")
    note = Path(download.value.path()).read_text(encoding="utf-8")
    assert "## Your highlights" in note
    assert (
        f"> [!quote] Your highlight, p. 1\n> {selected}\n>\n> Note: Compare with the baseline in Table 2."
        in note
    )

    delete_all_from_the_list(page)
    assert page.locator("#page-frame .own-hl").count() == 0
    assert errors == [], errors
    context.close()


def test_a_word_highlighted_on_a_phone_is_drawn_without_sideways_scrolling(served, chromium, tmp_path):
    context, page, errors = new_page(chromium, NARROW)
    open_paper(page, served, in_view=False)
    page.locator("#pdf").scroll_into_view_if_needed()
    page.wait_for_function("() => document.getElementById('pdf').dataset.textLayer === '1'")
    word, rect, _ = word_on_page()
    with pymupdf.open(PAPER) as doc:
        box = on_screen(page, doc[0], rect)
    page.mouse.dblclick(box["x"] + box["width"] / 2, box["y"] + box["height"] / 2)
    page.locator("#selection-tools").wait_for(state="visible")
    page.click("#highlight-add")
    wait_for_reload_with_highlight(page)
    assert word in page.locator("#highlights li").inner_text()
    page.locator("#page-frame .own-hl").first.scroll_into_view_if_needed()
    assert page.evaluate("document.documentElement.scrollWidth") <= NARROW
    page.screenshot(path=str(tmp_path / "highlights_390.png"))
    shutil.copyfile(tmp_path / "highlights_390.png", f"/tmp/reader_highlights_{NARROW}.png")
    delete_all_from_the_list(page)
    assert errors == [], errors
    context.close()
