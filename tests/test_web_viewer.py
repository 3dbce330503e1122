"""The PDF viewer's text layer and search over HTTP (test client), on a real ingest of the
sample paper: a page's words with their places, search with the matches' rectangles, and
the answers to bad input. The browser side is in tests/test_web_viewer_browser.py."""

from __future__ import annotations

import pymupdf
from conftest import SAMPLE_PAPER
from test_web_pdf import ingest_sample, web  # noqa: F401 (the fixture)

from reader.ingest.pages import page_words
from reader.web.page_text import MAX_QUERY_CHARS, find_in_pages, page_text

JSON = {"Accept": "application/json"}


def overlap(a, b) -> bool:
    """Two [x0, y0, x1, y1] rectangles share some area."""
    return a[0] < b[2] and b[0] < a[2] and a[1] < b[3] and b[1] < a[3]


def test_a_page_s_words_come_with_their_places_and_are_read_once(web):  # noqa: F811
    pid = ingest_sample(web)
    reply = web.get(f"/api/paper/{pid}/page/1/words")
    assert reply.status_code == 200, reply.text
    data = reply.json()
    assert data["page"] == 1 and data["pages"] == 2
    with pymupdf.open(SAMPLE_PAPER) as doc:
        page = doc[0]
        expected = page.get_text("words", sort=False)
        width, height = page.rect.width, page.rect.height
    assert data["aspect"] == round(height / width, 4)
    assert [w[4] for w in data["words"]] == [w[4] for w in expected]
    for mine, theirs in zip(data["words"], expected):
        assert abs(mine[0] - theirs[0] / width) < 1e-3 and abs(mine[3] - theirs[3] / height) < 1e-3
    # words of one line share its number; a new line gets the next one
    lines = [w[5] for w in data["words"]]
    assert lines == sorted(lines) and lines[0] == 0 and len(set(lines)) > 20

    kept = web.ctx.settings.home / "pages" / pid / "words.json"
    mtime = kept.stat().st_mtime_ns
    assert web.get(f"/api/paper/{pid}/page/2/words").json()["words"][0][4] == "References"
    assert kept.stat().st_mtime_ns == mtime  # read from the PDF once, for every page


def test_the_words_of_a_page_the_paper_does_not_have_are_404(web):  # noqa: F811
    pid = ingest_sample(web)
    for url in (
        f"/api/paper/{pid}/page/3/words",
        f"/api/paper/{pid}/page/0/words",
        f"/api/paper/{pid}/page/x/words",
        f"/api/paper/{'0' * 64}/page/1/words",
        "/api/paper/not-an-id/page/1/words",
    ):
        reply = web.get(url)
        assert reply.status_code == 404, (url, reply.text)
    reply = web.get(f"/api/paper/{pid}/page/3/words")
    assert reply.json() == {"error": "the paper has no page 3 (it has 2)"}


def test_search_counts_every_match_and_gives_rectangles_on_the_right_page(web):  # noqa: F811
    pid = ingest_sample(web)
    reply = web.get(f"/api/paper/{pid}/search", params={"q": "Column"})
    assert reply.status_code == 200, reply.text
    data = reply.json()
    with pymupdf.open(SAMPLE_PAPER) as doc:
        expected = [(no, hit) for no, page in enumerate(doc, start=1) for hit in page.search_for("column")]
        size = doc[0].rect
    # pymupdf's own search finds the same places, case aside
    assert data["count"] == len(expected) == len(data["matches"]) > 2
    assert not data["truncated"]
    for match, (no, hit) in zip(data["matches"], expected):
        assert match["page"] == no
        [rect] = match["rects"]
        assert rect[0] == no
        theirs = [hit.x0 / size.width, hit.y0 / size.height, hit.x1 / size.width, hit.y1 / size.height]
        assert overlap(rect[1:], theirs), (rect, theirs)
        # part of a word ("columns") is highlighted as that part, not the whole word
        assert rect[3] - rect[1] < (theirs[2] - theirs[0]) * 1.5

    phrase = web.get(f"/api/paper/{pid}/search", params={"q": "the  LEFT column"}).json()
    assert phrase["count"] >= 1 and phrase["matches"][0]["page"] == 1
    assert web.get(f"/api/paper/{pid}/search", params={"q": "Self-RAG"}).json()["matches"][0]["page"] == 2
    assert web.get(f"/api/paper/{pid}/search", params={"q": "lunar photographs"}).json() == {
        "query": "lunar photographs",
        "count": 0,
        "matches": [],
        "truncated": False,
    }


