"""The accounts of a shared `reader serve --accounts`: `reader.accounts`.

    reader.accounts.add("ada", password)         # `reader user add ada` prompts for it
    login = reader.accounts.verify_login("ada", password)
    reader.paper("sample").judge("critique-2", "supported", user=login.name)

Each account sees and keeps its own judgements and highlights (`user=` on Paper's calls);
the audit, the notes and the questions stay shared. The lock rule and the hashing are in
reader/annotations/accounts.py.
"""

from __future__ import annotations

import threading
from datetime import UTC, datetime

from reader.errors import ReaderError
from reader.services import Services

ACCOUNTS_LOCK = "reader:accounts"  # a sign-in's count of failures is read and written alone


class Accounts:
    def __init__(self, services: Services):
        self._services = services
        self._unknown = {}  # failed sign-ins of names without an account (Attempts by name)
        self._unknown_lock = threading.Lock()

    def add(self, name: str, password: str):
        """A new account -> Account. The password is kept only as its Argon2id hash."""
        from reader.annotations.accounts import add_account
        from reader.store.db import transaction

        with transaction(self._services.db, lock=ACCOUNTS_LOCK) as session:
            return add_account(session, name, password)

    def check_name(self, name: str) -> str:
        """The name as an account would have it, or one line saying what a name may hold."""
        from reader.annotations.accounts import checked_name

        return checked_name(name)

    def remove(self, name: str):
        """Remove an account (its judgements and highlights are kept) -> the name removed."""
        from reader.annotations.accounts import remove_account
        from reader.store.db import transaction

        with transaction(self._services.db, lock=ACCOUNTS_LOCK) as session:
            if not remove_account(session, name):
                raise ReaderError(f"there is no account named {name!r}; `reader user list` shows them")
        return name

    def unlock(self, name: str):
        """End an account's lock after failed sign-ins -> the name unlocked."""
        from reader.annotations.accounts import unlock_account
        from reader.store.db import transaction

        with transaction(self._services.db, lock=ACCOUNTS_LOCK) as session:
            if not unlock_account(session, name):
                raise ReaderError(f"there is no account named {name!r}; `reader user list` shows them")
        return name

    def list(self):
        """Every account, by name -> list[Account]."""
        from reader.annotations.accounts import accounts

        with self._services.db() as session:
            return accounts(session)

    def exists(self, name: str) -> bool:
        from reader.annotations.accounts import has_account

        with self._services.db() as session:
            return has_account(session, name)

    def verify_login(self, name: str, password: str, now: datetime | None = None):
        """Check a sign-in -> Login (its `name` when it passed, else `locked_until` when the name
        is locked, and `message()` to show). 5 wrong passwords lock the name for 10 minutes."""
        from reader.annotations.accounts import verify_login
        from reader.store.db import transaction

        now = now or datetime.now(UTC)
        with self._unknown_lock, transaction(self._services.db, lock=ACCOUNTS_LOCK) as session:
            return verify_login(session, name, password, now, self._unknown)
