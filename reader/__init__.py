"""reader: deep reading of academic papers with a self-audit of every sentence it writes.

    from reader import Reader

    reader = Reader(home="~/reader-home")
    reader.ingest(["papers/"])
    result = reader.read("sample")       # a DeepReadResult

`Reader` (reader/facade/) is the public surface, with the Paper, Library, ReviewQueue and
Questions it hands out; the names below are what their methods take and return. Imports are
lazy so that `reader --help` stays instant.
"""

import importlib

__version__ = "0.1.0"

# name -> the module that defines it
_PUBLIC = {
    "Reader": "reader.facade",
    "Paper": "reader.facade.paper",
    "Library": "reader.facade.library",
    "ReviewQueue": "reader.facade.review_queue",
    "Questions": "reader.facade.questions",
    "Services": "reader.services",
    "Settings": "reader.config",
    "load_settings": "reader.config",
    "ReaderError": "reader.errors",
    "ConfigError": "reader.errors",
    "PaperNotFound": "reader.errors",
    "IngestResult": "reader.ingest.pipeline",
    "ZoteroLibrary": "reader.ingest.zotero",
    "PaperInfo": "reader.store.queries",
    "SearchResults": "reader.index.hits",
    "SearchHit": "reader.index.hits",
    "DeepReadResult": "reader.deepread.read",
    "AuditReport": "reader.deepread.read",
    "StoredAnalyses": "reader.audit.record",
    "JudgementResult": "reader.annotations.judgements",
    "Judgement": "reader.annotations.judgements",
    "HighlightItem": "reader.annotations.highlights",
    "Accounts": "reader.facade.accounts",
    "Account": "reader.annotations.accounts",
    "Login": "reader.annotations.accounts",
    "AskResult": "reader.crag.pipeline",
    "CalibrationReport": "reader.crag.calibrate",
    "ReviewReport": "reader.review",
    "PaperReview": "reader.review",
    "EnqueueReport": "reader.review",
    "WorkerReport": "reader.review",
    "JobsReport": "reader.facade.review_queue",
    "Reindexed": "reader.facade.library",
    "ExportResult": "reader.export",
    "ExtractionTable": "reader.table",
    "TableRow": "reader.table",
    "BibtexResult": "reader.export.bibtex",
    "FigureFiles": "reader.export.figures",
    "UsageReport": "reader.store.usage",
    "FollowUpItem": "reader.store.queries",
    "CitationList": "reader.ingest.links",
    "ImportReport": "reader.ingest.importing",
    "ZoteroNoteReport": "reader.export.zotero_note",
}
__all__ = list(_PUBLIC)


def __getattr__(name: str):
    if name in _PUBLIC:
        return getattr(importlib.import_module(_PUBLIC[name]), name)
    raise AttributeError(f"module 'reader' has no attribute {name!r}")


def __dir__() -> list[str]:
    return sorted(__all__ + ["__version__"])
