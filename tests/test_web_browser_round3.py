"""Issue 47, items 10-19, in a real browser (headless Debian chromium, Playwright): the page box
and the address keep the page shown, a withheld answer shows its passages, a click highlights the
evidence sentence within its passage, the page is rendered sharp at the zoom, copied text has its
broken words whole, highlights are made from the keyboard and Esc then Tab goes on by one, an
overruled flag shows the reader's decision, an upload shows its transfer. Screenshots at 1280 and
390 px go to /tmp/reader_round3_<name>_<width>.png."""

from __future__ import annotations

import shutil
from types import SimpleNamespace

import pytest
from conftest import make_reader, serving
from sqlalchemy import select
from test_web import add_analysis
from test_web_viewer_browser import NARROW, PAPER, open_paper

from reader.store.db import transaction
from reader.store.tables import Chunk, Question, VerdictEvidence
from reader.text.split import sentence_spans

OVERRULED = "The method reads every paper twice before it writes."
CITING = "[1] showed that language models assess sparse extractions without hand tagging."


@pytest.fixture(scope="module")
def served(tmp_path_factory):
    """PAPER ingested, with a synthesis whose first sentence is flagged with a passage of page 3
    as its closest (the claim is that passage's third sentence, reworded a little) and whose
    second is flagged and then judged supported by the reader."""
    from reader.annotations.judgements import judge
    from reader.llm.scripted import ScriptedLLM
    from reader.web import paper_page
    from reader.web.app import create_app

    home = tmp_path_factory.mktemp("round3_home")
    ctx = make_reader(home, llm=ScriptedLLM(lambda prompt: "unused", model="scripted"))
    [result] = ctx.ingest([PAPER])
    pid = result.paper_id
    with ctx.services.db() as session:
        chunks = list(session.scalars(select(Chunk).where(Chunk.paper_id == pid).order_by(Chunk.ordinal)))
    chunk = next(c for c in chunks if c.page_start == c.page_end == 2 and len(sentence_spans(c.text)) >= 4)
    start, end = sentence_spans(chunk.text)[2]
    evidence = " ".join(chunk.text[start:end].split())
    claim = evidence.rstrip(".") + ", as the paper says."
    fillers = [f"Sentence {i} says the method reads the paper carefully." for i in range(6)]
    text = f"{paper_page.MARK}{claim} {paper_page.MARK}{OVERRULED} {paper_page.MARK}{CITING} " + " ".join(
        fillers
    )
    verdicts = [
        (claim, "unsupported", [(2, 2, chunk.text)]),
        (OVERRULED, "unsupported", [(2, 2, chunk.text)]),
        (CITING, "unsupported", [(2, 2, chunk.text)]),
    ] + [(s, "supported", []) for s in fillers]
    add_analysis(ctx.services.db, pid, "synthesis", text, verdicts)
    with transaction(ctx.services.db) as session:
        for ev in session.scalars(select(VerdictEvidence)):
            ev.chunk_id = chunk.id
    with transaction(ctx.services.db) as session:
        judge(session, pid, "synthesis-2", "supported", judged_by="test")
    with serving(create_app(ctx, allowed_hosts=["127.0.0.1"])) as url:
        yield SimpleNamespace(url=url, ctx=ctx, paper_id=pid, chunk=chunk, evidence=evidence)


@pytest.fixture
def page(chromium):
    context = chromium.new_context(viewport={"width": 1280, "height": 900})
    page = context.new_page()
    errors = []
    page.on("pageerror", lambda exc: errors.append(str(exc)))
    yield page
    assert errors == [], errors
    context.close()


def screenshots(page, tmp_path, name: str) -> None:
    for width in (1280, NARROW):
        page.set_viewport_size({"width": width, "height": 900})
        page.wait_for_timeout(150)
        path = tmp_path / f"{name}_{width}.png"
        page.screenshot(path=str(path), full_page=False)
        shutil.copy(path, f"/tmp/reader_round3_{name}_{width}.png")
    page.set_viewport_size({"width": 1280, "height": 900})


def shown_page(page) -> int:
    return int(page.evaluate("() => document.getElementById('pdf').dataset.page || '1'"))


def wait_for_text_layer(page, number: int) -> None:
    page.wait_for_function(f"() => document.getElementById('pdf').dataset.textLayer === '{number}'")


