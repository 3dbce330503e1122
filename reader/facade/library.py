"""The library as a whole: `reader.library`. Bringing papers in from Zotero or by identifier,
the search index, the extraction table across papers, BibTeX and Zotero notes, and the read
models' view of the database (reader.web's pages).

    reader.library.ingest_zotero(collection="Thesis")
    reader.library.import_papers(["arXiv:1706.03762"], services="arxiv")
    table = reader.library.extraction_table(["sparta", "wheat"])
"""

from __future__ import annotations

import contextlib
import dataclasses
import time
from collections.abc import Iterable
from pathlib import Path

from reader.errors import ReaderError
from reader.services import Services


class Library:
    def __init__(self, services: Services):
        self._services = services

    @property
    def home(self) -> Path:
        """READER_HOME: where the database (SQLite), the index, page images and uploads live."""
        return self._services.settings.home

    def paper_id(self, ref: str) -> str:
        """The id of the stored paper an id, id prefix, file path or title prefix names."""
        from reader.store.queries import resolve_paper_id

        return resolve_paper_id(self._services.db, str(ref))

    @contextlib.contextmanager
    def reading(self):
        """One database session for the read models (reader.web's library, paper page, PDF
        and questions), which read plain data from it."""
        with self._services.db() as session:
            yield session

    def view(self, read_model, *args, **kwargs):
        """A read model's answer, `read_model(session, *args, **kwargs)`, over one session."""
        with self.reading() as session:
            return read_model(session, *args, **kwargs)

    @contextlib.contextmanager
    def writing(self):
        """One transaction for the read models' own derived data: the passages' rectangles on
        their pages, the name an upload came in with (reader.web)."""
        from reader.store.db import transaction

        with transaction(self._services.db) as session:
            yield session

    def search(self, query: str, *, k: int = 3):
        """The search index's passages for `query` (BM25 and dense, fused) -> list[SearchHit]."""
        return self._services.search_index.search(query, top_k_per_path=k)

    def zotero_library(self, data_dir: str | Path | None = None, collection: str | None = None):
        """Zotero's items with a PDF (from a copy of its database) -> ZoteroLibrary;
        `data_dir` defaults to the usual Zotero data directory (~/Zotero)."""
        from reader.ingest.zotero import default_data_dir, read_library

        return read_library(Path(data_dir) if data_dir else default_data_dir(), collection)

    def ingest_zotero(
        self,
        data_dir: str | Path | None = None,
        collection: str | None = None,
        *,
        on_result=None,
        on_note=None,
    ):
        """Ingest a Zotero library (or one collection) with each item's metadata -> list[IngestResult];
        items without a usable PDF come back "skipped" with the reason."""
        return self._services.ingest_zotero(
            self.zotero_library(data_dir, collection), on_result=on_result, on_note=on_note
        )

    def import_papers(
        self, items: Iterable[str], *, services: str | None = None, base_urls: dict | None = None
    ):
        """Bring papers in by DOI, arXiv id or URL, or from RIS/BibTeX files -> ImportReport (one row
        per paper). `services` ("arxiv,openalex,unpaywall,crossref"; "off"; None: READER_IMPORT_SERVICES,
        off by default) may be asked for the metadata and the open-access PDF; an entry with a local
        PDF, or with a title when nothing may be asked, is imported without them. `base_urls`
        (service -> address) points the services elsewhere (tests: a loopback server)."""
        from reader.config.settings import parse_import_services
        from reader.ingest.identifiers import records_for

        names = self._services.settings.import_services if services is None else services
        chosen = parse_import_services(
            "--services" if services is not None else "READER_IMPORT_SERVICES", names
        )
        records = [record for item in as_list(items) for record in records_for(str(item))]
        return self._services.import_records(records, chosen, base_urls or {})

    def reindex(self):
        """Rebuild the search index from the passages in the database -> Reindexed."""
        index = self._services.search_index
        started = time.perf_counter()
        chunks = index.rebuild()
        return Reindexed(chunks, len(index.paper_ids()), index.embedder_name, time.perf_counter() - started)

    def extraction_table(self, papers: Iterable[str], *, stored_only: bool = False, columns=(), questions=()):
        """The extraction table of the chosen papers (ids, id prefixes or title prefixes) ->
        ExtractionTable: for each its task, datasets and sizes, method, baselines and headline
        result, from the stored synthesis and the paper's passages, each cell with its source
        passage and page and audited like any sentence ([待验证] without support); `to_csv()`.
        `stored_only`: only from answers the verifier gave before (the web page's GET), with no
        model call; reader.errors.NotStored when the table was not built yet. `columns`: items of
        the rigour checklist to add (metrics, variance, code …); `questions`: columns of the user's
        own, each a question asked of every paper and answered with its sources, audited."""
        paper_ids = [self.paper_id(ref) for ref in as_list(papers)]
        return self._services.extraction_table(
            paper_ids, stored_only=stored_only, columns=as_list(columns), questions=as_list(questions)
        )

    def export(
        self,
        out: str | Path,
        papers: Iterable[str] | None = None,
        *,
        lookup: str | None = None,
        user: str | None = None,
    ):
        """Write one annotated Markdown note per reviewed paper, plus index.md -> ExportResult.
        `lookup` ("crossref", "openalex", "semantic-scholar" or "off"; None: READER_REFERENCE_LOOKUP,
        off by default) checks each cited reference there. `user`: whose judgements and highlights
        the notes carry (an account's on a shared server; None: the single-user mode's)."""
        from reader.export import export_notes

        checker = self._services.reference_lookup(lookup)
        return export_notes(self._services.db, self._paper_ids(papers), Path(out), lookup=checker, user=user)

    def bibtex(self, out: str | Path, papers: Iterable[str] | None = None):
        """Write the BibTeX entries of the reviewed papers (or of `papers`) to the file `out` -> BibtexResult."""
        from reader.export import export_bibtex

        return export_bibtex(self._services.db, self._paper_ids(papers), Path(out))

    def zotero_note(self, papers: Iterable[str] | None = None, *, base_url: str | None = None):
        """Write each paper's audited note, with the reader's judgements, follow-up questions and
        highlights, as a child note of its Zotero item through Zotero's web API -> ZoteroNoteReport.
        `papers` None: every paper from Zotero. Writing again updates the note written before,
        unless it was edited in Zotero since (then a new note is written beside it). Needs
        READER_ZOTERO_LIBRARY and READER_ZOTERO_API_KEY; `base_url` points elsewhere (tests)."""
        from reader.export.zotero_note import write_notes

        client = self._services.zotero_notes(base_url)
        return write_notes(self._services.db, self._paper_ids(papers), client)

    def _paper_ids(self, papers: Iterable[str] | None) -> list[str] | None:
        return None if papers is None else [self.paper_id(ref) for ref in as_list(papers)]


@dataclasses.dataclass
class Reindexed:
    """`reader reindex`: the passages indexed, from how many papers, with which embedding model."""

    chunks: int
    papers: int
    embedder: str
    seconds: float

    def to_json(self) -> dict:
        return dataclasses.asdict(self)


def as_list(items) -> list:
    """A path or string as a list of one; any other iterable as a list."""
    return [items] if isinstance(items, (str, Path)) else list(items)


def no_sources_error(paths: list) -> ReaderError:
    return ReaderError(
        f"no .pdf, .txt or .md files under {', '.join(map(str, paths))}: give a folder of papers"
    )