def test_search_refuses_bad_input_in_one_line(web, tmp_path):  # noqa: F811
    pid = ingest_sample(web)
    empty = web.get(f"/api/paper/{pid}/search", params={"q": "   "})
    assert empty.status_code == 400 and "give the words" in empty.json()["error"]
    long = web.get(f"/api/paper/{pid}/search", params={"q": "a" * (MAX_QUERY_CHARS + 1)})
    assert long.status_code == 400 and f"at most {MAX_QUERY_CHARS}" in long.json()["error"]
    assert web.get(f"/api/paper/{'0' * 64}/search", params={"q": "column"}).status_code == 404
    note = tmp_path / "note.md"
    note.write_text("# A note\n\nA paper that came as text has no pages to search.\n", encoding="utf-8")
    [text_paper] = web.ctx.ingest([note])
    reply = web.get(f"/api/paper/{text_paper.paper_id}/search", params={"q": "pages"}, headers=JSON)
    assert reply.status_code == 400 and "came from a text file" in reply.json()["error"]
    assert "\n" not in reply.json()["error"]


def words_of(*lines: list[str], x_step: float = 0.1) -> list:
    """Words laid out in lines, as page_words gives them."""
    out = []
    for n, line in enumerate(lines):
        for i, word in enumerate(line):
            out.append([i * x_step, n * 0.02, i * x_step + 0.08, n * 0.02 + 0.015, word, n])
    return out


def test_a_word_broken_at_a_line_end_is_found_whole_and_highlighted_on_both_lines():
    words = words_of(["the", "optimum", "tempera-"], ["ture", "regime"])
    text, where = page_text(words)
    assert text == "the optimum tempera\u00adture regime"
    count, [match] = find_in_pages([{"words": words}], "Temperature regime")
    assert count == 1
    first, second = match.rects
    assert first[0] == 1 and first[1] == 0.2 and first[4] == 0.015  # "tempera" on line 1
    assert second[1] == 0.0 and second[3] == 0.18 and second[2] == 0.02  # "ture regime" on line 2
    # a hyphen inside a line, or before a capital, stays; one at a line end is found either way
    assert page_text(words_of(["state-of-the-art", "Self-"], ["RAG"]))[0] == "state-of-the-art self- rag"
    broken = [{"words": words_of(["a", "relational", "n-"], ["gram", "model"])}]
    assert find_in_pages(broken, "n-gram model")[0] == 1 and find_in_pages(broken, "ngram")[0] == 1
    assert find_in_pages(broken, "n gram")[0] == 0


def test_chinese_lines_join_without_a_space_and_a_match_covers_its_share_of_a_word():
    words = words_of(["小麦的最适温度"], ["范围为十五度"])
    count, [match] = find_in_pages([{"words": words}], "温度范围")
    assert count == 1
    first, second = match.rects
    assert abs(first[1] - 0.08 * 5 / 7) < 1e-3 and first[3] == 0.08  # the last 2 of 7 characters
    assert second[1] == 0.0 and abs(second[3] - 0.08 * 2 / 6) < 1e-3


def test_ligatures_are_their_letters_in_the_words(tmp_path):
    doc = pymupdf.open()
    page = doc.new_page()
    # MuPDF's own fallback font has glyphs for the ligatures (Helvetica has none)
    page.insert_font(fontname="F0", fontbuffer=pymupdf.Font("cjk").buffer)
    page.insert_text((72, 72), "The ﬁrst ﬂow", fontname="F0")
    pdf = tmp_path / "ligature.pdf"
    doc.save(pdf)
    words = page_words(pdf)[0]["words"]
    assert [w[4] for w in words] == ["The", "first", "flow"]
