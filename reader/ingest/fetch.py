"""A paper named by DOI or arXiv id, fetched: its metadata and its open-access PDF, from the
services READER_IMPORT_SERVICES (or `reader import --services`) names; none by default, so nothing
leaves the machine unless asked.

- arxiv: GET {base}/api/query?id_list=ID -> an Atom feed; its entry's title, authors, published
  year, summary, DOI (arxiv:doi) and <link title="pdf" href=…>.
- openalex: GET {base}/works/doi:DOI -> display_name, publication_year, authorships,
  abstract_inverted_index, best_oa_location.pdf_url (else open_access.oa_url when it is a PDF).
- unpaywall: GET {base}/v2/DOI?email=ADDRESS -> title, year, z_authors, best_oa_location.url_for_pdf
  (Unpaywall requires an address: READER_OPENALEX_MAILTO).
- crossref: GET {base}/works/DOI -> message.title, author, issued, abstract (metadata only).

The PDF is downloaded from the address a service gives (at most the ingest's size limit, and it
must start with %PDF). Every failure is one line naming the service and what happened.
"""

from __future__ import annotations

import re
import xml.etree.ElementTree as ET
from dataclasses import dataclass, field
from urllib.parse import quote

from reader import http
from reader.errors import ReaderError
from reader.ingest.identifiers import Record
from reader.ingest.pages import find_doi
from reader.text.controls import clean_text

ATOM = "{http://www.w3.org/2005/Atom}"
ARXIV_NS = "{http://arxiv.org/schemas/atom}"
PDF_TIMEOUT_S = 60.0
BASE_URLS = {
    "arxiv": "https://export.arxiv.org",
    "openalex": "https://api.openalex.org",
    "unpaywall": "https://api.unpaywall.org",
    "crossref": "https://api.crossref.org",
}


class FetchError(ReaderError):
    """A service or a download failed; the message names which and why."""


def _text(value) -> str:
    return clean_text(" ".join(str(value or "").split()))


