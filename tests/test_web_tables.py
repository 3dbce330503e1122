"""The paper page's tables (templates/_tables.html): each table with its caption and page, its
header rows as column headers, and every cell that stands on the page a button carrying its
page and rectangle for tables.js. tests/test_web_tables_browser.py checks the highlight itself."""

from __future__ import annotations

from table_pdf import CAPTION, make_table_pdf
from test_web import client_for  # noqa: F401 - the fixture
from test_web_paper_small import Elements


def test_the_page_shows_each_table_with_cells_that_point_at_the_pdf(app, client_for, tmp_path):  # noqa: F811
    (result,) = app.ingest([make_table_pdf(tmp_path / "tables.pdf")])
    html = client_for().get(f"/paper/{result.paper_id}").text
    assert 'id="tables"' in html and "Tables (1)" in html and CAPTION in html
    tags = Elements(html.split('id="tables"', 1)[1].split("</section>", 1)[0]).tags
    heads = [a for t, a in tags if t == "th"]
    cells = [a for t, a in tags if t == "td" and "data-rect" in a]
    assert len(heads) == 8  # two header rows of four
    assert len(cells) == 12  # three rows of four, each on the page
    ours = next(a for a in cells if a["aria-label"].startswith("85.1"))
    x0, y0, x1, y1 = (float(v) for v in ours["data-rect"].split(","))
    assert ours["data-page"] == "1" and ours["role"] == "button" and ours["tabindex"] == "0"
    assert 0 < x0 < x1 < 1 and 0 < y0 < y1 < 1
    assert '<script src="/static/tables.js" defer></script>' in html


def test_a_paper_without_tables_has_no_tables_section(app, client_for, tmp_path):  # noqa: F811
    path = tmp_path / "plain.txt"
    path.write_text(
        "A Title\n\nOne paragraph of text about nothing in particular, long enough.\n", encoding="utf-8"
    )
    (result,) = app.ingest([path])
    html = client_for().get(f"/paper/{result.paper_id}").text
    assert 'id="tables"' not in html
