"""The tool's own findings on the paper page in a real browser (headless chromium, as
tests/test_web_browser.py; skipped without it): labelled as the tool's, a click opens the sentence
of the paper its checklist item rests on in the viewer, and one that states an absence leads to the
checklist's row that says what was searched (issue 43, item 3)."""

from __future__ import annotations

from conftest import SAMPLE_PAPER
from test_web_browser import page, served  # noqa: F401 - served and page are fixtures


def test_a_tool_finding_is_labelled_and_opens_its_evidence(served, page):  # noqa: F811
    [result] = served.ctx.ingest([SAMPLE_PAPER])
    pid = result.paper_id
    served.ctx.read(pid)  # the scripted writer; the checklist and the critique's findings are the tool's
    page.goto(f"{served.url}/paper/{pid}")

    found = page.locator(".sent.tool-finding[data-item='datasets']").first
    found.wait_for(state="visible")
    assert "tool's finding · datasets" in found.locator(".tool-badge").inner_text()
    assert found.get_attribute("data-decided") == "tool"
    passage = found.get_attribute("data-passage")
    assert passage, "a found item's sentence rests on a passage of the paper"
    found.click()
    tip = found.locator(".tip")
    tip.wait_for(state="visible")
    assert "The tool's own finding · checklist: datasets" in tip.inner_text()
    assert "14 openly licensed papers" in tip.inner_text()  # the paper's sentence, not a search's
    page.wait_for_function(f"() => document.getElementById('pdf').dataset.highlighted === '{passage}'")

    page.keyboard.press("Escape")  # the open tooltip covers the sentences around it
    absent = page.locator(".sent.tool-finding[data-item='variance']").first
    absent.click()
    row_link = absent.locator(".tip .tip-checklist")
    row_link.wait_for(state="visible")
    row_link.click()
    page.wait_for_url("**#checklist-variance")
    row = page.locator("#checklist-variance")
    assert "not found" in row.inner_text() and "the rules read all" in row.inner_text()
    assert page.locator("#checklist tbody tr").count() == 13
    assert page.evaluate("window.__pwned") is None
