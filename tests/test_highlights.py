"""The reader's own highlights and notes on a paper's PDF: stored with their page, rectangles,
text and note, listed in page order, removed with the paper, shown on the paper page, printed
by `reader show` and carried into the exported note (and so into the notes zip).
tests/test_web_browser_highlights.py selects text in a real browser."""

from __future__ import annotations

import io
import json
import re
import zipfile

import pytest
from click.testing import CliRunner
from sqlalchemy import select
from test_export import add_analysis, add_paper, front_matter
from test_web import client_for, page_token  # noqa: F401 - the fixture

from reader.errors import ReaderError
from reader.export import export_notes
from reader.store.tables import Highlight

PID = "ab" * 32
LINE = [[0.1, 0.2, 0.6, 0.22]]
SENTENCES = [("Retrieval is done in two stages.", "supported"), ("It beats BM25 everywhere.", "unsupported")]


@pytest.fixture
def paper(db):
    add_paper(db, PID, "Two-Stage Retrieval")  # a PDF of 9 pages
    add_analysis(db, PID, "critique", SENTENCES)
    return PID


def rows(db) -> list[Highlight]:
    with db() as s:
        return list(s.scalars(select(Highlight).order_by(Highlight.id)))


def note_text(db, tmp_path) -> str:
    return export_notes(db, [PID], tmp_path / "notes").notes[0].read_text(encoding="utf-8")


# ---------------------------------------------------------------- storing


def test_a_highlight_is_stored_with_its_page_rectangles_text_and_note(app, paper):
    item = app.paper(PID[:10]).highlight(
        3, [[0.1, 0.2, 0.6, 0.2234567]], "  two-stage\nretrieval\x1b ", "Compare with §4."
    )

    [row] = rows(app.services.db)
    assert (row.paper_id, row.page, row.text, row.note) == (PID, 3, "two-stage retrieval", "Compare with §4.")
    assert row.rects == [[0.1, 0.2, 0.6, 0.22346]]
    assert row.created_at is not None
    assert json.loads(json.dumps(item.to_json())) == {
        "id": row.id,
        "paper_id": PID,
        "page": 3,
        "rects": [[0.1, 0.2, 0.6, 0.22346]],
        "text": "two-stage retrieval",
        "note": "Compare with §4.",
        "created_at": item.created_at.isoformat(),
    }


def test_highlights_are_listed_in_page_order_and_go_with_their_paper(app, paper):
    app.paper(PID).highlight(5, LINE, "on page five")
    app.paper(PID).highlight(2, [[0.1, 0.7, 0.5, 0.72]], "lower on page two")
    app.paper(PID).highlight(2, [[0.1, 0.1, 0.5, 0.12]], "higher on page two")

    shown = app.paper(PID).analyses().to_json()["highlights"]
    assert [(h["page"], h["text"]) for h in shown] == [
        (2, "higher on page two"),
        (2, "lower on page two"),
        (5, "on page five"),
    ]
    assert app.paper(PID).delete_highlight(shown[0]["id"]) is True
    assert app.paper(PID).delete_highlight(shown[0]["id"]) is False
    assert len(rows(app.services.db)) == 2

    app.remove(PID)
    assert rows(app.services.db) == []


@pytest.mark.parametrize(
    ("page", "rects", "text", "note", "says"),
    [
        (10, LINE, "words", "", r"page 10: the paper's pages are 1 to 9"),
        (0, LINE, "words", "", r"page 0: the paper's pages are 1 to 9"),
        ("2", LINE, "words", "", r"page 2: the paper's pages are 1 to 9"),
        (2, LINE, "  \n ", "", r"nothing is selected"),
        (2, [], "words", "", r"has no place on the page"),
        (2, [[0.5, 0.2, 0.4, 0.3]], "words", "", r"must lie on the page"),
        (2, [[0.1, 0.2, 1.4, 0.3]], "words", "", r"must lie on the page"),
        (2, [[0.1, 0.2, "x", 0.3]], "words", "", r"a rectangle is \[x0, y0, x1, y1\]"),
        (2, LINE, "words", "n" * 2001, r"the note is 2,001 characters long; keep it to 2,000"),
    ],
)
def test_a_highlight_off_the_paper_s_pages_or_without_a_selection_is_refused_in_one_line(
    app, paper, page, rects, text, note, says
):
    with pytest.raises(ReaderError, match=says) as refused:
        app.paper(PID).highlight(page, rects, text, note)
    assert "\n" not in str(refused.value)
    assert rows(app.services.db) == []