# ---- item 10 ---------------------------------------------------------------------------------------


def test_the_page_box_says_the_page_shown_and_the_address_keeps_page_and_zoom(served, page):
    open_paper(page, served, "?page=2#pdf")
    assert shown_page(page) == 2
    assert page.locator("#page-input").input_value() == "2"  # it said "1" over page 2
    page.click("#page-next")
    wait_for_text_layer(page, 3)
    page.click("#zoom-in")
    assert "page=3" in page.url and "zoom=125" in page.url
    page.reload()
    wait_for_text_layer(page, 3)
    assert page.locator("#page-input").input_value() == "3"
    assert page.locator("#zoom-level").inner_text() == "125%"
    # away and Back: the page and its number come back together
    page.goto(f"{served.url}/library")
    page.go_back()
    wait_for_text_layer(page, 3)
    assert shown_page(page) == 3 and page.locator("#page-input").input_value() == "3"
    assert "/page/3.png" in page.locator("#page-image").get_attribute("src")


# ---- item 11 ---------------------------------------------------------------------------------------


def test_a_withheld_answer_says_so_and_shows_the_passages(served, page, tmp_path):
    with transaction(served.ctx.services.db) as session:
        row = Question(
            question="How many documents were annotated?",
            answer="Not found in the papers.",
            grounded=True,
            grounded_reason="nothing to check: the drafted answer was withheld as unsupported",
            route="correct",
            confidence=0.5,
            details={
                "sources": [
                    {
                        "paper_id": served.paper_id,
                        "chunk_id": served.chunk.id,
                        "pages": "2",
                        "text": served.evidence,
                    }
                ],
                "notes": ["a drafted answer was withheld because the check found it unsupported"],
            },
        )
        session.add(row)
        session.flush()
        qid = row.id
    page.goto(f"{served.url}/ask/{qid}")
    outcome = page.locator("#outcome").inner_text()
    assert "No passage" not in outcome and "withheld" in outcome
    assert page.locator("#sources .source").count() == 1
    assert served.evidence[:40] in page.locator("#sources").inner_text()
    screenshots(page, tmp_path, "ask_withheld")


# ---- item 12 ---------------------------------------------------------------------------------------


def test_a_click_highlights_the_evidence_sentence_within_its_passage(served, page, tmp_path):
    open_paper(page, served)
    page.locator(".sent.flagged").first.click()
    page.wait_for_function("() => document.getElementById('pdf').dataset.sentence === 'placed'")
    assert shown_page(page) == 2
    # the words are drawn after the page's image has come, which may be after the highlight
    page.wait_for_function("() => document.getElementById('pdf').dataset.textLayer === '2'")
    strong = page.locator("#page-frame .hl-sentence")
    faint = page.locator("#page-frame .hl-faint")
    assert strong.count() >= 1 and faint.count() >= 1
    strong_height = sum(strong.nth(i).bounding_box()["height"] for i in range(strong.count()))
    faint_height = sum(faint.nth(i).bounding_box()["height"] for i in range(faint.count()))
    assert strong_height < faint_height  # a sentence, not the passage
    # the strong box covers the sentence's first words in the text layer
    first_words = " ".join(served.evidence.split()[:3])
    box = strong.first.bounding_box()
    hit = page.evaluate(
        """([x, y]) => document.elementsFromPoint(x, y).filter(e => e.closest && e.closest('#text-layer'))
                        .map(e => e.textContent).join(' ')""",
        [box["x"] + 4, box["y"] + box["height"] / 2],
    )
    assert first_words.split()[0] in hit, (hit, first_words)
    screenshots(page, tmp_path, "sentence_highlight")


def test_a_click_on_a_sentence_s_leading_citation_marker_opens_the_sentence(served, page):
    open_paper(page, served)
    sentence = page.locator(".sent.flagged", has_text="showed that language models")
    marker = sentence.locator("a.cite").first
    assert marker.count() == 1, "the sentence starts with a citation marker"
    marker.click()
    assert "cite" not in page.url  # not the reference list
    page.wait_for_function(
        f"() => document.getElementById('pdf').dataset.highlighted === '{served.chunk.id}'"
    )
    assert "open" in sentence.get_attribute("class")


# ---- item 13 ---------------------------------------------------------------------------------------


