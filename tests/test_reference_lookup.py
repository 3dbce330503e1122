"""The optional reference check (reader/export/lookup.py) against a loopback server answering
in Crossref's and OpenAlex's documented response shapes, and their failures."""

from __future__ import annotations

import json
import re
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

# Semantic Scholar's Graph API: GET /graph/v1/paper/DOI:{doi}?fields=title,year and
# GET /graph/v1/paper/search?query&limit&fields=title,year
S2_WORK = {
    "paperId": "204e3073870fae3d05bcbc2f6a8e263d9b72e776",
    "title": "Attention is All you Need",
    "year": 2017,
}
S2_SEARCH = {
    "total": 1,
    "offset": 0,
    "data": [
        {
            "paperId": "2e5f2b57f4c476dd69dc22ccdf547e48f40a994c",
            "title": "Long Short-Term Memory",
            "year": 1997,
        }
    ],
}
OPENALEX_WHEAT = {
    "meta": {"count": 1, "page": 1, "per_page": 1},
    "results": [
        {
            "id": "https://openalex.org/W2",
            "display_name": "Heat stress and wheat grain yield",
            "publication_year": 2020,
        }
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
            state.setdefault("api_keys", []).append(self.headers.get("x-api-key"))
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
            if path == f"/semantic-scholar/graph/v1/paper/DOI:{DOI}":
                return self._send(200, S2_WORK)
            if path == "/semantic-scholar/graph/v1/paper/search" and "query" in query:
                if "never written" in query["query"][0]:
                    return self._send(200, {"total": 0, "offset": 0, "data": []})
                return self._send(200, S2_SEARCH)
            if path == "/openalex/works" and "search" in query and "wheat" in query["search"][0].lower():
                return self._send(200, OPENALEX_WHEAT)
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
    with pytest.raises(
        ReaderError, match="unknown reference lookup 'scholar'; choose crossref, openalex or semantic-scholar"
    ):
        ReferenceLookup("scholar")


def test_note_shows_the_lookup_beside_each_cited_entry(db, tmp_path, server):
    from test_citations import _paper_with_citing_review

    from reader.export import export_notes

    pid = _paper_with_citing_review(db)
    result = export_notes(db, [pid], tmp_path / "notes", lookup=lookup(server, "openalex"))
    text = result.notes[0].read_text(encoding="utf-8")
    assert "Jones K. Heat stress and wheat grain yield. Plant Science 2020. (OpenAlex: found, 2020)" in text


def test_semantic_scholar_by_doi_by_text_with_key_and_not_found(server):
    check = lookup(server, "semantic-scholar", api_key="k-123")
    assert check(ENTRY_DOI) == "Semantic Scholar: found, 2017"
    assert check(ENTRY_TEXT) == "Semantic Scholar: found, 1997"
    assert check(ENTRY_UNKNOWN) == "Semantic Scholar: not found"
    assert check("Smith J. Missing DOI. doi:10.9999/none") == "Semantic Scholar: not found"  # 404
    paths = [p for p, _ in server["requests"]]
    assert paths[:2] == [
        f"/semantic-scholar/graph/v1/paper/DOI:{DOI}",
        "/semantic-scholar/graph/v1/paper/search",
    ]
    assert set(server["api_keys"]) == {"k-123"}
    assert server["requests"][1][1]["fields"] == ["title,year"] and server["requests"][1][1]["limit"] == ["1"]


def _paper_citing_two_entries(db) -> str:
    """A reviewed paper whose critique cites [1] (a work the service does not know) and [2] (one it
    knows), from the reference list of tests/test_citations.py."""
    from test_citations import BODY, REFERENCES
    from test_export import add_analysis, add_paper

    from reader.store.db import transaction
    from reader.store.tables import Chunk, Reference

    pid = "ef" * 32
    add_paper(db, pid, "Heat Stress in Wheat")
    with transaction(db) as s:
        s.add(
            Chunk(
                paper_id=pid,
                ordinal=0,
                section="1 Introduction",
                page_start=1,
                page_end=1,
                text=BODY[0],
                n_tokens=80,
            )
        )
        for i, (marker, text) in enumerate(REFERENCES):
            s.add(Reference(paper_id=pid, ordinal=i, marker=marker, page=9, text=text))
    add_analysis(
        db,
        pid,
        "critique",
        [
            ("Heat stress after anthesis lowers wheat grain yield [2].", "supported"),
            ("Image recognition benefits from deep convolutional networks [1].", "supported"),
            ("Earlier work on yield is cited as [40].", "unsupported"),
        ],
    )
    return pid


def test_the_setting_turns_the_lookup_on_and_a_reference_that_does_not_exist_is_warned_of_in_the_note(
    app, tmp_path, server, monkeypatch
):
    from click.testing import CliRunner

    from reader.cli import cli
    from reader.export import lookup as lookup_module

    _paper_citing_two_entries(app.services.db)
    monkeypatch.setitem(lookup_module.SERVICES, "openalex", ("OpenAlex", f"{server['url']}/openalex"))

    def export(*extra) -> str:
        out = tmp_path / f"notes{len(server['requests'])}"
        result = CliRunner().invoke(
            cli, ["export", "--all", "--out", str(out), *extra], catch_exceptions=False
        )
        assert result.exit_code == 0, result.output
        [note] = [p for p in out.glob("*.md") if p.name != "index.md"]
        return note.read_text(encoding="utf-8").split("**References cited above**", 1)[1]

    # off by default: nothing leaves the machine, nothing is said about the entries
    cited = export()
    assert server["requests"] == [] and "⚠" not in cited.split("\\[40\\]")[0] and "OpenAlex" not in cited

    monkeypatch.setenv("READER_REFERENCE_LOOKUP", "openalex")
    cited = export()
    lines = {line.split("**")[1]: line for line in cited.splitlines() if line.startswith("- **")}
    assert "(OpenAlex: found, 2020)" in lines["\\[2\\]"] and "⚠" not in lines["\\[2\\]"]
    # the line ends with the warning, then the block id a citation marker links to
    assert re.sub(r" \^cite-[\w-]+$", "", lines["\\[1\\]"]).endswith(
        "— ⚠ OpenAlex: not found: no such work there; the reference may not exist or may be cited wrongly"
    ), lines["\\[1\\]"]
    assert "⚠ 40: no entry in the paper's reference list" in lines["\\[40\\]"]
    searched = [q["search"][0] for p, q in server["requests"] if p == "/openalex/works"]
    assert len(searched) == 2 and any("Smith J." in q for q in searched)

    # --lookup off for one export overrides the setting
    before = len(server["requests"])
    cited = export("--lookup", "off")
    assert len(server["requests"]) == before and "OpenAlex" not in cited


def test_an_unknown_lookup_setting_is_one_line():
    from reader.config import load_settings
    from reader.errors import ConfigError

    with pytest.raises(
        ConfigError,
        match="READER_REFERENCE_LOOKUP='scholar': use off, crossref, openalex or semantic-scholar",
    ):
        load_settings({"READER_REFERENCE_LOOKUP": "scholar"})
