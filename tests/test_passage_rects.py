"""Where passages stand on their pages (reader.ingest.pages): kept at ingest, re-derived for
papers stored before, and the page images they are drawn over."""

from __future__ import annotations

import os

import pytest
from conftest import SAMPLE_PAPER, make_reader
from sqlalchemy import select, update

from reader.ingest.pages import find_doi, normalize, passage_rects, render_page
from reader.store.db import transaction
from reader.store.tables import Chunk, Paper
from reader.web import pdf


@pytest.fixture
def ingested(tmp_path, migrated_home):
    ctx = make_reader(migrated_home(tmp_path / "home"), env=os.environ, cache=None)
    [result] = ctx.ingest([SAMPLE_PAPER])
    assert result.status == "ingested", result
    return ctx, result.paper_id


def _chunks(ctx, paper_id):
    with ctx.services.db() as s:
        return [
            (c.id, c.page_start, c.page_end, c.text, c.rects)
            for c in s.scalars(select(Chunk).where(Chunk.paper_id == paper_id).order_by(Chunk.ordinal))
        ]


def _words_inside(pdf, page_no, rect):
    """The normalised words of the page whose centre lies inside a fractional rectangle."""
    import pymupdf

    with pymupdf.open(pdf) as doc:
        page = doc[page_no - 1]
        w, h = page.rect.width, page.rect.height
        _, x0, y0, x1, y1 = rect
        return [
            normalize(word[4])
            for word in page.get_text("words")
            if x0 * w <= (word[0] + word[2]) / 2 <= x1 * w and y0 * h <= (word[1] + word[3]) / 2 <= y1 * h
        ]


def test_every_passage_of_a_pdf_gets_rectangles_holding_its_words(ingested):
    ctx, pid = ingested
    chunks = _chunks(ctx, pid)
    assert chunks and all(rects for *_, rects in chunks)
    for _, start, end, text, rects in chunks:
        wanted = normalize(text)
        for rect in rects:
            page, x0, y0, x1, y1 = rect
            assert start <= page <= end and 0 <= x0 < x1 <= 1 and 0 <= y0 < y1 <= 1
            inside = [w for w in _words_inside(SAMPLE_PAPER, page, rect) if len(w) > 3]
            # the words in the box are the passage's (a neighbour's word may share a line's edge)
            assert inside and sum(w in wanted for w in inside) / len(inside) >= 0.9, (rect, inside[:10])


def test_papers_stored_before_rectangles_get_them_from_their_pdf(ingested):
    ctx, pid = ingested
    before = {cid: rects for cid, *_, rects in _chunks(ctx, pid)}
    with transaction(ctx.services.db) as s:  # as migration 0004 leaves an older paper
        s.execute(update(Chunk).where(Chunk.paper_id == pid).values(rects=None))
    first = next(iter(before))
    box = pdf.passage_box(ctx.library, first)
    assert box.rects == before[first] and box.page == before[first][0][0]
    assert {cid: rects for cid, *_, rects in _chunks(ctx, pid)} == before


def test_a_moved_pdf_leaves_no_rectangles_and_says_where_it_was(ingested, tmp_path):
    ctx, pid = ingested
    with transaction(ctx.services.db) as s:
        s.execute(update(Chunk).where(Chunk.paper_id == pid).values(rects=None))
        s.execute(update(Paper).where(Paper.id == pid).values(source_path=str(tmp_path / "gone.pdf")))
    from reader.errors import ReaderError

    with pytest.raises(ReaderError, match="no longer at"):
        pdf.paper_file(ctx.library, pid)
    assert pdf.derive_rects(ctx.library, pid) > 0
    assert all(rects == [] for *_, rects in _chunks(ctx, pid))


def test_page_images_are_rendered_once_then_served_from_the_cache(ingested):
    ctx, pid = ingested
    path = pdf.page_image(ctx.library, pid, 1)
    assert path.read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"
    mtime = path.stat().st_mtime_ns
    assert pdf.page_image(ctx.library, pid, 1) == path and path.stat().st_mtime_ns == mtime
    from reader.errors import PaperNotFound

    with pytest.raises(PaperNotFound):
        pdf.page_image(ctx.library, pid, 99)


def test_text_files_have_no_rectangles(tmp_path):
    note = tmp_path / "note.md"
    note.write_text("# A note\n\n" + "Some sentence about measuring things carefully. " * 40)
    ctx = make_reader(tmp_path / "home", env=os.environ, cache=None)
    [result] = ctx.ingest([note])
    assert all(rects == [] for *_, rects in _chunks(ctx, result.paper_id))
    with ctx.services.db() as s:
        assert s.get(Paper, result.paper_id).file_name == "note.md"


def test_doi_is_found_in_the_text():
    assert (
        find_doi(["", "Published as doi:10.18653/v1/2020.acl-main.447."]) == "10.18653/v1/2020.acl-main.447"
    )
    assert find_doi(["no identifier here"]) is None


def test_rectangles_of_a_passage_spanning_two_pages():
    data = SAMPLE_PAPER.read_bytes()
    [one, both] = passage_rects(
        data,
        [
            (1, 1, "nothing of this text is on the page at all"),
            (1, 2, _page_text(data, 1) + " " + _page_text(data, 2)),
        ],
    )
    assert one == []
    assert {r[0] for r in both} == {1, 2}
    assert render_page(data, 2)[:4] == b"\x89PNG"


def _page_text(data, page_no):
    import pymupdf

    with pymupdf.open(stream=data, filetype="pdf") as doc:
        return doc[page_no - 1].get_text()
