"""Scholarly search beyond the library: Semantic Scholar, arXiv and OpenAlex.

Each adapter turns a question into at most `limit` ExternalHits (title, abstract, year,
link) from one public API, in the response shape that API documents:

- Semantic Scholar: GET {base}/graph/v1/paper/search?query&limit&fields=title,abstract,year,url
  -> {"total", "offset", "data": [{"paperId", "title", "abstract", "year", "url"}]};
  an API key (header x-api-key) is optional.
- arXiv: GET {base}/api/query?search_query=all:...&start=0&max_results -> an Atom feed whose
  <entry> elements hold <id> (the abstract page), <title>, <summary> and <published>.
- OpenAlex: GET {base}/works?search&per_page -> {"meta", "results": [{"id", "doi",
  "display_name", "publication_year", "abstract_inverted_index": {word: [positions]}}]}.

Nothing here runs unless the user enables it (READER_EXTERNAL_SEARCH or `reader ask
--external`). Every failure — no reply within the timeout, 429 (waited for once when its
Retry-After is short), another HTTP error, a body that is not the documented shape, a host that
cannot be reached — raises ExternalSearchError with one line saying which service and what
happened; the question pipeline turns it into a note in the answer.
"""

from __future__ import annotations

import time
import xml.etree.ElementTree as ET
from collections.abc import Callable
from dataclasses import dataclass, field

import httpx

from reader import http
from reader.crag.external import ExternalHit
from reader.errors import ReaderError
from reader.http import TIMEOUT_S

ABSTRACT_CHARS = 1500
ATOM = "{http://www.w3.org/2005/Atom}"


class ExternalSearchError(ReaderError):
    """A scholarly search failed; the message names the service and the cause."""


@dataclass
class _Service:
    name: str
    base_url: str
    timeout_s: float = TIMEOUT_S
    sleep: Callable[[float], None] = field(default=time.sleep, repr=False)

    def _get(self, path: str, params: dict, headers: dict | None = None) -> httpx.Response:
        url = self.base_url.rstrip("/") + path
        try:
            return http.get(url, params, headers=headers, timeout_s=self.timeout_s, sleep=self.sleep)
        except http.HttpFailure as failure:
            raise ExternalSearchError(self._says(failure, url)) from None

    def _json(self, response: httpx.Response) -> dict:
        try:
            return http.json_object(response)
        except http.HttpFailure as failure:
            raise ExternalSearchError(f"{self.name}: {failure}") from None

    def _says(self, failure: http.HttpFailure, url: str) -> str:
        if failure.kind == "unreachable":
            return f"{self.name}: cannot reach {self.base_url} ({failure})"
        if failure.kind == "status":
            return f"{self.name}: {failure} from {url}"
        return f"{self.name}: {failure}"


def _clean(text) -> str:
    return " ".join(str(text or "").split())


def _hit(source: str, title, abstract, year, url) -> ExternalHit | None:
    title, abstract = _clean(title), _clean(abstract)[:ABSTRACT_CHARS]
    if not title:
        return None
    year = year if isinstance(year, int) else None
    text = f"{title}{f' ({year})' if year else ''}. {abstract}" if abstract else ""
    return ExternalHit(source=source, title=title, url=_clean(url), text=text, year=year)


@dataclass
class SemanticScholar(_Service):
    name: str = "semantic-scholar"
    base_url: str = "https://api.semanticscholar.org"
    api_key: str | None = None

    def search(self, query: str, limit: int = 3) -> list[ExternalHit]:
        headers = {"x-api-key": self.api_key} if self.api_key else {}
        data = self._json(
            self._get(
                "/graph/v1/paper/search",
                {"query": query, "limit": limit, "fields": "title,abstract,year,url"},
                headers,
            )
        )
        papers = data.get("data", [])
        if not isinstance(papers, list) or not all(isinstance(p, dict) for p in papers):
            raise ExternalSearchError(f"{self.name}: the reply has no list of papers under 'data'")
        hits = [
            _hit(
                self.name,
                p.get("title"),
                p.get("abstract"),
                p.get("year"),
                p.get("url")
                or (f"https://www.semanticscholar.org/paper/{p['paperId']}" if p.get("paperId") else ""),
            )
            for p in papers[:limit]
        ]
        return [h for h in hits if h is not None]

    def citing(self, doi: str, limit: int = 20) -> list[ExternalHit]:
        """Works that cite the paper with this DOI:
        GET /graph/v1/paper/DOI:{doi}/citations -> {"data": [{"citingPaper": {...}}]}."""
        headers = {"x-api-key": self.api_key} if self.api_key else {}
        data = self._json(
            self._get(
                f"/graph/v1/paper/DOI:{doi}/citations",
                {"fields": "title,abstract,year,url", "limit": limit},
                headers,
            )
        )
        rows = data.get("data", [])
        if not isinstance(rows, list):
            raise ExternalSearchError(f"{self.name}: the reply has no list of citations under 'data'")
        papers = [r.get("citingPaper") for r in rows if isinstance(r, dict)]
        hits = [
            _hit(self.name, p.get("title"), p.get("abstract"), p.get("year"), p.get("url"))
            for p in papers[:limit]
            if isinstance(p, dict)
        ]
        return [h for h in hits if h is not None]


