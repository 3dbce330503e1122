"""The reader's judgement in a real browser (headless chromium, as tests/test_web_browser.py):
a [待验证] sentence overruled from its tooltip, shown after the sentence beside the audit's
mark, and found in the downloaded Markdown note. Screenshots at 1280 and 390 px."""

from __future__ import annotations

import shutil
from pathlib import Path

from conftest import SAMPLE_PAPER
from test_web_browser import (  # noqa: F401 - served and page are fixtures
    EVIDENCE_PAPER,
    FABRICATED,
    NARROW,
    page,
    sentence_id,
    sentences_with_their_passages,
    served,
    store_audited_synthesis,
)

COMMENT = "Checked by hand: Sec. 2 reports the photographs <b>and</b> their number."


def test_overruling_a_flag_in_the_page_reaches_the_exported_note(served, page, tmp_path):  # noqa: F811
    from reader.index.hits import SearchHit

    paper = EVIDENCE_PAPER if EVIDENCE_PAPER.exists() else SAMPLE_PAPER
    [result] = served.ctx.ingest([paper])
    pid = result.paper_id
    held = sentences_with_their_passages(served.ctx, pid, 2)
    assert held, "the paper has sentences to audit"

    def search(query, paper_id):
        return [
            SearchHit(c.id, pid, c.text, c.section or "", c.page_start, c.page_end, 0.9 - 0.1 * i)
            for i, (_, c) in enumerate(held)
        ]

    store_audited_synthesis(served.ctx, pid, [s for s, _ in held] + [FABRICATED], search)
    page.goto(f"{served.url}/paper/{pid}")
    flagged = page.locator(f"#{sentence_id(page, FABRICATED)}")
    assert "flagged" in flagged.get_attribute("class")
    flagged.focus()
    page.keyboard.press("Enter")  # pins its tooltip, where the judgement link is
    link = flagged.locator(".tip .judge-link")
    link.wait_for(state="visible")
    link.click()
    page.wait_for_url(f"**/paper/{pid}/judge/synthesis-*")
    assert FABRICATED in page.locator("#judge-sentence").inner_text()
    assert "[待验证]" in page.locator("#judge-audit").inner_text()
    page.check("#judge-supported")
    page.fill("#judge-comment", COMMENT)
    page.click("#judge-save")
    page.wait_for_url(f"**/paper/{pid}#j-synthesis-*")

    badge = page.locator(".judged.judged-supported")
    badge.wait_for(state="visible")
    assert "Reader's judgement: supported" in badge.inner_text()
    assert "Checked by hand" in badge.inner_text()
    # the reader's decision is the sentence's state: its [待验证] mark goes, the audit's flag stays
    # beside it (the class, the tooltip) (issue 47, item 16)
    assert "[待验证]" not in flagged.inner_text() and "flagged overruled" in flagged.get_attribute("class")
    assert page.locator("#judgements li").count() == 1
    assert page.evaluate("window.__pwned") is None

    with page.expect_download() as download:
        page.click("#download-note")
    note = Path(download.value.path()).read_text(encoding="utf-8")
    assert "> [!warning] 待验证" in note
    callout = "> [!note] Reader's judgement: supported — overrules the audit's 待验证 flag"
    assert callout in note
    assert note.index("> [!warning] 待验证") < note.index(callout)
    assert "> Comment: Checked by hand: Sec. 2 reports the photographs &lt;b&gt;and&lt;/b&gt;" in note

    judged_id = badge.get_attribute("id").removeprefix("j-")
    shots = {}
    for width in (1280, NARROW):
        page.set_viewport_size({"width": width, "height": 900})
        page.goto(f"{served.url}/paper/{pid}#j-{judged_id}")
        page.locator(".judged").first.scroll_into_view_if_needed()
        shot = tmp_path / f"judgement_{width}.png"
        page.screenshot(path=str(shot))
        shutil.copyfile(shot, Path(f"/tmp/reader_judgement_{width}.png"))
        assert page.evaluate("document.documentElement.scrollWidth") <= width
        page.goto(f"{served.url}/paper/{pid}/judge/{judged_id}")
        shots[width] = tmp_path / f"judge_page_{width}.png"
        page.screenshot(path=str(shots[width]), full_page=True)
        shutil.copyfile(shots[width], Path(f"/tmp/reader_judge_page_{width}.png"))
        assert page.evaluate("document.documentElement.scrollWidth") <= width
        assert page.locator("#judge-current").inner_text().startswith("Kept now: supported")
