"""A loopback server answering as Semantic Scholar, arXiv and OpenAlex do, in each API's
documented response shape, with switchable failures (429, 500, a malformed body, a slow reply,
a reply sent a byte at a time, a reply of `huge_bytes`)."""

from __future__ import annotations

import json
import time
from urllib.parse import parse_qs, urlparse

from loopback_http import LoopbackHTTP, QuietHandler

S2_BODY = {
    "total": 2,
    "offset": 0,
    "next": 2,
    "data": [
        {
            "paperId": "649def34f8be52c8b66281af98ae884c09aef38b",
            "title": "Attention Is All You Need",
            "abstract": "The dominant sequence transduction models are based on recurrent networks.",
            "year": 2017,
            "url": "https://www.semanticscholar.org/paper/649def34",
        },
        {
            "paperId": "0123",
            "title": "A paper without an abstract",
            "abstract": None,
            "year": 2020,
            "url": None,
        },
    ],
}

ARXIV_BODY = """<?xml version="1.0" encoding="UTF-8"?>
<feed xmlns="http://www.w3.org/2005/Atom" xmlns:opensearch="http://a9.com/-/spec/opensearch/1.1/">
  <title type="html">ArXiv Query: search_query=all:transformer</title>
  <id>http://arxiv.org/api/abc</id>
  <opensearch:totalResults>1</opensearch:totalResults>
  <entry>
    <id>http://arxiv.org/abs/1706.03762v7</id>
    <published>2017-06-12T17:57:34Z</published>
    <title>Attention Is All
      You Need</title>
    <summary>  We propose a new simple network architecture, the Transformer,
      based solely on attention mechanisms.</summary>
    <author><name>Ashish Vaswani</name></author>
  </entry>
</feed>"""

OPENALEX_BODY = {
    "meta": {"count": 1, "page": 1, "per_page": 3},
    "results": [
        {
            "id": "https://openalex.org/W2963403868",
            "doi": "https://doi.org/10.48550/arxiv.1706.03762",
            "display_name": "Attention Is All You Need",
            "publication_year": 2017,
            "abstract_inverted_index": {
                "The": [0],
                "Transformer": [1],
                "uses": [2],
                "attention": [3],
                "only.": [4],
            },
        },
    ],
}


class ScholarlyServer(LoopbackHTTP):
    """`mode` per service: "ok", "429" (Retry-After `retry_after`, then ok once `throttle` runs
    out), "500", "malformed", "slow" (sleeps `delay_s` before answering), "trickle" (sends its
    reply a byte every `trickle_s`, headers included, until the client leaves or `trickle_for_s`
    has passed), "huge" (a well-formed reply of about `huge_bytes`: the normal one, padded)."""

    def __init__(self):
        self.mode = {"s2": "ok", "arxiv": "ok", "openalex": "ok"}
        self.retry_after = "1"
        self.throttle = 1  # 429 replies before a normal one, in mode "429"
        self.delay_s = 1.0
        self.trickle_s = 0.02
        self.trickle_for_s = 20.0
        self.huge_bytes = 40 * 2**20
        self.requests: list[dict] = []
        server = self

        class Handler(QuietHandler):
            def do_GET(self):
                url = urlparse(self.path)
                service = {"/graph/v1/paper/search": "s2", "/api/query": "arxiv", "/works": "openalex"}.get(
                    url.path
                )
                server.requests.append(
                    {"service": service, "query": parse_qs(url.query), "headers": dict(self.headers)}
                )
                if service is None:
                    return self._send(404, "text/plain", b"not found")
                mode = server.mode[service]
                if mode == "429" and server.throttle > 0:
                    server.throttle -= 1
                    self.send_response(429)
                    self.send_header("Retry-After", server.retry_after)
                    self.send_header("Content-Length", "0")
                    self.end_headers()
                    return None
                if mode == "500":
                    return self._send(500, "text/plain", b"internal error")
                if mode == "slow":
                    time.sleep(server.delay_s)
                if mode == "trickle":
                    return self._trickle(service)
                if mode == "malformed":
                    body = b"<html>maintenance</html>" if service != "arxiv" else b'{"not": "atom"}'
                    return self._send(200, "application/json", body)
                if service == "arxiv":
                    return self._send(200, "application/atom+xml", ARXIV_BODY.encode())
                body = json.dumps(S2_BODY if service == "s2" else OPENALEX_BODY).encode()
                if mode == "huge":  # JSON allows any amount of whitespace before the closing brace
                    body = body[:-1] + b" " * server.huge_bytes + b"}"
                return self._send(200, "application/json", body)

            def _trickle(self, service):
                body = ARXIV_BODY.encode() if service == "arxiv" else json.dumps(S2_BODY).encode()
                reply = (
                    b"HTTP/1.1 200 OK\r\nContent-Type: application/json\r\n"
                    + f"Content-Length: {len(body)}\r\n\r\n".encode()
                    + body
                )
                until = time.monotonic() + server.trickle_for_s
                for n in range(len(reply)):
                    if time.monotonic() > until:
                        return
                    self.wfile.write(reply[n : n + 1])
                    self.wfile.flush()
                    time.sleep(server.trickle_s)

            def _send(self, status, kind, body):
                self.send_response(status)
                self.send_header("Content-Type", kind)
                self.send_header("Content-Length", str(len(body)))
                self.end_headers()
                self.wfile.write(body)

        super().__init__(Handler)
