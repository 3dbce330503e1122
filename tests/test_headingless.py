"""Papers without detected headings are read and audited like any other.

A .txt without headings, or a PDF whose headings are not found, used to be one
"Front matter" section, which a read skips: `reader read` and `reader audit`
then said "no text to read". These run the real ingest, the CLI and the
dry-run LLM (READER_LLM_BASE_URL=scripted:) over a search index stand-in.
"""

import json

import fitz
import pytest
from click.testing import CliRunner
from sqlalchemy import select
from test_deepread import PAPER_ID, add_paper

from reader.audit.decided import STATED
from reader.cli import cli
from reader.deepread.context import build_context, load_material
from reader.deepread.tidy import third_person
from reader.ingest.pipeline import parse_file
from reader.ingest.text import TEXT_SECTION
from reader.store.db import transaction
from reader.store.tables import Chunk

PARAGRAPHS = [
    "We introduce SPARTA, a sparse retriever for long scientific documents. On the LongDocs benchmark "
    "SPARTA reaches a recall of 81.2% at ten passages, against 64.5% for BM25.",
    "The model is trained on two million query and passage pairs drawn from PubMed. Ablations show that "
    "the learned term weights account for most of the gain over BM25.",
    "Training takes nine hours on a single graphics card with sixteen gigabytes of memory. Query latency "
    "stays below twenty milliseconds per query on the same card.",
    "The index of SPARTA is three times smaller than a dense index of the same collection. Recall drops "
    "by 2.1 points when documents are cut into passages of one hundred words.",
]
TRUE_CLAIM = (
    "On the LongDocs benchmark SPARTA reaches a recall of 81.2% at ten passages, against 64.5% for BM25."
)
FALSE_CLAIM = "SPARTA was trained on 64 TPUs for three weeks and beats ColBERT by 9.7 points."


class PaperChunksIndex:
    """The search index's interface: every search returns the paper's first chunks."""

    def __init__(self, db):
        self.db = db

    def add_paper(self, paper_id, rows):
        pass

    def remove_paper(self, paper_id):
        pass

    def ensure_paper(self, paper_id):
        return False

    def search(self, query, paper_id=None, top_k_per_path=3):
        from reader.index.hits import SearchHit

        with self.db() as s:
            chunks = s.scalars(
                select(Chunk).where(Chunk.paper_id == paper_id).order_by(Chunk.ordinal).limit(3)
            ).all()
            return [
                SearchHit(c.id, paper_id, c.text, c.section, c.page_start, c.page_end, 1.0 / (i + 1))
                for i, c in enumerate(chunks)
            ]


@pytest.fixture
def scripted_app(reader_env, monkeypatch):
    monkeypatch.setenv("READER_LLM_BASE_URL", "scripted:")
    from reader.facade import Reader

    app = Reader()
    app.services.search_index = PaperChunksIndex(app.services.db)
    monkeypatch.setattr("reader.facade.Reader", lambda *a, **k: app)
    return app


def invoke(*args):
    return CliRunner().invoke(cli, [str(a) for a in args], catch_exceptions=False)


def headingless_txt(tmp_path):
    path = tmp_path / "sparta.txt"
    path.write_text(
        "Sparse retrieval for long scientific documents\n\n" + "\n\n".join(PARAGRAPHS) + "\n",
        encoding="utf-8",
    )
    return path


def headingless_pdf(tmp_path):
    """Two pages of same-size plain paragraphs: no heading for the parser to find."""
    path = tmp_path / "sparta.pdf"
    doc = fitz.open()
    for page_paragraphs in (PARAGRAPHS[:2], PARAGRAPHS[2:]):
        page = doc.new_page()
        y = 72
        for text in page_paragraphs:
            rect = fitz.Rect(72, y, 523, y + 90)
            assert page.insert_textbox(rect, text, fontsize=10, fontname="helv") >= 0
            y += 110
    doc.save(path)
    doc.close()
    return path


