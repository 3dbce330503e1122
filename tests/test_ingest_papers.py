"""Every shared paper ingests with its structure: title, references, captions,
page spans, and at least 95% of pymupdf's text in the chunks.

The project's papers/sample_paper.pdf (two columns, a table caption, numbered
references, page numbers in the footer) is always checked as well, so a clone
without ../shared still tests the same rules on a real PDF; the expectations
about named shared papers are checked when ../shared/papers is there."""

import re

import pytest
from conftest import SAMPLE_PAPER, shared_pdfs

from benchmarks.bench_ingest import coverage
from reader.ingest.chunk import chunk_paper
from reader.ingest.pdf import parse_pdf, raw_page_texts

SHARED = shared_pdfs()
PDFS = [*SHARED, SAMPLE_PAPER]
CAPTION_IN_RAW = re.compile(r"^(Figure|Fig\.?|Table)\s*\d+\s*[.:|]", re.M)
# a paper with a reference heading has at least this many references
MIN_REFERENCES = {SAMPLE_PAPER.name: 3}  # the sample's list is short; real papers have 5 or more


def named(ingested, name: str):
    """The parsed paper of that file name."""
    return next(parsed for p, (parsed, _, _) in ingested.items() if p.name == name)


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
        assert len(parsed.references) >= MIN_REFERENCES.get(path.name, 5)
        assert any(c.section == "References" for c in chunks)
    if CAPTION_IN_RAW.search(raw_text):
        assert parsed.captions
        assert any(c.section.endswith(" caption") for c in chunks)
    assert parsed.language == "en"


def test_titles_match_known_papers(ingested):
    titles = {p.name: parsed.title for p, (parsed, _, _) in ingested.items()}
    assert titles[SAMPLE_PAPER.name] == "Reading Order and Coverage When Ingesting Two-Column Papers"
    # the title block is the title alone: the author line below it is not part of it
    sample_blocks = named(ingested, SAMPLE_PAPER.name).blocks
    assert [b.text for b in sample_blocks if b.kind == "title"] == [titles[SAMPLE_PAPER.name]]
    if not SHARED:
        return
    assert titles["acl2014_P14-1059.pdf"] == (
        "How to make words with vectors: Phrase generation in distributional semantics"
    )
    assert titles["acl2020_2kenize.pdf"].startswith("2kenize: Tying Subword Sequences")
    assert titles["mdpi_futureinternet2014_fi6010061.pdf"] == "Analysis Matrix for Smart Cities"
    assert titles["acl2020_specter_2020.acl-main.207.pdf"].endswith("Citation-informed Transformers")


# page 1 of each paper: snippets in reading order, left column before the right one
READING_ORDER = {
    SAMPLE_PAPER.name: [
        "Tools that answer questions about a paper",  # abstract (full width)
        "1 Introduction",  # left column heading, level with "3 Results"
        "Evidence search only works",  # left column body
        "Lines that repeat in the top or bottom",  # bottom of the left column
        "3 Results",  # top of the right column
        "Table 1: Ingest of the 14 shared papers",  # caption in the right column
        "A single extraction per page",  # bottom of the right column
    ],
    "acl2014_P14-1059.pdf": [
        "We introduce the problem of generation",  # abstract (left column)
        "1 Introduction",  # left column heading
        "Distributional methods for semantics",  # left column body
        "Besides these theoretical considerations",  # top of the right column
    ],
}


@pytest.mark.parametrize("name", [n for n in READING_ORDER if SHARED or n == SAMPLE_PAPER.name])
def test_two_column_reading_order(ingested, name):
    text = "\n".join(b.text for b in named(ingested, name).blocks if b.page == 1)
    order = [text.index(snippet) for snippet in READING_ORDER[name]]
    assert order == sorted(order)


def test_sections_headings_and_abstract(ingested):
    sample = named(ingested, SAMPLE_PAPER.name)
    assert [s["title"] for s in sample.sections] == [
        "Abstract",
        "1 Introduction",
        "2 Method",
        "3 Results",
        "4 Limitations",
        "5 Conclusion",
        "References",
    ]
    assert sample.abstract.startswith("Tools that answer questions about a paper")
    assert sample.abstract.endswith("where it has figures or tables, captions.")
    assert "Evidence search" not in sample.abstract, "the abstract stops at the first section"
    assert [(c.kind, c.label, c.page) for c in sample.captions] == [("table", "Table 1", 1)]
    if not SHARED:
        return
    parsed = named(ingested, "acl2014_P14-1059.pdf")
    titles = [s["title"] for s in parsed.sections]
    assert titles[:3] == ["Abstract", "1 Introduction", "2 Related work"]
    assert "References" in titles
    assert parsed.abstract.startswith("We introduce the problem of generation")
    assert len(parsed.abstract) < 1500
    assert parsed.authors == ["Georgiana Dinu", "Marco Baroni"]
    assert parsed.year == 2014


def test_reference_styles(ingested):
    # numbered entries whose lines wrap: each wrapped line stays in its entry
    sample = named(ingested, SAMPLE_PAPER.name).references
    assert [(r.marker, r.page) for r in sample] == [("[1]", 2), ("[2]", 2), ("[3]", 2)]
    assert [r.text for r in sample] == [
        "Akari Asai, Zeqiu Wu, Yizhong Wang, Avirup Sil, and Hannaneh Hajishirzi. 2024. Self-RAG: Learning "
        "to retrieve, generate, and critique through self-reflection. In ICLR.",
        "Shi-Qi Yan, Jia-Chen Gu, Yun Zhu, and Zhen-Hua Ling. 2024. Corrective retrieval augmented "
        "generation. arXiv:2401.15884.",
        "Artifex Software. 2024. PyMuPDF documentation. https://pymupdf.readthedocs.io.",
    ]
    if not SHARED:
        return
    by_name = {p.name: parsed for p, (parsed, _, _) in ingested.items()}
    numbered = by_name["iop_jpcs2188_012011.pdf"].references
    assert [r.marker for r in numbered[:3]] == ["[1]", "[2]", "[3]"]
    author_year = by_name["acl2014_P14-1059.pdf"].references
    assert author_year[0].text.startswith("Alexandr Andoni and Piotr Indyk. 2008.")
    assert all(r.marker == "" for r in author_year)
    # hanging-indent continuation lines are joined into their entry, not split off
    assert not any(r.text[0].islower() for r in author_year)


def test_running_headers_dropped(ingested):
    # the sample's footers are its page numbers, 1 and 2, in the bottom margin
    sample = named(ingested, SAMPLE_PAPER.name)
    assert sample.blocks[-1].text.startswith("[3] Artifex Software")
    assert not any(b.text.strip().isdigit() for b in sample.blocks)
    if not SHARED:
        return
    path = next(p for p in PDFS if p.name.startswith("mdpi_"))
    body = [b.text for b in ingested[path][0].blocks if b.kind == "body"]
    assert not any(t.startswith("Future Internet 2014, 6 ") for t in body[5:])
