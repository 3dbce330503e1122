"""The optional reference check (reader/export/lookup.py) against a loopback server answering
in Crossref's and OpenAlex's documented response shapes, and their failures."""

from __future__ import annotations

import json
import threading
import time
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from urllib.parse import parse_qs, unquote, urlparse

import httpx
import pytest

from reader.export.lookup import ReferenceLookup

DOI = "10.48550/arXiv.1706.03762"
CROSSREF_WORK = {
    "status": "ok",
    "message-type": "work",
    "message-version": "1.0.0",
    "message": {
        "DOI": DOI,
        "type": "posted-content",
        "title": ["Attention Is All You Need"],
        "issued": {"date-parts": [[2017, 6, 12]]},
        "author": [{"given": "Ashish", "family": "Vaswani"}],
    },
}
CROSSREF_SEARCH = {
    "status": "ok",
    "message-type": "work-list",
    "message": {
        "total-results": 1,
        "items-per-page": 1,
        "items": [
            {
                "DOI": "10.1162/neco.1997.9.8.1735",
                "title": ["Long Short-Term Memory"],
                "issued": {"date-parts": [[1997, 11, 1]]},
                "score": 88.1,
            }
        ],
    },
}
OPENALEX_WORK = {
    "id": "https://openalex.org/W2963403868",
    "doi": f"https://doi.org/{DOI.lower()}",
    "display_name": "Attention Is All You Need",
    "title": "Attention Is All You Need",
    "publication_year": 2017,
}
OPENALEX_SEARCH = {
    "meta": {"count": 1, "page": 1, "per_page": 1},
    "results": [
        {"id": "https://openalex.org/W1", "display_name": "Long Short-Term Memory", "publication_year": 1997}
    ],
}

ENTRY_DOI = f"Vaswani A, et al. Attention is all you need. 2017. doi:{DOI}"
ENTRY_TEXT = "Hochreiter S, Schmidhuber J. Long short-term memory. Neural Computation 9(8), 1997."
ENTRY_WRONG_YEAR = "Hochreiter S, Schmidhuber J. Long short-term memory. Neural Computation, 1995."
ENTRY_UNKNOWN = "Nobody N. A paper that was never written. Imaginary Journal, 2031."


@pytest.fixture
def server():
    state = {"mode": "ok", "requests": []}

    class Handler(BaseHTTPRequestHandler):
        def log_message(self, *args):
            pass

        def _send(self, code, body, kind="application/json"):
            data = body.encode() if isinstance(body, str) else json.dumps(body).encode()
            self.send_response(code)
            self.send_header("Content-Type", kind)
            self.send_header("Content-Length", str(len(data)))
            self.end_headers()
            self.wfile.write(data)

        def do_GET(self):
            url = urlparse(self.path)
            path, query = unquote(url.path), parse_qs(url.query)
            state["requests"].append((path, query))
            mode = state["mode"]
            if mode == "slow":
                time.sleep(1.5)
            if mode == "503":
                return self._send(503, "Service Unavailable", "text/plain")
            if mode == "429":
                return self._send(429, {"message": "Too Many Requests"})
            if mode == "429-once":  # a short Retry-After, then the normal reply
                state["mode"] = "ok"
                data = b'{"message": "Too Many Requests"}'
                self.send_response(429)
                self.send_header("Retry-After", "0")
                self.send_header("Content-Length", str(len(data)))
                self.end_headers()
                self.wfile.write(data)
                return
            if mode == "malformed":
                return self._send(200, "{not json", "application/json")
            if path == f"/crossref/works/{DOI}":
                return self._send(200, CROSSREF_WORK)
            if path == "/crossref/works" and "query.bibliographic" in query:
                text = query["query.bibliographic"][0]
                if "never written" in text:
                    return self._send(
                        200,
                        {
                            **CROSSREF_SEARCH,
                            "message": {
                                **CROSSREF_SEARCH["message"],
                                "items": [
                                    {"title": ["Something Else Entirely"], "issued": {"date-parts": [[2001]]}}
                                ],
                            },
                        },
                    )
                return self._send(200, CROSSREF_SEARCH)
            if path == f"/openalex/works/https://doi.org/{DOI}":
                return self._send(200, OPENALEX_WORK)
            if path == "/openalex/works" and "search" in query:
                if "never written" in query["search"][0]:
                    return self._send(200, {"meta": {"count": 0}, "results": []})
                return self._send(200, OPENALEX_SEARCH)
            return self._send(404, "Resource not found.", "text/plain")

    httpd = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
    thread = threading.Thread(target=httpd.serve_forever, daemon=True)
    thread.start()
    state["url"] = f"http://127.0.0.1:{httpd.server_address[1]}"
    yield state
    httpd.shutdown()
    httpd.server_close()


