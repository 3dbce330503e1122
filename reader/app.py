"""The process-wide things stages need, built lazily and once: settings,
database sessions, the two LLM roles and the search index.

Stages never reach for these themselves; the CLI (or the web app) builds an
App and passes the pieces in.
"""

from __future__ import annotations

from functools import cached_property

from reader.config import Settings, load_settings


class App:
    def __init__(self, settings: Settings | None = None, *, use_cache: bool | None = None):
        self.settings = settings or load_settings()
        self.use_cache = self.settings.cache if use_cache is None else use_cache

    @cached_property
    def db(self):
        """sessionmaker for a database at the newest migration."""
        from reader.store.db import open_database

        self.settings.home.mkdir(parents=True, exist_ok=True)
        return open_database(self.settings.database_url)

    @cached_property
    def search_index(self):
        """The BM25 + dense index over every chunk (reader.index.store.SearchIndex)."""
        from reader.index.store import SearchIndex

        return SearchIndex.open(self.settings, self.db)

    @cached_property
    def generator(self):
        """The LLM that writes (critique, synthesis, answers), with call log and cache."""
        from reader.llm.factory import build_llm
        from reader.store.calls import CallStore

        return build_llm(self.settings, "generator", CallStore(self.db), use_cache=self.use_cache)

    @cached_property
    def verifier(self):
        """The LLM that checks (audit, groundedness); falls back to the generator's settings."""
        from reader.llm.factory import build_llm
        from reader.store.calls import CallStore

        return build_llm(self.settings, "verifier", CallStore(self.db), use_cache=self.use_cache)
