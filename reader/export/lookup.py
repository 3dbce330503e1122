"""Optional check of a reference entry against Crossref, OpenAlex or Semantic Scholar (off unless
asked for: READER_REFERENCE_LOOKUP, or `reader export --lookup …`): does the work exist, and in
which year?

    lookup = ReferenceLookup("crossref")          # or ("openalex", mailto="me@example.org")
    lookup("Vaswani A, et al. Attention is all you need. NeurIPS 2017.")  -> "Crossref: found, 2017"

An entry with a DOI is fetched by its DOI (Crossref `GET /works/{doi}`, OpenAlex
`GET /works/https://doi.org/{doi}`, Semantic Scholar `GET /graph/v1/paper/DOI:{doi}`); otherwise
the entry's text is searched (Crossref `query.bibliographic`, OpenAlex `search`, Semantic Scholar
`/graph/v1/paper/search`) and the first hit counts as found only when most of its title's words
are in the entry. "not found" (`says_missing`) is what the note warns of. Every failure (timeout, 429, a server error, an unreadable
body) is a short phrase in the note, never an exception; a 429 with a short Retry-After is
waited for once. The entry's text is what leaves the
machine; answers are kept per entry for the run.
"""

from __future__ import annotations

import re
from urllib.parse import quote

import httpx

from reader import http
from reader.ingest.pages import find_doi
from reader.text.words import words

SERVICES = {
    "crossref": ("Crossref", "https://api.crossref.org"),
    "openalex": ("OpenAlex", "https://api.openalex.org"),
    "semantic-scholar": ("Semantic Scholar", "https://api.semanticscholar.org"),
}
NOT_FOUND = "not found"
# what the note says beside an entry the service does not know
MISSING_WORK = "no such work there; the reference may not exist or may be cited wrongly"
TITLE_MATCH = 0.8  # share of the hit's title words that must be in the entry
# the note's short words for a failed request; "unreachable" names the httpx exception
_FAILURE_PHRASES = {"timeout": "timeout", "rate-limited": "HTTP 429", "not-json": "unreadable reply"}


def title_words(text: str) -> list[str]:
    """The words of more than two characters (reader.text.words) that decide a title match."""
    return [w for w in words(text) if len(w) > 2]


def _title_matches(title: str, entry: str) -> bool:
    words = title_words(title)
    if not words:
        return False
    have = set(title_words(entry))
    return sum(w in have for w in words) / len(words) >= TITLE_MATCH


class ReferenceLookup:
    def __init__(
        self,
        service: str,
        *,
        base_url: str | None = None,
        mailto: str | None = None,
        api_key: str | None = None,
        timeout_s: float = 10.0,
        client: httpx.Client | None = None,
    ):
        if service not in SERVICES:
            from reader.errors import ReaderError

            raise ReaderError(
                f"unknown reference lookup {service!r}; choose crossref, openalex or semantic-scholar"
            )
        self.service = service
        self.label, default_url = SERVICES[service]
        self.base_url = (base_url or default_url).rstrip("/")
        self.mailto = mailto
        self.api_key = api_key
        self.timeout_s = timeout_s  # a deadline for each request as a whole (reader.http.bounded)
        self.client = client or http.bounded_client(
            timeout=timeout_s,
            headers={"User-Agent": "reader (reference check)" + (f"; mailto:{mailto}" if mailto else "")},
        )
        self.cache: dict[str, str] = {}

    def __call__(self, entry: str) -> str:
        if entry not in self.cache:
            self.cache[entry] = f"{self.label}: {self._check(entry)}"
        return self.cache[entry]

    def _get(self, path: str, params: dict | None = None):
        params = dict(params or {})
        if self.mailto and self.service == "openalex":
            params["mailto"] = self.mailto
        headers = {"x-api-key": self.api_key} if self.api_key and self.service == "semantic-scholar" else None
        response = http.get(
            self.base_url + path,
            params,
            headers=headers,
            client=self.client,
            timeout_s=self.timeout_s,
            accept=(404,),
        )
        return None if response.status_code == 404 else http.json_object(response)

    def _check(self, entry: str) -> str:
        try:
            found = self._find(entry)
        except http.HttpFailure as failure:
            return f"lookup failed ({_FAILURE_PHRASES.get(failure.kind) or failure.exception or failure})"
        except (KeyError, IndexError, TypeError, ValueError, AttributeError):
            return "lookup failed (unexpected reply)"
        if found is None:
            return NOT_FOUND
        if found is _NoYear:
            return "found"
        year = found
        stated = re.findall(r"\b(?:19|20)\d\d\b", entry)
        if stated and str(year) not in stated:
            return f"found, {year} (the entry says {stated[-1]})"
        return f"found, {year}"

    def _find(self, entry: str):
        """The work's year (`_NoYear` when the record has none), or None when it is not found."""
        doi = find_doi([entry])
        if self.service == "crossref":
            if doi:
                body = self._get(f"/works/{quote(doi, safe='/')}")
                return None if body is None else _crossref_year(body["message"])
            body = self._get("/works", {"query.bibliographic": entry[:300], "rows": 1})
            items = (body or {}).get("message", {}).get("items", [])
            if not items or not _title_matches((items[0].get("title") or [""])[0], entry):
                return None
            return _crossref_year(items[0])
        if self.service == "semantic-scholar":
            fields = {"fields": "title,year"}
            if doi:
                body = self._get(f"/graph/v1/paper/DOI:{quote(doi, safe='/')}", fields)
                return None if body is None else body.get("year") or _NoYear
            body = self._get("/graph/v1/paper/search", {"query": entry[:300], "limit": 1, **fields})
            data = (body or {}).get("data") or []
            if not data or not _title_matches(data[0].get("title") or "", entry):
                return None
            return data[0].get("year") or _NoYear
        if doi:
            body = self._get(f"/works/https://doi.org/{quote(doi, safe='/')}")
            return None if body is None else body.get("publication_year") or _NoYear
        body = self._get("/works", {"search": entry[:300], "per-page": 1})
        results = (body or {}).get("results", [])
        if not results or not _title_matches(
            results[0].get("display_name") or results[0].get("title") or "", entry
        ):
            return None
        return results[0].get("publication_year") or _NoYear


_NoYear = object()  # found, without a year


def _crossref_year(message: dict):
    for key in ("issued", "published", "published-print", "published-online"):
        parts = (message.get(key) or {}).get("date-parts") or [[None]]
        if parts and parts[0] and parts[0][0]:
            return int(parts[0][0])
    return _NoYear


def says_missing(check: str) -> bool:
    """Did this lookup's word on an entry ("OpenAlex: not found") say the work does not exist?"""
    return check.endswith(f": {NOT_FOUND}")
