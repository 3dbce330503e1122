"""A table cell selected on the paper page is highlighted on its page of the PDF, in a real
browser (headless Debian chromium, Playwright; skipped without it). Screenshot:
/tmp/reader_table_cell.png."""

from __future__ import annotations

from types import SimpleNamespace

import pytest
from conftest import make_reader, serving
from table_pdf import make_table_pdf
from test_web_viewer_browser import overlap


@pytest.fixture(scope="module")
def served(tmp_path_factory):
    from reader.web.app import create_app

    home = tmp_path_factory.mktemp("tables_home")
    ctx = make_reader(home)
    pdf = make_table_pdf(tmp_path_factory.mktemp("tables_pdf") / "tables.pdf")
    [result] = ctx.ingest([pdf])
    with serving(create_app(ctx, allowed_hosts=["127.0.0.1"])) as url:
        yield SimpleNamespace(url=url, paper_id=result.paper_id)


def test_a_selected_cell_is_highlighted_where_it_stands_on_the_page(served, chromium):
    page = chromium.new_page(viewport={"width": 1280, "height": 900})
    errors = []
    page.on("pageerror", lambda exc: errors.append(str(exc)))
    page.goto(f"{served.url}/paper/{served.paper_id}")
    cell = page.locator("td.cell-on-page", has_text="85.1")
    cell.click()
    page.wait_for_function("() => document.querySelector('#page-frame .cell-hl') !== null")
    page.wait_for_function("() => document.getElementById('page-image').complete")
    box = page.locator("#page-frame .cell-hl").bounding_box()
    image = page.locator("#page-image").bounding_box()
    x0, y0, x1, y1 = (float(v) for v in cell.get_attribute("data-rect").split(","))
    expected = {
        "x": image["x"] + x0 * image["width"],
        "y": image["y"] + y0 * image["height"],
        "width": (x1 - x0) * image["width"],
        "height": (y1 - y0) * image["height"],
    }
    assert overlap(box, expected) and abs(box["x"] - expected["x"]) < 3 and abs(box["y"] - expected["y"]) < 3
    assert "shown" in cell.get_attribute("class")
    page.screenshot(path="/tmp/reader_table_cell.png")
    # another page shown (the test paper has one page, so the viewer says so itself): the
    # cell's highlight goes
    page.evaluate(
        "() => document.getElementById('pdf').dispatchEvent(new CustomEvent('pageshown', {detail: {page: 2}}))"
    )
    assert page.locator("#page-frame .cell-hl").count() == 0 and "shown" not in cell.get_attribute("class")
    assert errors == []
