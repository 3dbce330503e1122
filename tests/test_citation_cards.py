"""Citation cards: a marker in the note or on the paper page opens its reference's entry, the
library paper it names (title, abstract, link) or a way to add it; the web page's import form and
Zotero button."""

from __future__ import annotations

import pytest
from conftest import make_reader
from test_citation_graph import BASE, FOLLOW
from test_export import add_analysis
from test_web import page_token

FOLLOW_WITH_DOI = FOLLOW.replace(
    "[3] Reimers N, Gurevych I. Sentence-BERT: sentence embeddings using siamese networks. EMNLP 2019.",
    "[3] Reimers N, Gurevych I. Sentence-BERT: sentence embeddings. EMNLP 2019. doi:10.18653/v1/D19-1410",
)


@pytest.fixture
def cards(reader_env, tmp_path):
    (tmp_path / "base.md").write_text(BASE, encoding="utf-8")
    (tmp_path / "follow.md").write_text(FOLLOW_WITH_DOI, encoding="utf-8")
    app = make_reader(cache=None)
    base, follow = app.ingest([tmp_path / "base.md", tmp_path / "follow.md"])
    add_analysis(
        app.services.db,
        follow.paper_id,
        "synthesis",
        [
            ("The paper runs SPARTA [1] as its baseline.", "supported"),
            ("Vectors come from a siamese encoder [3].", "supported"),
        ],
    )
    return app, base.paper_id, follow.paper_id


def test_the_note_links_each_marker_to_its_card(cards):
    app, base, follow = cards
    _, note = app.paper(follow).note()
    assert "SPARTA [\\[1\\]](#^cite-synthesis-1) as its baseline" in note
    card = next(line for line in note.splitlines() if line.startswith("- **\\[1\\]**"))
    assert card.endswith("^cite-synthesis-1")
    assert (
        f"in your library: [[sparta-sparse-retrieval-of-scientific-passages-at-scale-{base[:8]}|SPARTA: Sparse"
        in card
    )
    assert "We describe SPARTA, a sparse retriever" in card
    other = next(line for line in note.splitlines() if line.startswith("- **\\[3\\]**"))
    assert "not in your library; add it: `reader import 10.18653/v1/D19-1410`" in other


def test_the_paper_page_shows_the_card_and_a_way_to_add_the_paper(cards):
    from fastapi.testclient import TestClient

    from reader.web.app import create_app

    app, base, follow = cards
    with TestClient(create_app(app)) as client:
        html = client.get(f"/paper/{follow}").text
        assert f'In your library: <a href="/paper/{base}">SPARTA: Sparse Retrieval' in html
        assert (
            'name="identifiers" value="10.18653/v1/D19-1410"' in html and "Add 10.18653/v1/D19-1410" in html
        )
        # the card's button posts to /import; without services the DOI is not fetched, and says how
        page = client.post(
            "/import", data={"identifiers": "10.18653/v1/D19-1410", "csrf_token": page_token(client)}
        )
        assert page.status_code == 200 and "the network, which is off" in page.text
        empty = client.post("/import", data={"identifiers": " ", "csrf_token": page_token(client)})
        assert empty.status_code == 400 and "No identifier received" in empty.text
        forged = client.post("/import", data={"identifiers": "10.1/x"})
        assert forged.status_code == 403


def test_the_zotero_button_writes_the_note(cards, monkeypatch):
    from fastapi.testclient import TestClient
    from test_zotero_note import ZoteroServer

    from reader.facade import Reader
    from reader.store.db import transaction
    from reader.store.tables import Paper
    from reader.web.app import create_app

    app, _, follow = cards
    with transaction(app.services.db) as session:
        session.get(Paper, follow).zotero_key = "ITEMKEY1"
    server = ZoteroServer()
    monkeypatch.setenv("READER_ZOTERO_LIBRARY", "users/42")
    monkeypatch.setenv("READER_ZOTERO_API_KEY", "k")
    monkeypatch.setattr("reader.export.zotero_note.BASE_URL", server.url)
    try:
        with TestClient(create_app(Reader())) as client:
            assert 'id="zotero-note"' in client.get(f"/paper/{follow}").text
            done = client.post(f"/paper/{follow}/zotero-note", data={"csrf_token": page_token(client)})
        assert done.status_code == 200 and "The note was written into Zotero" in done.text
        assert server.requests[0]["body"][0]["parentItem"] == "ITEMKEY1"
    finally:
        server.close()