def lookup(server, service, **kw):
    return ReferenceLookup(service, base_url=f"{server['url']}/{service}", **kw)


def test_crossref_by_doi_by_text_and_not_found(server):
    check = lookup(server, "crossref")
    assert check(ENTRY_DOI) == "Crossref: found, 2017"
    assert check(ENTRY_TEXT) == "Crossref: found, 1997"
    assert check(ENTRY_WRONG_YEAR) == "Crossref: found, 1997 (the entry says 1995)"
    assert check(ENTRY_UNKNOWN) == "Crossref: not found"  # a hit whose title is another work's
    assert check("Smith J. Missing DOI. doi:10.9999/none") == "Crossref: not found"  # 404
    paths = [p for p, _ in server["requests"]]
    assert paths[0] == f"/crossref/works/{DOI}" and paths[1] == "/crossref/works"
    assert server["requests"][1][1]["rows"] == ["1"]
    n = len(server["requests"])
    check(ENTRY_TEXT)
    assert len(server["requests"]) == n  # one request per entry per run


def test_openalex_by_doi_and_by_text_with_mailto(server):
    check = lookup(server, "openalex", mailto="me@example.org")
    assert check(ENTRY_DOI) == "OpenAlex: found, 2017"
    assert check(ENTRY_TEXT) == "OpenAlex: found, 1997"
    assert check(ENTRY_UNKNOWN) == "OpenAlex: not found"
    assert all(q.get("mailto") == ["me@example.org"] for _, q in server["requests"])


@pytest.mark.parametrize(
    "mode, phrase",
    [
        ("503", "lookup failed (HTTP 503)"),
        ("429", "lookup failed (HTTP 429)"),
        ("malformed", "lookup failed (unreadable reply)"),
        ("slow", "lookup failed (timeout)"),
    ],
)
def test_failures_are_one_phrase_never_an_exception(server, mode, phrase):
    server["mode"] = mode
    check = ReferenceLookup(
        "crossref", base_url=f"{server['url']}/crossref", client=httpx.Client(timeout=0.5)
    )
    assert check(ENTRY_TEXT) == f"Crossref: {phrase}"


def test_a_short_retry_after_is_waited_for_once(server):
    server["mode"] = "429-once"
    check = lookup(server, "crossref")
    assert check(ENTRY_TEXT) == "Crossref: found, 1997"
    assert len(server["requests"]) == 2


def test_unreachable_service_and_unknown_name():
    from reader.errors import ReaderError

    check = ReferenceLookup("openalex", base_url="http://127.0.0.1:9", client=httpx.Client(timeout=0.5))
    assert check(ENTRY_TEXT) == "OpenAlex: lookup failed (ConnectError)"
    with pytest.raises(ReaderError, match="unknown reference lookup 'scholar'; choose crossref or openalex"):
        ReferenceLookup("scholar")


def test_note_shows_the_lookup_beside_each_cited_entry(db, tmp_path, server):
    from test_citations import _paper_with_citing_review

    from reader.export import export_notes

    pid = _paper_with_citing_review(db)
    result = export_notes(db, [pid], tmp_path / "notes", lookup=lookup(server, "openalex"))
    text = result.notes[0].read_text(encoding="utf-8")
    assert "Jones K. Heat stress and wheat grain yield. Plant Science 2020. (OpenAlex: not found)" in text
