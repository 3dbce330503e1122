"""The extraction table's web page spends model calls only on a checked POST: a GET of /table or
/table.csv (which any site can make the browser send, with an image tag) serves the table from
the verifier's stored answers, or says it is not built yet; it asks no model and writes nothing."""

from __future__ import annotations

import re

import pytest
from sqlalchemy import func, select
from test_extraction_table import library, parse_csv  # noqa: F401 - the fixture

from reader.store.tables import LLMCall


@pytest.fixture
def client(library):  # noqa: F811
    from fastapi.testclient import TestClient

    from reader.web.app import create_app

    with TestClient(create_app(library)) as client:
        yield client


def logged_calls(app) -> int:
    with app.services.db() as session:
        return session.scalar(select(func.count(LLMCall.id)))


def test_a_get_of_the_table_or_its_csv_asks_no_model(library, client):  # noqa: F811
    """`GET /table?paper=…` ran the LLM (10 calls for 10 papers) with no origin check."""
    asked, logged = library.verifier_llm.calls, logged_calls(library)
    for headers in ({}, {"referer": "https://evil.example/cat.html", "origin": "https://evil.example"}):
        shown = client.get("/table", params={"paper": library.paper_id}, headers=headers)
        assert shown.status_code == 200
        assert 'id="table-unbuilt"' in shown.text and "not built yet" in shown.text
        assert 'id="extraction"' not in shown.text and 'id="download-csv"' not in shown.text
        assert re.search(rf'value="{library.paper_id}" checked', shown.text)  # ready to build
        csv = client.get("/table.csv", params={"paper": library.paper_id}, headers=headers)
        assert csv.status_code == 409 and "not built yet" in csv.text and "Build the table" in csv.text
    assert library.verifier_llm.calls == asked and logged_calls(library) == logged


def test_the_table_is_built_by_a_checked_post_then_served_as_stored(library, client):  # noqa: F811
    asked = library.verifier_llm.calls
    page = client.get("/table").text
    token = re.search(r'name="csrf_token" value="([0-9a-f]+)"', page).group(1)
    assert '<form class="choose" method="post" action="/table">' in page

    foreign = client.post(
        "/table",
        data={"paper": library.paper_id, "csrf_token": token},
        headers={"origin": "https://evil.example"},
    )
    assert foreign.status_code == 403
    no_token = client.post("/table", data={"paper": library.paper_id})
    assert no_token.status_code == 403
    assert library.verifier_llm.calls == asked

    built = client.post(
        "/table", data={"paper": library.paper_id, "csrf_token": token}, follow_redirects=False
    )
    assert built.status_code == 303 and built.headers["location"] == f"/table?paper={library.paper_id}"
    spent = library.verifier_llm.calls
    assert spent > asked

    shown = client.get(built.headers["location"])  # every answer as stored, or "not built"
    assert shown.status_code == 200 and 'id="table-unbuilt"' not in shown.text
    assert 'id="extraction"' in shown.text and "WNUT-17: 5,690 annotated tweets" in shown.text
    download = client.get("/table.csv", params={"paper": library.paper_id})
    assert download.status_code == 200
    [row] = parse_csv(download.content.decode("utf-8-sig"))
    assert row["paper_id"] == library.paper_id and row["datasets"].endswith("WNUT-17: 5,690 annotated tweets")
    assert library.verifier_llm.calls == spent  # served from what the POST stored
