"""The accounts of a shared `reader serve --accounts`: whose judgements and highlights are whose.

An account is a name and a password kept as an Argon2id hash (argon2-cffi). Signing in checks
the password against the hash; 5 wrong passwords in a row lock the account for 10 minutes,
during which the right password is refused too. A name with no account is answered the same
way, in the same time (its password is checked against a dummy hash, and its failures lock it
in memory), so that trying names does not tell which exist. The clock is passed in (`now`).
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from datetime import UTC, datetime, timedelta

from argon2 import PasswordHasher
from argon2.exceptions import InvalidHashError, VerificationError
from sqlalchemy import delete, select
from sqlalchemy.orm import Session

from reader.errors import ReaderError
from reader.store.tables import User, utcnow

MAX_FAILURES = 5
LOCK_TIME = timedelta(minutes=10)
PASSWORD_MIN = 8
PASSWORD_MAX = 1024  # hashing a megabyte-long "password" is work an attacker would choose
NAME_LIMIT = 64
_NAME = re.compile(r"^[\w.@-]+$")
HASHER = PasswordHasher()  # Argon2id, the library's RFC 9106 low-memory profile
# what a name without an account is checked against: the same work as a real account's
DUMMY_HASH = HASHER.hash("no account has this password")
UNKNOWN_NAMES_KEPT = 10_000  # failures of names without an account, remembered in memory


@dataclass
class Attempts:
    """One name's failed sign-ins in a row, and when its lock ends (None: not locked)."""

    failed: int = 0
    locked_until: datetime | None = None

    def locked(self, now: datetime) -> bool:
        return self.locked_until is not None and _aware(self.locked_until) > now

    def after_failure(self, now: datetime) -> Attempts:
        """The count after one more wrong password: the MAX_FAILURES-th locks the name for
        LOCK_TIME and starts the count again."""
        failed = self.failed + 1
        if failed >= MAX_FAILURES:
            return Attempts(0, now + LOCK_TIME)
        return Attempts(failed, None)


@dataclass
class Login:
    """What a sign-in came to: the account's name when it passed; else `locked_until` when the
    name is locked (the right password is refused too until then)."""

    name: str | None
    locked_until: datetime | None = None

    @property
    def passed(self) -> bool:
        return self.name is not None

    def message(self) -> str:
        if self.passed:
            return f"Signed in as {self.name}."
        if self.locked_until is not None:
            until = _aware(self.locked_until).astimezone(UTC).strftime("%H:%M UTC")
            return (
                f"Too many wrong passwords for this name: it is locked until {until}. "
                "Try again then, or ask whoever runs this server to unlock it (reader user unlock NAME)."
            )
        return "Wrong name or password."


@dataclass
class Account:
    """One account as plain data (never its hash)."""

    name: str
    created_at: datetime | None
    locked_until: datetime | None

    def to_json(self) -> dict:
        return {
            "name": self.name,
            "created_at": self.created_at.isoformat() if self.created_at else None,
            "locked_until": self.locked_until.isoformat() if self.locked_until else None,
        }


def _aware(moment: datetime) -> datetime:
    """SQLite gives back naive datetimes of what was stored in UTC."""
    return moment if moment.tzinfo is not None else moment.replace(tzinfo=UTC)


def checked_name(name: str) -> str:
    name = (name or "").strip()
    if not name or len(name) > NAME_LIMIT or not _NAME.match(name):
        raise ReaderError(
            f"{name[:80]!r} is not an account name: use 1 to {NAME_LIMIT} letters, digits, '.', '_', '-' or '@'"
        )
    return name


def checked_password(password: str) -> str:
    if len(password or "") < PASSWORD_MIN:
        raise ReaderError(f"the password is too short: use at least {PASSWORD_MIN} characters")
    if len(password) > PASSWORD_MAX:
        raise ReaderError(f"the password is {len(password):,} characters long; keep it to {PASSWORD_MAX:,}")
    return password


def _plain(row: User) -> Account:
    return Account(name=row.name, created_at=row.created_at, locked_until=row.locked_until)


def _row(session: Session, name: str) -> User | None:
    return session.scalars(select(User).where(User.name == name)).first()


def accounts(session: Session) -> list[Account]:
    """Every account, by name."""
    return [_plain(row) for row in session.scalars(select(User).order_by(User.name))]


def has_account(session: Session, name: str) -> bool:
    return _row(session, name) is not None


def add_account(session: Session, name: str, password: str) -> Account:
    """A new account; refused in one line when the name is taken or the password too short."""
    name, password = checked_name(name), checked_password(password)
    if _row(session, name) is not None:
        raise ReaderError(f"there is an account named {name!r} already; pick another name")
    row = User(name=name, password_hash=HASHER.hash(password), failed_logins=0, created_at=utcnow())
    session.add(row)
    session.flush()
    return _plain(row)


def remove_account(session: Session, name: str) -> bool:
    """Remove the account (its judgements and highlights stay, under its name); False when
    there is none by that name."""
    return bool(session.execute(delete(User).where(User.name == name)).rowcount)


def unlock_account(session: Session, name: str) -> bool:
    """End the account's lock and forget its failed sign-ins; False when there is none by that name."""
    row = _row(session, name)
    if row is not None:
        row.failed_logins, row.locked_until = 0, None
    return row is not None


def _password_matches(stored_hash: str, password: str) -> bool:
    try:
        return HASHER.verify(stored_hash, password[:PASSWORD_MAX])
    except (VerificationError, InvalidHashError):
        return False


def verify_login(
    session: Session, name: str, password: str, now: datetime, unknown: dict[str, Attempts]
) -> Login:
    """Check a sign-in at `now` (the lock rule in this module's docstring). `unknown` keeps the
    failures of names without an account (the caller's, one per server)."""
    name = (name or "").strip()[:NAME_LIMIT]
    row = _row(session, name) if name else None
    stored = DUMMY_HASH if row is None else row.password_hash
    before = unknown.get(name, Attempts()) if row is None else Attempts(row.failed_logins, row.locked_until)
    right = _password_matches(stored, password or "") and row is not None
    if before.locked(now):
        return Login(None, before.locked_until)
    if right:
        row.failed_logins, row.locked_until = 0, None
        if HASHER.check_needs_rehash(row.password_hash):
            row.password_hash = HASHER.hash(password)
        return Login(row.name)
    after = before.after_failure(now)
    if row is not None:
        row.failed_logins, row.locked_until = after.failed, after.locked_until
    elif name:
        if len(unknown) >= UNKNOWN_NAMES_KEPT:
            unknown.clear()
        unknown[name] = after
    return Login(None, after.locked_until)