@dataclass
class Arxiv(_Service):
    name: str = "arxiv"
    base_url: str = "https://export.arxiv.org"

    def search(self, query: str, limit: int = 3) -> list[ExternalHit]:
        response = self._get("/api/query", {"search_query": f"all:{query}", "start": 0, "max_results": limit})
        try:
            feed = ET.fromstring(response.content)
        except ET.ParseError as exc:
            raise ExternalSearchError(f"{self.name}: the reply is not an Atom feed ({exc})") from None
        if feed.tag != f"{ATOM}feed":
            raise ExternalSearchError(f"{self.name}: the reply is not an Atom feed (root <{feed.tag}>)")
        hits = []
        for entry in feed.findall(f"{ATOM}entry")[:limit]:
            published = _clean(entry.findtext(f"{ATOM}published"))
            year = int(published[:4]) if published[:4].isdigit() else None
            hits.append(
                _hit(
                    self.name,
                    entry.findtext(f"{ATOM}title"),
                    entry.findtext(f"{ATOM}summary"),
                    year,
                    entry.findtext(f"{ATOM}id"),
                )
            )
        return [h for h in hits if h is not None]


def abstract_from_inverted_index(index) -> str:
    """OpenAlex ships abstracts as {word: [positions]}; the words put back in order."""
    if not isinstance(index, dict):
        return ""
    placed = [
        (pos, word)
        for word, positions in index.items()
        if isinstance(positions, list)
        for pos in positions
        if isinstance(pos, int)
    ]
    return " ".join(word for _, word in sorted(placed))


@dataclass
class OpenAlex(_Service):
    name: str = "openalex"
    base_url: str = "https://api.openalex.org"
    mailto: str | None = None  # OpenAlex's "polite pool": an address to contact

    def search(self, query: str, limit: int = 3) -> list[ExternalHit]:
        params = {"search": query, "per_page": limit, **({"mailto": self.mailto} if self.mailto else {})}
        data = self._json(self._get("/works", params))
        works = data.get("results")
        if not isinstance(works, list) or not all(isinstance(w, dict) for w in works):
            raise ExternalSearchError(f"{self.name}: the reply has no list of works under 'results'")
        hits = [
            _hit(
                self.name,
                w.get("display_name") or w.get("title"),
                abstract_from_inverted_index(w.get("abstract_inverted_index")),
                w.get("publication_year"),
                w.get("doi") or w.get("id"),
            )
            for w in works[:limit]
        ]
        return [h for h in hits if h is not None]

    def citing(self, doi: str, limit: int = 20) -> list[ExternalHit]:
        """Works that cite the paper with this DOI: its OpenAlex id from GET /works/doi:{doi}, then
        GET /works?filter=cites:{id} -> {"results": [...]}."""
        polite = {"mailto": self.mailto} if self.mailto else {}
        work = self._json(self._get(f"/works/doi:{doi}", polite))
        ident = str(work.get("id") or "").rsplit("/", 1)[-1]
        if not ident:
            raise ExternalSearchError(f"{self.name}: the work for DOI {doi} has no id")
        data = self._json(self._get("/works", {"filter": f"cites:{ident}", "per_page": limit, **polite}))
        works = data.get("results")
        if not isinstance(works, list):
            raise ExternalSearchError(f"{self.name}: the reply has no list of works under 'results'")
        hits = [
            _hit(
                self.name,
                w.get("display_name") or w.get("title"),
                abstract_from_inverted_index(w.get("abstract_inverted_index")),
                w.get("publication_year"),
                w.get("doi") or w.get("id"),
            )
            for w in works[:limit]
            if isinstance(w, dict)
        ]
        return [h for h in hits if h is not None]


ADAPTERS = {"semantic-scholar": SemanticScholar, "arxiv": Arxiv, "openalex": OpenAlex}


def scholarly_searches(
    names: str,
    *,
    semantic_scholar_key: str | None = None,
    mailto: str | None = None,
    base_urls: dict[str, str] | None = None,
) -> list:
    """The adapters named in a comma-separated list ("arxiv,openalex"); "" or "off": none."""
    wanted = [n.strip().lower() for n in names.split(",") if n.strip()]
    if wanted in ([], ["off"], ["none"]):
        return []
    unknown = [n for n in wanted if n not in ADAPTERS]
    if unknown:
        raise ExternalSearchError(
            f"unknown external search {', '.join(unknown)}: use one or more of "
            f"{', '.join(ADAPTERS)}, comma-separated, or off"
        )
    adapters = []
    for name in dict.fromkeys(wanted):
        options: dict = {}
        if base_urls and name in base_urls:
            options["base_url"] = base_urls[name]
        if name == "semantic-scholar":
            options["api_key"] = semantic_scholar_key
        if name == "openalex":
            options["mailto"] = mailto
        adapters.append(ADAPTERS[name](**options))
    return adapters