def test_the_note_has_a_your_highlights_section_with_text_page_and_note(app, paper, tmp_path):
    assert "## Your highlights" not in note_text(app.services.db, tmp_path)

    app.paper(PID).highlight(4, LINE, "# not a heading [[link]]", "Check <b>this</b> against Table 2.")
    app.paper(PID).highlight(2, LINE, "Retrieval is done in two stages.")
    text = note_text(app.services.db, tmp_path)

    section = text.split("## Your highlights\n", 1)[1].split("\n## ", 1)[0]
    assert section.index("p. 2") < section.index("p. 4")
    assert "> [!quote] Your highlight, p. 2\n> Retrieval is done in two stages." in section
    assert "> [!quote] Your highlight, p. 4\n> \\# not a heading \\[\\[link\\]\\]" in section
    assert "> Note: Check &lt;b&gt;this&lt;/b&gt; against Table 2." in section
    assert "Highlighted by the reader on " in section
    front = front_matter(text)
    assert front["reader_highlights"] == 2 and "reader/highlighted" in front["tags"]
    # the critique is still there, before it
    assert (
        text.index("## Critique") < text.index("## Your highlights") < text.index("## Verification summary")
    )


def test_reader_show_lists_the_highlights_and_reader_export_carries_them(app, paper, tmp_path):
    from reader.cli import cli

    app.paper(PID).highlight(4, LINE, "two stages", "my note")
    result = CliRunner().invoke(cli, ["show", PID[:10]], obj=app, catch_exceptions=False)
    assert result.exit_code == 0, result.output
    assert "=== Your highlights (1) ===" in result.output
    assert "p. 4: “two stages”" in result.output and "note: my note" in result.output
    as_json = json.loads(CliRunner().invoke(cli, ["show", PID[:10], "--json"], obj=app).output)
    assert [(h["page"], h["text"], h["note"]) for h in as_json["highlights"]] == [
        (4, "two stages", "my note")
    ]

    exported = CliRunner().invoke(cli, ["export", "--all", "--out", str(tmp_path / "out")], obj=app)
    assert exported.exit_code == 0, exported.output
    [note] = (tmp_path / "out").glob("two-stage-retrieval-*.md")
    assert "> [!quote] Your highlight, p. 4\n> two stages\n>\n> Note: my note" in note.read_text(
        encoding="utf-8"
    )


# ---------------------------------------------------------------- the web page


def post(client, pid, body, origin="http://testserver"):
    return client.post(
        f"/paper/{pid}/highlights",
        content=json.dumps(body),
        headers={"Content-Type": "application/json", "Accept": "application/json", "Origin": origin},
    )


def test_a_posted_highlight_is_drawn_listed_and_in_the_downloaded_note(app, paper, client_for):  # noqa: F811
    client = client_for()
    token = page_token(client, f"/paper/{PID}")
    answer = post(
        client, PID, {"page": 3, "rects": LINE, "text": "two stages", "note": "mine", "csrf_token": token}
    )
    assert answer.status_code == 201, answer.text
    made = answer.json()
    assert (made["page"], made["text"], made["note"]) == (3, "two stages", "mine")

    html = client.get(f"/paper/{PID}").text
    listed = html.split('id="highlights"', 1)[1].split("</section>", 1)[0]
    assert "Your highlights (1)" in listed
    assert f'href="/paper/{PID}?page=3#pdf"' in listed and "two stages" in listed and "Note: mine" in listed
    assert f'action="/paper/{PID}/highlights/{made["id"]}/delete"' in listed
    drawn = json.loads(re.search(r"data-highlights='([^']*)'", html).group(1).replace("&#34;", '"'))
    assert drawn == [{"id": made["id"], "page": 3, "rects": LINE, "note": "mine"}]

    note = client.get(f"/paper/{PID}/note.md").text
    assert "## Your highlights" in note and "> [!quote] Your highlight, p. 3\n> two stages" in note
    with zipfile.ZipFile(io.BytesIO(client.get("/library/notes.zip").content)) as notes:
        zipped = next(
            notes.read(n).decode()
            for n in notes.namelist()
            if n.startswith("reader-notes/two-stage-retrieval")
        )
    assert "> [!quote] Your highlight, p. 3\n> two stages\n>\n> Note: mine" in zipped


def test_the_list_s_delete_button_removes_the_highlight(app, paper, client_for):  # noqa: F811
    item = app.paper(PID).highlight(2, LINE, "to be deleted")
    client = client_for()
    token = page_token(client, f"/paper/{PID}")
    gone = client.post(
        f"/paper/{PID}/highlights/{item.id}/delete",
        data={"csrf_token": token},
        headers={"Origin": "http://testserver"},
        follow_redirects=False,
    )
    assert gone.status_code == 303 and gone.headers["location"] == f"/paper/{PID}#highlights"
    assert rows(app.services.db) == []
    assert "Your highlights (0)" in client.get(f"/paper/{PID}").text
    # without the page's form token, nothing is deleted
    kept = app.paper(PID).highlight(2, LINE, "kept")
    refused = client.post(f"/paper/{PID}/highlights/{kept.id}/delete", data={"csrf_token": "forged"})
    assert refused.status_code == 403 and len(rows(app.services.db)) == 1


@pytest.mark.parametrize(
    ("body", "says"),
    [
        ({"page": 12, "rects": LINE, "text": "words"}, "page 12: the paper's pages are 1 to 9"),
        ({"page": 2, "rects": LINE, "text": ""}, "nothing is selected"),
        ({"page": 2, "rects": LINE, "text": "w", "note": "n" * 2001}, "keep it to 2,000"),
    ],
)
def test_bad_highlights_are_refused_with_one_line(app, paper, client_for, body, says):  # noqa: F811
    answer = post(client_for(), PID, body)
    assert answer.status_code == 400 and says in answer.json()["error"]
    assert rows(app.services.db) == []


