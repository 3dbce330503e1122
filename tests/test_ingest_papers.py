"""Every shared paper ingests with its structure: title, references, captions,
page spans, and at least 95% of pymupdf's text in the chunks."""

import re
import sys

import pytest

from conftest import ROOT, shared_pdfs

sys.path.insert(0, str(ROOT / "benchmarks"))
from bench_ingest import coverage  # noqa: E402

from reader.ingest.chunk import chunk_paper  # noqa: E402
from reader.ingest.pdf import parse_pdf, raw_page_texts  # noqa: E402

PDFS = shared_pdfs()
CAPTION_IN_RAW = re.compile(r"^(Figure|Fig\.?|Table)\s*\d+\s*[.:|]", re.M)

pytestmark = pytest.mark.skipif(not PDFS, reason="../shared/papers is not available")


@pytest.fixture(scope="module")
def ingested():
    """path -> (parsed, chunks, raw page texts), parsed once for the module."""
    return {p: (parse_pdf(p), None, raw_page_texts(p)) for p in PDFS}


@pytest.fixture(scope="module")
def chunked(ingested):
    return {p: chunk_paper(parsed) for p, (parsed, _, _) in ingested.items()}


@pytest.mark.parametrize("path", PDFS, ids=[p.stem[:30] for p in PDFS])
def test_shared_paper_structure(path, ingested, chunked):
    parsed, _, raw_pages = ingested[path]
    chunks = chunked[path]
    assert parsed.title.strip() and parsed.title != path.stem
    assert parsed.pages == len(raw_pages)
    assert chunks, "no chunks"
    for chunk in chunks:
        assert 1 <= chunk.page_start <= chunk.page_end <= parsed.pages
        assert chunk.text.strip()
    assert [c.ordinal for c in chunks] == list(range(len(chunks)))
    raw_text = "\n".join(raw_pages)
    assert coverage(raw_text, [c.text for c in chunks]) >= 0.95
    if re.search(r"^\s*(references|bibliography|literature cited)\s*$", raw_text, re.I | re.M):
        assert len(parsed.references) >= 5
        assert any(c.section == "References" for c in chunks)
    if CAPTION_IN_RAW.search(raw_text):
        assert parsed.captions
        assert any(c.section.endswith(" caption") for c in chunks)
    assert parsed.language == "en"


def test_titles_match_known_papers(ingested):
    titles = {p.name: parsed.title for p, (parsed, _, _) in ingested.items()}
    assert titles["acl2014_P14-1059.pdf"] == (
        "How to make words with vectors: Phrase generation in distributional semantics")
    assert titles["acl2020_2kenize.pdf"].startswith("2kenize: Tying Subword Sequences")
    assert titles["mdpi_futureinternet2014_fi6010061.pdf"] == "Analysis Matrix for Smart Cities"
    assert titles["acl2020_specter_2020.acl-main.207.pdf"].endswith("Citation-informed Transformers")


def test_two_column_reading_order(ingested):
    """acl2014 page 1: abstract, then the left column's introduction, then the right column."""
    path = next(p for p in PDFS if p.name == "acl2014_P14-1059.pdf")
    text = "\n".join(b.text for b in ingested[path][0].blocks if b.page == 1)
    order = [
        text.index("We introduce the problem of generation"),       # abstract (left column)
        text.index("1 Introduction"),                                 # left column heading
        text.index("Distributional methods for semantics"),         # left column body
        text.index("Besides these theoretical considerations"),      # top of the right column
    ]
    assert order == sorted(order)


def test_sections_headings_and_abstract(ingested):
    path = next(p for p in PDFS if p.name == "acl2014_P14-1059.pdf")
    parsed = ingested[path][0]
    titles = [s["title"] for s in parsed.sections]
    assert titles[:3] == ["Abstract", "1 Introduction", "2 Related work"]
    assert "References" in titles
    assert parsed.abstract.startswith("We introduce the problem of generation")
    assert len(parsed.abstract) < 1500
    assert parsed.authors == ["Georgiana Dinu", "Marco Baroni"]
    assert parsed.year == 2014


def test_reference_styles(ingested):
    by_name = {p.name: parsed for p, (parsed, _, _) in ingested.items()}
    numbered = by_name["iop_jpcs2188_012011.pdf"].references
    assert [r.marker for r in numbered[:3]] == ["[1]", "[2]", "[3]"]
    author_year = by_name["acl2014_P14-1059.pdf"].references
    assert author_year[0].text.startswith("Alexandr Andoni and Piotr Indyk. 2008.")
    assert all(r.marker == "" for r in author_year)
    # hanging-indent continuation lines are joined into their entry, not split off
    assert not any(r.text[0].islower() for r in author_year)


def test_running_headers_dropped(ingested):
    path = next(p for p in PDFS if p.name.startswith("mdpi_"))
    body = [b.text for b in ingested[path][0].blocks if b.kind == "body"]
    assert not any(t.startswith("Future Internet 2014, 6 ") for t in body[5:])
