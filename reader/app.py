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