def read_and_audit(app, path, tmp_path):
    out = invoke("read", path, "--json", "--quiet")
    assert out.exit_code == 0, out.output
    assert "no text to read" not in out.output
    data = json.loads(out.output)
    assert {a["kind"] for a in data["analyses"]} == {"critique", "synthesis"}
    for analysis in data["analyses"]:
        assert analysis["sentences"], analysis
        assert analysis["left_out_sections"] == []  # the whole (short) text was read
        for sentence in analysis["sentences"]:
            # the dry-run writer copies the paper's sentences (in the third person): each is
            # verified against the evidence
            assert sentence["verdict"] == "supported", sentence
            if any(r.startswith(STATED) for r in sentence["reasons"]):
                continue  # what the paper lacks, in the tool's words (reader.deepread.checked)
            assert sentence["evidence"] and any(
                sentence["text"] in " ".join(third_person(e["text"]).split()) for e in sentence["evidence"]
            )

    notes = tmp_path / "notes.md"
    notes.write_text(f"{TRUE_CLAIM} {FALSE_CLAIM}", encoding="utf-8")
    out = invoke("audit", "--paper", data["paper_id"][:12], "--text-file", notes, "--json")
    assert out.exit_code == 0, out.output
    audited = json.loads(out.output)
    assert [(s["text"], s["verdict"]) for s in audited["sentences"]] == [
        (TRUE_CLAIM, "supported"),
        (FALSE_CLAIM, "unsupported"),
    ]
    assert audited["marked_text"] == f"{TRUE_CLAIM} [待验证] {FALSE_CLAIM}"
    return data["paper_id"]


def test_headingless_txt_is_one_text_section_not_front_matter(tmp_path):
    parsed = parse_file(headingless_txt(tmp_path), headingless_txt(tmp_path).read_bytes())
    assert parsed.sections == []
    assert {b.section for b in parsed.blocks if b.kind == "body"} == {TEXT_SECTION}


def test_headingless_txt_can_be_read_and_audited(scripted_app, tmp_path):
    paper_id = read_and_audit(scripted_app, headingless_txt(tmp_path), tmp_path)
    with scripted_app.services.db() as s:
        assert set(s.scalars(select(Chunk.section).where(Chunk.paper_id == paper_id))) == {TEXT_SECTION}


def test_pdf_without_headings_can_be_read_and_audited(scripted_app, tmp_path):
    path = headingless_pdf(tmp_path)
    parsed = parse_file(path, path.read_bytes())
    assert parsed.sections == [] and parsed.pages == 2  # the case: nothing but "Front matter"
    paper_id = read_and_audit(scripted_app, path, tmp_path)
    with scripted_app.services.db() as s:
        material = load_material(s, paper_id)
    assert [sec.title for sec in material.sections] == [TEXT_SECTION]
    assert all(p.split(". ")[0] in material.full_text for p in PARAGRAPHS[1:])


def test_front_matter_that_is_the_whole_text_counts_as_body(db):
    """Papers stored before the fix: every chunk under "Front matter"."""
    add_paper(db, sections=[("Front matter", " ".join(PARAGRAPHS))])
    with transaction(db) as s:
        material = load_material(s, PAPER_ID)
    assert [sec.title for sec in material.sections] == ["Abstract", TEXT_SECTION, "Figure and table captions"]
    assert PARAGRAPHS[2] in material.full_text
    context = build_context(material, 100_000)
    assert f"## {TEXT_SECTION}" in context.text and context.left_out == []


def test_short_front_matter_of_a_paper_with_headings_stays_out(db):
    add_paper(
        db,
        sections=[
            ("Front matter", "Ann Author, Bob Writer. University of Somewhere."),
            ("1 Introduction", PARAGRAPHS[0] * 3),
            ("2 Method", PARAGRAPHS[1] * 3),
        ],
    )
    with transaction(db) as s:
        material = load_material(s, PAPER_ID)
    assert [sec.title for sec in material.sections] == [
        "Abstract",
        "1 Introduction",
        "2 Method",
        "Figure and table captions",
    ]


def test_text_under_skipped_headings_only_is_still_read(db):
    """A lone back-matter heading on page 1 puts the whole text under it."""
    add_paper(db, sections=[("Funding", " ".join(PARAGRAPHS)), ("References", "[1] Robertson, S. 2009.")])
    with transaction(db) as s:
        material = load_material(s, PAPER_ID)
    assert [sec.title for sec in material.sections][:2] == ["Abstract", TEXT_SECTION]
    assert (
        "cut into passages of one hundred words" in material.full_text
        and "Robertson" not in material.full_text
    )


def test_a_tiny_budget_still_gives_the_text_a_place(db):
    add_paper(db, sections=[("Front matter", " ".join(PARAGRAPHS))])
    with transaction(db) as s:
        material = load_material(s, PAPER_ID)
    context = build_context(material, 10)
    assert context.text.strip() and context.tokens <= 12