def test_the_page_is_rendered_sharp_at_the_zoom_and_the_pixel_ratio(served, chromium):
    context = chromium.new_context(viewport={"width": 1280, "height": 900}, device_scale_factor=2)
    page = context.new_page()
    try:
        open_paper(page, served)

        def pixels_per_device_pixel() -> float:
            return page.evaluate(
                """() => { const i = document.getElementById('page-image');
                           return i.naturalWidth / (i.getBoundingClientRect().width * devicePixelRatio); }"""
            )

        page.wait_for_function("() => document.getElementById('page-image').src.includes('scale=')")
        page.wait_for_function("() => document.getElementById('page-image').complete")
        assert pixels_per_device_pixel() >= 0.98  # it was one image pixel to 1.3 device pixels
        page.click("#zoom-in")
        page.click("#zoom-in")  # 150%: 3x the 72 dpi page on a 2x screen
        page.wait_for_function("() => document.getElementById('page-image').src.includes('scale=3')")
        page.wait_for_function("() => document.getElementById('page-image').complete")
        assert pixels_per_device_pixel() >= 0.95
    finally:
        context.close()


# ---- item 14 ---------------------------------------------------------------------------------------


COPY = """() => { const dt = new DataTransfer();
                  document.getElementById('text-layer').dispatchEvent(
                      new ClipboardEvent('copy', { clipboardData: dt, bubbles: true, cancelable: true }));
                  return dt.getData('text/plain'); }"""


def test_copied_text_has_its_broken_words_whole_and_ctrl_a_selects_the_page_only(served, page):
    open_paper(page, served, "?page=2")
    # two lines of page 2, the first ending "extrac-" and the next starting "tions"
    page.evaluate(
        """() => { const spans = [...document.querySelectorAll('#text-layer span')];
                   const i = spans.findIndex(s => s.textContent.endsWith('extrac-'));
                   const r = document.createRange();
                   r.setStart(spans[i].firstChild, 0);
                   r.setEnd(spans[i + 1].firstChild, spans[i + 1].textContent.length);
                   getSelection().removeAllRanges(); getSelection().addRange(r); }"""
    )
    copied = page.evaluate(COPY)
    assert "extrac-" not in copied and "extractions" in copied, copied
    page.focus("#page-frame")
    page.keyboard.press("Control+a")
    inside = page.evaluate(
        """() => { const r = getSelection().getRangeAt(0);
                   return document.getElementById('text-layer').contains(r.commonAncestorContainer); }"""
    )
    assert inside  # the page's text, not the whole web page


# ---- item 15 ---------------------------------------------------------------------------------------


def test_a_highlight_is_made_from_the_keyboard_and_esc_then_tab_goes_on_by_one(served, page):
    open_paper(page, served, "?page=2")
    page.focus("#page-frame")
    page.keyboard.press("Shift+ArrowDown")
    page.keyboard.press("Shift+ArrowDown")
    page.locator("#selection-tools").wait_for(state="visible")
    page.keyboard.press("h")
    page.wait_for_url("**highlight=*")
    page.wait_for_function("() => document.querySelectorAll('#page-frame .own-hl').length > 0")
    assert page.locator("#page-input").input_value() == "2"  # item 10: it said "Page 1" over the page


def test_esc_then_tab_goes_on_to_the_item_after_the_sentence(served, page):
    page.goto(f"{served.url}/paper/{served.paper_id}")
    page.locator(".sent.flagged").first.focus()
    page.keyboard.press("Escape")
    assert page.locator(".sent.flagged").first.locator(":scope > .tip").is_hidden()
    # the focus stays on the sentence (it was dropped, and Tab then went on from elsewhere)
    assert page.evaluate("() => document.activeElement.matches('.sent.flagged')")
    expected = page.evaluate(
        """() => { const s = document.activeElement;
                   const all = [...document.querySelectorAll('a[href], button, input, select, textarea, [tabindex]')]
                       .filter(e => e.tabIndex >= 0 && !e.disabled && e.getClientRects().length);
                   const next = all.find(e => !s.contains(e) && (s.compareDocumentPosition(e) & Node.DOCUMENT_POSITION_FOLLOWING));
                   next.dataset.expected = "1"; return next.outerHTML.slice(0, 120); }"""
    )
    page.keyboard.press("Tab")
    now = page.evaluate(
        "() => document.activeElement.dataset.expected === '1' ? 'the next' : document.activeElement.outerHTML.slice(0, 120)"
    )
    assert now == "the next", (now, expected)


