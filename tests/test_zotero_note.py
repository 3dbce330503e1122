"""The audited note back into Zotero: a child note of the paper's item through Zotero's web API
(a loopback server in the API's documented shape): created, updated, re-created when edited or
deleted in Zotero, and refusals in one line."""

from __future__ import annotations

import json

import pytest
from loopback_http import LoopbackHTTP, QuietHandler
from test_export import add_analysis, add_paper

from reader.errors import ConfigError
from reader.store.db import transaction
from reader.store.tables import Paper

PID = "ab" * 32


class ZoteroServer(LoopbackHTTP):
    """POST /users/42/items and PUT /users/42/items/KEY as the Zotero web API answers them."""

    def __init__(self):
        self.requests: list[dict] = []
        self.put_status = 204
        self.post_status = 200
        server = self

        class Handler(QuietHandler):
            def _body(self):
                return json.loads(self.rfile.read(int(self.headers["Content-Length"])))

            def do_POST(self):
                body = self._body()
                server.requests.append(
                    {"method": "POST", "path": self.path, "headers": dict(self.headers), "body": body}
                )
                if server.post_status != 200:
                    return self._send(server.post_status, b"Forbidden")
                key = f"NOTE{len(server.requests):04d}"
                reply = {
                    "successful": {"0": {"key": key, "version": 7, "data": body[0]}},
                    "success": {"0": key},
                    "unchanged": {},
                    "failed": {},
                }
                return self._send(200, json.dumps(reply).encode(), {"Last-Modified-Version": "7"})

            def do_PUT(self):
                body = self._body()
                server.requests.append(
                    {"method": "PUT", "path": self.path, "headers": dict(self.headers), "body": body}
                )
                return self._send(server.put_status, b"", {"Last-Modified-Version": "8"})

            def _send(self, status, body, headers=None):
                self.send_response(status)
                for k, v in (headers or {}).items():
                    self.send_header(k, v)
                self.send_header("Content-Length", str(len(body)))
                self.end_headers()
                self.wfile.write(body)

        super().__init__(Handler)


@pytest.fixture
def server():
    with ZoteroServer() as server:
        yield server


@pytest.fixture
def reviewed(reader_env, monkeypatch):
    from reader.facade import Reader

    monkeypatch.setenv("READER_ZOTERO_LIBRARY", "users/42")
    monkeypatch.setenv("READER_ZOTERO_API_KEY", "secret-key")
    app = Reader()
    add_paper(app.services.db, PID, "Heat <Stress> in Wheat")
    add_analysis(
        app.services.db,
        PID,
        "synthesis",
        [("Heat lowers wheat yield by a third.", "supported"), ("The trial ran on the Moon.", "unsupported")],
    )
    with transaction(app.services.db) as session:
        session.get(Paper, PID).zotero_key = "ITEMKEY1"
    app.paper(PID).highlight(
        2, [[0.1, 0.1, 0.5, 0.12]], "grain yield fell by a third", "check the control plot"
    )
    return app


def test_the_note_is_written_as_a_child_note_then_updated(reviewed, server):
    report = reviewed.library.zotero_note(base_url=server.url)
    [row] = report.rows
    assert (row.status, row.note_key) == ("created", "NOTE0001")
    sent = server.requests[0]
    assert sent["path"] == "/users/42/items"
    headers = {k.lower(): v for k, v in sent["headers"].items()}
    assert headers["zotero-api-key"] == "secret-key" and headers["zotero-api-version"] == "3"
    assert len(headers["zotero-write-token"]) == 32
    [item] = sent["body"]
    assert (
        item["itemType"] == "note"
        and item["parentItem"] == "ITEMKEY1"
        and item["tags"] == [{"tag": "reader"}]
    )
    assert "<h1>Heat &lt;Stress&gt; in Wheat</h1>" in item["note"]
    assert "<strong>[待验证]</strong> The trial ran on the Moon." in item["note"]
    assert "p. 2: “grain yield fell by a third” — check the control plot" in item["note"]

    [again] = reviewed.library.zotero_note([PID], base_url=server.url).rows
    assert (again.status, again.note_key) == ("updated", "NOTE0001")
    put = server.requests[1]
    assert put["method"] == "PUT" and put["path"] == "/users/42/items/NOTE0001"
    assert {k.lower(): v for k, v in put["headers"].items()}["if-unmodified-since-version"] == "7"

    server.put_status = 412  # edited in Zotero since: left alone, a new note beside it
    [edited] = reviewed.library.zotero_note([PID], base_url=server.url).rows
    assert edited.status == "created" and "edited in Zotero since" in edited.detail
    assert edited.note_key == "NOTE0004"


def test_refusals_and_missing_settings_are_one_line(reviewed, server, monkeypatch):
    server.post_status = 403
    [row] = reviewed.library.zotero_note(base_url=server.url).rows
    assert row.status == "error" and "a key with write access" in row.detail
    monkeypatch.delenv("READER_ZOTERO_API_KEY")
    from reader.facade import Reader

    with pytest.raises(ConfigError, match="READER_ZOTERO_API_KEY"):
        Reader().library.zotero_note(base_url=server.url)


def test_a_paper_not_from_zotero_is_skipped(reviewed, server):
    other = "cd" * 32
    add_paper(reviewed.services.db, other, "Not From Zotero")
    [row] = reviewed.library.zotero_note([other], base_url=server.url).rows
    assert row.status == "skipped" and "not from Zotero" in row.detail and server.requests == []