def test_a_highlight_posted_from_another_site_or_without_json_is_refused(app, paper, client_for):  # noqa: F811
    client = client_for()
    body = {"page": 2, "rects": LINE, "text": "words"}
    foreign = post(client, PID, body, origin="http://evil.example")
    assert foreign.status_code == 403 and "another site" in foreign.json()["error"]
    not_json = client.post(
        f"/paper/{PID}/highlights",
        content=b"page=2",
        headers={"Accept": "application/json", "Origin": "http://testserver"},
    )
    assert not_json.status_code == 400 and "JSON object" in not_json.json()["error"]
    # a plain form post (no JSON Accept) without the page's token is a forged request
    forged = client.post(
        f"/paper/{PID}/highlights", content=json.dumps(body), headers={"Origin": "http://testserver"}
    )
    assert forged.status_code == 403
    assert rows(app.services.db) == []
    missing = post(client, "cd" * 32, body)
    assert missing.status_code == 404


# ---------------------------------------------------------------- hostile posts


def raw_post(client, pid, content: bytes):
    return client.post(
        f"/paper/{pid}/highlights",
        content=content,
        headers={
            "Content-Type": "application/json",
            "Accept": "application/json",
            "Origin": "http://testserver",
        },
    )


def test_a_huge_integer_or_json_nested_very_deep_is_a_clear_400(app, paper, client_for):  # noqa: F811
    """A 401-digit integer in a rectangle was an OverflowError and JSON nested 200,000 deep a
    RecursionError: both 500s. Each is one line now, and nothing is stored."""
    client = client_for()
    huge = "9" * 401
    for rect in (f"[{huge}, 0.2, 0.6, 0.3]", f"[0.1, 0.2, -{huge}, 0.3]", f"[0.1, 0.2, 0.6, {huge}.5e400]"):
        answer = raw_post(client, PID, f'{{"page": 2, "text": "words", "rects": [{rect}]}}'.encode())
        assert answer.status_code == 400, answer.text
        assert "rectangle 1 of the highlight: a rectangle is [x0, y0, x1, y1]" in answer.json()["error"]
    page = raw_post(client, PID, f'{{"page": {huge}, "text": "words", "rects": {json.dumps(LINE)}}}'.encode())
    assert page.status_code == 400 and "the paper's pages are 1 to 9" in page.json()["error"]

    deep = b'{"page": 2, "text": "words", "rects": ' + b"[" * 200_000 + b"]" * 200_000 + b"}"
    answer = raw_post(client, PID, deep)
    assert answer.status_code == 400, answer.text[:300]
    assert answer.json()["error"] == "the highlight's JSON is nested too deeply: send one flat object"
    nested_rect = raw_post(client, PID, b'{"page": 2, "text": "w", "rects": [[[[[1]]], 0, 1, 1]]}')
    assert nested_rect.status_code == 400 and "a rectangle is" in nested_rect.json()["error"]
    assert rows(app.services.db) == []


def test_one_paper_keeps_at_most_500_highlights_and_250000_characters_of_them(app, paper, client_for):  # noqa: F811
    """1,500 highlights on one paper were all accepted (a 6.8 MB page, a 3 MB note)."""
    from reader.annotations.highlights import PAPER_CHARS_LIMIT, PAPER_LIMIT
    from reader.store.db import transaction

    assert (PAPER_LIMIT, PAPER_CHARS_LIMIT) == (500, 250_000)
    with transaction(app.services.db) as s:
        s.add_all(
            Highlight(paper_id=PID, page=1, rects=LINE, text=f"highlight {n}", note="")
            for n in range(PAPER_LIMIT - 1)
        )
    client = client_for()
    token = page_token(client, f"/paper/{PID}")
    body = {"page": 2, "rects": LINE, "text": "the last one", "csrf_token": token}
    assert post(client, PID, body).status_code == 201
    refused = post(client, PID, {**body, "text": "one too many"})
    assert refused.status_code == 400
    assert refused.json()["error"] == (
        "this paper has 500 highlights, as many as one paper keeps (500); delete some to add more"
    )
    assert len(rows(app.services.db)) == PAPER_LIMIT

    with transaction(app.services.db) as s:
        s.query(Highlight).delete()
        s.add_all(
            Highlight(paper_id=PID, page=1, rects=LINE, text="t" * 4000, note="n" * 1000) for _ in range(49)
        )
    with pytest.raises(
        ReaderError, match=r"hold 245,000 characters; with this one they would pass the 250,000"
    ):
        app.paper(PID).highlight(2, LINE, "w" * 4000, "n" * 1001)
    app.paper(PID).highlight(2, LINE, "w" * 4000, "n" * 1000)  # exactly at the limit
    assert len(rows(app.services.db)) == 50