# ---- item 16 ---------------------------------------------------------------------------------------


def test_an_overruled_flag_shows_the_reader_s_decision(served, page, tmp_path):
    open_paper(page, served)
    sentence = page.locator(".sent.overruled")
    assert sentence.count() == 1 and OVERRULED in sentence.inner_text()
    assert sentence.locator("mark.pending").count() == 0  # no [待验证] any more
    assert sentence.get_attribute("data-state") == "supported"
    assert page.locator(".judged.judged-supported").count() == 1  # the reader's judgement beside it
    heading = page.locator("#flagged-heading").inner_text()
    assert "(2; 1 more you judged supported)" in heading
    sentence.scroll_into_view_if_needed()
    screenshots(page, tmp_path, "overruled")


# ---- item 18 ---------------------------------------------------------------------------------------


def test_an_upload_shows_its_transfer_and_the_time_left_moves_steadily(served, page, tmp_path):
    held = []  # the upload's request, answered once the page has been looked at
    page.route(
        "**/upload", lambda route: held.append(route) if route.request.method == "POST" else route.continue_()
    )
    page.goto(f"{served.url}/upload")
    page.set_input_files("#file-input", str(PAPER))
    sending = page.locator("#upload-messages .message.sending")
    sending.wait_for(timeout=5000)
    assert PAPER.name in sending.inner_text() and sending.locator("progress").count() == 1
    screenshots(page, tmp_path, "upload_sending")
    page.wait_for_function("() => true")
    assert held, "the upload was sent"
    held[0].fulfill(
        status=200, content_type="application/json", body='{"jobs": [], "known": [], "errors": []}'
    )
    sending.wait_for(state="detached", timeout=10_000)
    # a new estimate moves the one shown a third of the way: 1 min, then 6 min, says 3 min
    said = page.evaluate(
        """() => { const first = readerUpload.steady(null, 60, 0);
                   const next = readerUpload.steady(first, 360, 10000);
                   return readerUpload.duration(next.seconds); }"""
    )
    assert said == "3 min"


# ---- item 17 ---------------------------------------------------------------------------------------


def test_a_near_duplicate_upload_offers_to_remove_the_copy_or_compare(served, page, tmp_path):
    import json

    copy = "c" * 64
    job = {
        "id": "7",
        "name": PAPER.name,
        "stage": "done",
        "percent": 100,
        "status": "done",
        "paper_id": copy,
        "error": "",
        "notice": "",
        "similar": {
            "paper_id": served.paper_id,
            "title": "The stored version",
            "reason": "the same title and nearly the same text",
        },
    }
    answer = json.dumps({"jobs": [job], "known": [], "errors": []})
    page.route(
        "**/upload",
        lambda r: (
            r.fulfill(status=200, content_type="application/json", body=answer)
            if r.request.method == "POST"
            else r.continue_()
        ),
    )
    page.route(
        "**/api/jobs*",
        lambda r: r.fulfill(
            status=200, content_type="application/json", body=json.dumps({"jobs": [job], "batch": None})
        ),
    )
    page.goto(f"{served.url}/upload")
    page.set_input_files("#file-input", str(PAPER))
    note = page.locator(".job-similar")
    note.wait_for()
    assert "Looks like a version of The stored version" in note.inner_text()
    assert note.locator("a.similar-remove").get_attribute("href") == f"/paper/{copy}/delete"
    compare = note.locator("a.similar-compare").get_attribute("href")
    assert compare == f"/table?paper={served.paper_id}&paper={copy}"
    screenshots(page, tmp_path, "near_duplicate")


# ---- item 19 ---------------------------------------------------------------------------------------


def test_the_first_visit_says_what_to_do_and_what_comes_out(chromium, tmp_path):
    from reader.web.app import create_app

    ctx = make_reader(tmp_path / "empty")
    context = chromium.new_context(viewport={"width": 1280, "height": 900})
    page = context.new_page()
    try:
        with serving(create_app(ctx, allowed_hosts=["127.0.0.1"])) as url:
            page.goto(f"{url}/library")
            text = page.locator("#first-visit").inner_text()
            assert "Upload a PDF" in text and "Markdown note" in text and "[待验证]" in text
            screenshots(page, tmp_path, "first_visit")
    finally:
        context.close()
