"""A loopback server answering as arXiv's API, OpenAlex, Unpaywall and Crossref do for one paper
each (in each API's documented shape), and serving its open-access PDF; every request is kept."""

from __future__ import annotations

import json
from urllib.parse import parse_qs, unquote, urlparse

from conftest import SAMPLE_PAPER
from loopback_http import LoopbackHTTP, QuietHandler

ARXIV_ID = "2004.07180"
DOI = "10.18653/v1/2020.acl-main.207"
CLOSED_DOI = "10.1000/closed.1"


def arxiv_feed(base: str) -> str:
    return f"""<?xml version="1.0" encoding="UTF-8"?>
<feed xmlns="http://www.w3.org/2005/Atom" xmlns:arxiv="http://arxiv.org/schemas/atom">
  <title>ArXiv Query: id_list={ARXIV_ID}</title>
  <entry>
    <id>http://arxiv.org/abs/{ARXIV_ID}v4</id>
    <published>2020-04-15T17:00:00Z</published>
    <title>SPECTER: Document-level Representation Learning using
      Citation-informed Transformers</title>
    <summary>Representation learning is a critical ingredient for natural language processing systems.</summary>
    <author><name>Arman Cohan</name></author>
    <author><name>Sergey Feldman</name></author>
    <arxiv:doi>{DOI}</arxiv:doi>
    <link href="http://arxiv.org/abs/{ARXIV_ID}v4" rel="alternate" type="text/html"/>
    <link title="pdf" href="{base}/pdf/{ARXIV_ID}v4" rel="related" type="application/pdf"/>
  </entry>
</feed>"""


class ImportServer(LoopbackHTTP):
    def __init__(self):
        self.requests: list[tuple[str, dict]] = []
        self.pdf = SAMPLE_PAPER.read_bytes()
        self.pdf_is_html = False
        server = self

        class Handler(QuietHandler):
            def do_GET(self):
                url = urlparse(self.path)
                path, query = unquote(url.path), parse_qs(url.query)
                server.requests.append((path, query))
                base = server.url
                if path == "/api/query":
                    if query.get("id_list") == [ARXIV_ID]:
                        return self._send(200, "application/atom+xml", arxiv_feed(base).encode())
                    return self._send(
                        200, "application/atom+xml", b'<feed xmlns="http://www.w3.org/2005/Atom"/>'
                    )
                if path.startswith("/pdf/"):
                    if server.pdf_is_html:
                        return self._send(200, "text/html", b"<html>a landing page</html>")
                    return self._send(200, "application/pdf", server.pdf)
                if path == f"/works/doi:{DOI}":
                    return self._json(
                        {
                            "id": "https://openalex.org/W3016970897",
                            "display_name": "SPECTER: Document-level Representation Learning using Citation-informed Transformers",
                            "publication_year": 2020,
                            "authorships": [{"author": {"display_name": "Arman Cohan"}}],
                            "abstract_inverted_index": {"Representation": [0], "learning": [1]},
                            "best_oa_location": {"pdf_url": None},
                            "open_access": {
                                "is_oa": True,
                                "oa_url": "https://aclanthology.org/2020.acl-main.207",
                            },
                        }
                    )
                if path == f"/v2/{DOI}":
                    return self._json(
                        {
                            "doi": DOI,
                            "title": "SPECTER: Document-level Representation Learning using Citation-informed Transformers",
                            "year": 2020,
                            "z_authors": [{"given": "Arman", "family": "Cohan"}],
                            "best_oa_location": {"url_for_pdf": f"{base}/pdf/specter.pdf"},
                        }
                    )
                if path == f"/works/{CLOSED_DOI}":
                    return self._json(
                        {
                            "message": {
                                "title": ["A Closed Paper About Wheat Yields"],
                                "author": [{"given": "Ann", "family": "Lee"}],
                                "issued": {"date-parts": [[2019, 5]]},
                                "abstract": "<jats:p>Heat lowers wheat yield by a third.</jats:p>",
                            }
                        }
                    )
                return self._send(404, "application/json", b'{"error": "not found"}')

            def _json(self, data):
                return self._send(200, "application/json", json.dumps(data).encode())

            def _send(self, status, kind, body):
                self.send_response(status)
                self.send_header("Content-Type", kind)
                self.send_header("Content-Length", str(len(body)))
                self.end_headers()
                self.wfile.write(body)

        super().__init__(Handler)

    def base_urls(self) -> dict[str, str]:
        return {name: self.url for name in ("arxiv", "openalex", "unpaywall", "crossref")}