@dataclass
class Fetcher:
    """The services a fetch may use, in order, with their addresses (tests: a loopback server)."""

    services: list[str]
    mailto: str | None = None
    base_urls: dict[str, str] = field(default_factory=dict)
    timeout_s: float = http.TIMEOUT_S

    def _get(self, service: str, path: str, params: dict | None = None):
        url = self.base_urls.get(service, BASE_URLS[service]).rstrip("/") + path
        try:
            return http.get(url, params, timeout_s=self.timeout_s, accept=(404,))
        except http.HttpFailure as failure:
            raise FetchError(f"{service}: {failure} ({url})") from None

    def _json(self, service: str, path: str, params: dict | None = None) -> dict | None:
        response = self._get(service, path, params)
        if response.status_code == 404:
            return None
        try:
            return http.json_object(response)
        except http.HttpFailure as failure:
            raise FetchError(f"{service}: {failure}") from None

    # ---------------------------------------------------------------- the services

    def arxiv(self, record: Record) -> None:
        response = self._get("arxiv", "/api/query", {"id_list": record.arxiv, "max_results": 1})
        try:
            feed = ET.fromstring(response.content)
        except ET.ParseError as exc:
            raise FetchError(f"arxiv: the reply is not an Atom feed ({exc})") from None
        entry = feed.find(f"{ATOM}entry")
        if entry is None or not _text(entry.findtext(f"{ATOM}title")):
            raise FetchError(f"arxiv: no paper with the id {record.arxiv}")
        record.title = record.title or _text(entry.findtext(f"{ATOM}title"))
        record.authors = record.authors or [
            _text(a.findtext(f"{ATOM}name")) for a in entry.findall(f"{ATOM}author")
        ]
        published = _text(entry.findtext(f"{ATOM}published"))
        record.year = record.year or (int(published[:4]) if published[:4].isdigit() else None)
        record.abstract = record.abstract or _text(entry.findtext(f"{ATOM}summary"))
        record.doi = record.doi or find_doi([_text(entry.findtext(f"{ARXIV_NS}doi"))])
        for link in entry.findall(f"{ATOM}link"):
            if link.get("title") == "pdf" or link.get("type") == "application/pdf":
                record.pdf_url = record.pdf_url or link.get("href", "")

    def openalex(self, record: Record) -> None:
        params = {"mailto": self.mailto} if self.mailto else {}
        work = self._json("openalex", f"/works/doi:{quote(record.doi, safe='/')}", params)
        if work is None:
            raise FetchError(f"openalex: no work with the DOI {record.doi}")
        record.title = record.title or _text(work.get("display_name") or work.get("title"))
        record.year = record.year or (
            work.get("publication_year") if isinstance(work.get("publication_year"), int) else None
        )
        record.authors = record.authors or [
            _text((a.get("author") or {}).get("display_name"))
            for a in work.get("authorships") or []
            if isinstance(a, dict)
        ]
        if not record.abstract and isinstance(work.get("abstract_inverted_index"), dict):
            placed = sorted(
                (p, w) for w, ps in work["abstract_inverted_index"].items() for p in ps if isinstance(p, int)
            )
            record.abstract = _text(" ".join(w for _, w in placed))
        best = work.get("best_oa_location") or {}
        oa_url = (work.get("open_access") or {}).get("oa_url") or ""
        record.pdf_url = (
            record.pdf_url or best.get("pdf_url") or (oa_url if oa_url.lower().endswith(".pdf") else "")
        )

    def unpaywall(self, record: Record) -> None:
        if not self.mailto:
            raise FetchError("unpaywall: it requires an e-mail address; set READER_OPENALEX_MAILTO")
        found = self._json("unpaywall", f"/v2/{quote(record.doi, safe='/')}", {"email": self.mailto})
        if found is None:
            raise FetchError(f"unpaywall: no record of the DOI {record.doi}")
        record.title = record.title or _text(found.get("title"))
        record.year = record.year or (found.get("year") if isinstance(found.get("year"), int) else None)
        record.authors = record.authors or [
            _text(f"{a.get('given', '')} {a.get('family', '')}")
            for a in found.get("z_authors") or []
            if isinstance(a, dict)
        ]
        record.pdf_url = record.pdf_url or (found.get("best_oa_location") or {}).get("url_for_pdf") or ""

    def crossref(self, record: Record) -> None:
        body = self._json("crossref", f"/works/{quote(record.doi, safe='/')}")
        if body is None:
            raise FetchError(f"crossref: no work with the DOI {record.doi}")
        message = body.get("message") or {}
        record.title = record.title or _text((message.get("title") or [""])[0])
        record.authors = record.authors or [
            _text(f"{a.get('given', '')} {a.get('family', '')}")
            for a in message.get("author") or []
            if isinstance(a, dict)
        ]
        parts = ((message.get("issued") or {}).get("date-parts") or [[None]])[0]
        record.year = record.year or (parts[0] if parts and isinstance(parts[0], int) else None)
        record.abstract = record.abstract or _text(re.sub(r"<[^>]+>", " ", message.get("abstract") or ""))

    # ---------------------------------------------------------------- together

    def complete(self, record: Record) -> list[str]:
        """Fill the record's metadata and PDF address from the services that apply (arXiv for an
        arXiv id, the others for a DOI); returns one note per service that failed."""
        notes = []
        for service in self.services:
            applies = record.arxiv if service == "arxiv" else record.doi
            if not applies or (record.pdf_url and record.title):
                continue
            try:
                getattr(self, service)(record)
            except FetchError as exc:
                notes.append(str(exc))
        return notes

    def download(self, url: str, max_bytes: int) -> bytes:
        """The PDF at `url`; FetchError when it cannot be had or is not a PDF."""
        try:
            response = http.get(url, timeout_s=PDF_TIMEOUT_S, max_bytes=max_bytes)
        except http.HttpFailure as failure:
            raise FetchError(f"the PDF at {url}: {failure}") from None
        if not response.content.startswith(b"%PDF"):
            raise FetchError(f"the PDF at {url}: the reply is not a PDF (a landing page?)")
        return response.content
