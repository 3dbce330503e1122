"""The extraction table in a real browser (headless Debian chromium, Playwright): two papers
chosen on the page, their table shown with each cell's source and page, and its CSV downloaded;
screenshots at 1280 and 390 px."""

from __future__ import annotations

import csv
import io
import shutil
from pathlib import Path

import pytest
from conftest import make_reader, serving
from test_extraction_table import PAPER_TEXT, SYNTHESIS, store_synthesis, yes_to_all

NARROW = 390
SECOND_TEXT = """Sparse Retrieval for Long Documents

Abstract

We retrieve passages from long documents with a sparse learned index.

1 Introduction

Dense retrievers need a vector per passage, and long documents make the index large and slow to update. \
Sparse learned representations keep an inverted index, so updates stay cheap and lookups stay fast. \
This paper asks whether a sparse model can match a dense one on long documents. \
Long documents hold many topics, and a single vector per document blurs them together. \
Splitting a document into passages helps both kinds of model but multiplies the index.
\f
2 Method

The encoder predicts a weight for every vocabulary term and keeps the largest ones per passage. \
A regulariser on the weights keeps each passage to a few hundred terms in the inverted index. \
Queries are expanded the same way, and scores are the dot product of the two sparse vectors. \
The encoder starts from a pretrained language model and is fine-tuned with hard negatives. \
Passages of a document are scored on their own and the document takes its best passage's score.
\f
3 Experimental setup

The MS MARCO collection contains 8.8M passages for training and evaluation. \
We compare with BM25 and a dense retriever as baselines on the development queries. \
Every system retrieves the top thousand passages for each query from the same collection. \
Queries come with one or two judged passages, and the official script computes the scores. \
All runs use one machine with a single accelerator and the same inverted index library.
\f
4 Results

The sparse model reaches 36.8 MRR@10 on the MS MARCO development queries. \
Its index is a fifth of the dense index's size and updates in seconds rather than hours.
"""
SECOND_SYNTHESIS = {
    "Problem": "The paper asks whether a sparse model can match a dense one on long documents.",
    "Method": "The encoder predicts a weight for every vocabulary term and keeps the largest ones per passage.",
    "Key results": "The sparse model reaches 36.8 MRR@10 on the MS MARCO development queries.",
}


@pytest.fixture
def served(tmp_path):
    """The web app over two ingested papers, each with a stored audited synthesis."""
    from reader.web.app import create_app

    verifier = yes_to_all()
    ctx = make_reader(tmp_path / "home", env={"READER_CHECKER": "off"}, llm=verifier, verifier=verifier)
    ids = []
    for name, text, synthesis in (
        ("tweets.txt", PAPER_TEXT, SYNTHESIS),
        ("sparse.txt", SECOND_TEXT, SECOND_SYNTHESIS),
    ):
        path = tmp_path / name
        path.write_text(text, encoding="utf-8")
        [result] = ctx.ingest([path])
        store_synthesis(ctx, result.paper_id, synthesis)
        ids.append(result.paper_id)
    with serving(create_app(ctx, allowed_hosts=["127.0.0.1", "localhost"])) as url:
        yield url, ids


def test_two_papers_table_with_sources_and_csv_download(served, chromium, tmp_path):
    url, (tweets, sparse) = served
    context = chromium.new_context(viewport={"width": 1280, "height": 900}, accept_downloads=True)
    page = context.new_page()

    # from the library: the one link to the table, then a checkbox per paper
    page.goto(f"{url}/library")
    page.click("#extraction-table")
    page.wait_for_url("**/table")
    page.check(f'input[name="paper"][value="{tweets}"]')
    page.check(f'input[name="paper"][value="{sparse}"]')
    page.click("#build-table")
    table = page.locator("#extraction")
    table.wait_for()
    assert table.locator("tbody tr").count() == 2
    shown_order = [table.locator("tbody tr").nth(i).get_attribute("data-paper") for i in range(2)]
    assert sorted(shown_order) == sorted([tweets, sparse])
    assert table.locator("thead th").all_inner_texts() == [
        "Paper",
        "Task",
        "Datasets and sizes",
        "Method",
        "Baselines",
        "Headline result",
    ]

    first = table.locator(f'tr[data-paper="{tweets}"]')
    datasets = first.locator("td.cell-datasets")
    assert "WNUT-17: 5,690 annotated tweets" in datasets.locator(".value").inner_text()
    assert datasets.locator(".source-page").inner_text() == "p. 3"
    link = datasets.locator("a.source-page").get_attribute("href")
    assert link.startswith(f"/paper/{tweets}?page=3&passage=")
    result = first.locator("td.cell-result")  # 97.9 is not in the paper
    assert result.get_attribute("data-verdict") == "unsupported"
    assert result.locator("mark.pending").inner_text() == "[待验证]"
    assert result.locator(".source-page").inner_text() == "p. 4"
    second = table.locator(f'tr[data-paper="{sparse}"]')
    assert "MS MARCO: 8.8M passages" in second.locator("td.cell-datasets .value").inner_text()
    assert second.locator("td.cell-result").get_attribute("data-verdict") == "supported"
    assert "36.8 MRR@10" in second.locator("td.cell-result .value").inner_text()
    shots = [tmp_path / "table_1280.png", tmp_path / f"table_{NARROW}.png"]
    page.screenshot(path=str(shots[0]), full_page=True)

    with page.expect_download() as download:
        page.click("#download-csv")
    assert download.value.suggested_filename == "extraction-table.csv"
    rows = list(csv.DictReader(io.StringIO(Path(download.value.path()).read_text(encoding="utf-8-sig"))))
    assert [r["paper_id"] for r in rows] == shown_order  # the CSV is the table on the page
    by_id = {r["paper_id"]: r for r in rows}
    assert by_id[tweets]["result"].startswith("[待验证] ") and by_id[tweets]["result_pages"] == "4"
    assert by_id[sparse]["datasets"] == "MS MARCO: 8.8M passages" and by_id[sparse]["datasets_pages"] == "3"
    assert by_id[sparse]["result_verdict"] == "supported"
    table_url = page.url
    context.close()

    # a phone: one card per paper, nothing wider than the screen
    context = chromium.new_context(viewport={"width": NARROW, "height": 900})
    page = context.new_page()
    page.goto(table_url)
    page.locator("#extraction").wait_for()
    assert page.evaluate("document.documentElement.scrollWidth") <= NARROW
    assert page.locator("#download-csv").is_visible()
    page.screenshot(path=str(shots[1]), full_page=True)
    context.close()
    for shot in shots:
        shutil.copyfile(shot, Path("/tmp") / f"reader_{shot.name}")
    print(
        f"\nextraction table screenshots: {', '.join(str(s) for s in shots)} (copies in /tmp/reader_table_*.png)"
    )
