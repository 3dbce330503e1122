"""Accounts of a shared `reader serve --accounts` (reader/annotations/accounts.py, reader.accounts):
Argon2id hashes, the lock after 5 wrong passwords (a clock passed in, no sleeping), names without
an account answered as the others, and each account's own judgements and highlights."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta

import pytest
from sqlalchemy import select

from reader.annotations.accounts import LOCK_TIME, MAX_FAILURES, Attempts
from reader.errors import ReaderError
from reader.store.tables import User

T0 = datetime(2026, 3, 1, 9, 0, tzinfo=UTC)
PASSWORD = "correct horse battery"


def test_the_password_is_kept_as_an_argon2id_hash_only(app, db):
    added = app.accounts.add("ada", PASSWORD)
    assert added.name == "ada" and "hash" not in added.to_json()
    with db() as s:
        row = s.scalars(select(User)).one()
    assert row.password_hash.startswith("$argon2id$")
    assert PASSWORD not in row.password_hash
    assert app.accounts.verify_login("ada", PASSWORD, T0).name == "ada"
    assert not app.accounts.verify_login("ada", PASSWORD + "!", T0).passed


@pytest.mark.parametrize(
    ("name", "password", "says"),
    [
        ("ada lovelace", PASSWORD, "is not an account name"),
        ("", PASSWORD, "is not an account name"),
        ("x" * 65, PASSWORD, "is not an account name"),
        ("ada", "short", "at least 8 characters"),
        ("ada", "p" * 2000, "keep it to 1,024"),
    ],
)
def test_bad_names_and_passwords_are_refused_in_one_line(app, name, password, says):
    with pytest.raises(ReaderError, match=says):
        app.accounts.add(name, password)
    assert app.accounts.list() == []


def test_a_taken_name_is_refused(app):
    app.accounts.add("ada", PASSWORD)
    with pytest.raises(ReaderError, match="there is an account named 'ada' already"):
        app.accounts.add("ada", "another password")


def test_five_wrong_passwords_lock_the_account_for_ten_minutes(app):
    app.accounts.add("ada", PASSWORD)
    for n in range(MAX_FAILURES - 1):
        login = app.accounts.verify_login("ada", "wrong password", T0 + timedelta(seconds=n))
        assert (login.passed, login.locked_until, login.message()) == (False, None, "Wrong name or password.")
    fifth = T0 + timedelta(seconds=10)
    login = app.accounts.verify_login("ada", "wrong password", fifth)
    assert login.locked_until == fifth + LOCK_TIME
    assert "locked until 09:10 UTC" in login.message()
    # the right password is refused while the lock lasts
    during = app.accounts.verify_login("ada", PASSWORD, fifth + LOCK_TIME - timedelta(seconds=1))
    assert not during.passed and "locked until 09:10 UTC" in during.message()
    assert app.accounts.list()[0].locked_until is not None
    assert app.accounts.verify_login("ada", PASSWORD, fifth + LOCK_TIME).name == "ada"


def test_a_right_password_starts_the_count_again(app):
    app.accounts.add("ada", PASSWORD)
    for _ in range(MAX_FAILURES - 1):
        app.accounts.verify_login("ada", "wrong password", T0)
    assert app.accounts.verify_login("ada", PASSWORD, T0).passed
    for _ in range(MAX_FAILURES - 1):
        assert app.accounts.verify_login("ada", "wrong password", T0).locked_until is None


def test_unlock_ends_the_lock(app):
    app.accounts.add("ada", PASSWORD)
    for _ in range(MAX_FAILURES):
        app.accounts.verify_login("ada", "wrong password", T0)
    assert not app.accounts.verify_login("ada", PASSWORD, T0).passed
    app.accounts.unlock("ada")
    assert app.accounts.verify_login("ada", PASSWORD, T0).passed
    with pytest.raises(ReaderError, match="no account named 'bob'"):
        app.accounts.unlock("bob")


def test_a_name_without_an_account_is_answered_as_one_with_an_account(app):
    """Same messages, and the same lock after 5 tries, so trying names tells nothing."""
    app.accounts.add("ada", PASSWORD)
    real = [app.accounts.verify_login("ada", "wrong password", T0).message() for _ in range(MAX_FAILURES)]
    made_up = [app.accounts.verify_login("zed", "wrong password", T0).message() for _ in range(MAX_FAILURES)]
    assert real == made_up
    assert "locked until" in made_up[-1]
    assert [a.name for a in app.accounts.list()] == ["ada"]  # nothing stored for 'zed'


def test_the_lock_rule_over_plain_data():
    attempts = Attempts()
    for _ in range(MAX_FAILURES - 1):
        attempts = attempts.after_failure(T0)
    assert (attempts.failed, attempts.locked(T0)) == (MAX_FAILURES - 1, False)
    attempts = attempts.after_failure(T0)
    assert attempts.locked(T0 + LOCK_TIME - timedelta(microseconds=1))
    assert not attempts.locked(T0 + LOCK_TIME)
    # a naive moment (SQLite gives them back) is taken as UTC
    assert Attempts(0, (T0 + LOCK_TIME).replace(tzinfo=None)).locked(T0)


def test_removing_an_account_keeps_its_judgements_and_forgets_its_sign_in(app):
    app.accounts.add("ada", PASSWORD)
    assert app.accounts.remove("ada") == "ada"
    assert not app.accounts.verify_login("ada", PASSWORD, T0).passed
    with pytest.raises(ReaderError, match="no account named 'ada'"):
        app.accounts.remove("ada")


# ---------------------------------------------------------------- each account's own annotations

PID = "cd" * 32
SENTENCES = [("Retrieval is done in two stages.", "supported"), ("It beats BM25 everywhere.", "unsupported")]
LINE = [[0.1, 0.2, 0.6, 0.22]]


def test_each_account_sees_and_changes_only_its_own_judgements_and_highlights(app):
    from test_export import add_analysis, add_paper

    add_paper(app.services.db, PID, "Two-Stage Retrieval")
    add_analysis(app.services.db, PID, "critique", SENTENCES)
    paper = app.paper(PID)
    paper.judge("critique-2", "supported", user="ada")
    paper.judge("critique-2", "unsupported", user="bob")
    paper.judge("critique-1", "unsupported")  # the single-user mode's
    ada_mark = paper.highlight(1, LINE, "two stages", user="ada")
    paper.highlight(2, LINE, "BM25", user="bob")

    def verdicts(user):
        return {j["sentence_id"]: j["verdict"] for j in paper.analyses(user=user).judgements}

    assert verdicts("ada") == {"critique-2": "supported"}
    assert verdicts("bob") == {"critique-2": "unsupported"}
    assert verdicts(None) == {"critique-1": "unsupported"}
    assert [h["text"] for h in paper.analyses(user="ada").highlights] == ["two stages"]
    assert [h["text"] for h in paper.analyses().highlights] == []
    # bob cannot delete ada's highlight; ada can
    assert not paper.delete_highlight(ada_mark.id, user="bob")
    assert paper.delete_highlight(ada_mark.id, user="ada")
    # withdrawing ada's judgement leaves bob's
    paper.judge("critique-2", None, user="ada")
    assert verdicts("ada") == {} and verdicts("bob") == {"critique-2": "unsupported"}
