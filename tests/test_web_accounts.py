"""`reader serve --accounts` over FastAPI's test client: every page needs a signed-in account,
the sign-in page and its cookie, signing out, the lock after 5 wrong passwords and the slower
answers to an address, each account's own judgements and highlights; the token mode unchanged;
`reader user add` and `reader serve --accounts` on the command line."""

from __future__ import annotations

import html
import re

import pytest
from click.testing import CliRunner
from test_web import SYNTH, add_analysis, add_paper, client_for, synth_text  # noqa: F401 - the fixture

from reader.annotations.accounts import MAX_FAILURES
from reader.store.tables import Paper
from reader.web.security import ACCOUNT_COOKIE

PASSWORD = "correct horse battery"
JSON = {"Accept": "application/json"}
LINE = [[0.1, 0.2, 0.6, 0.22]]


@pytest.fixture
def accounts_client(app, client_for):  # noqa: F811
    """A test client of a server with accounts ada and bob; its throttle records its waits."""
    app.accounts.add("ada", PASSWORD)
    app.accounts.add("bob", PASSWORD + " too")

    def build():
        client = client_for(web_accounts=True)
        client.waits = []

        async def sleep(seconds):
            client.waits.append(seconds)

        client.app.state.throttle.sleep = sleep
        return client

    return build


def form_token(client, path="/login") -> str:
    return re.search(r'name="csrf_token" value="([0-9a-f]{64})"', client.get(path).text).group(1)


def sign_in(client, name, password, next_path="/library"):
    data = {"csrf_token": form_token(client), "name": name, "password": password, "next": next_path}
    return client.post("/login", data=data, follow_redirects=False)


def test_every_page_sends_to_the_sign_in_page_and_scripts_get_a_401(accounts_client):
    client = accounts_client()
    for path in ("/library", "/paper/" + "a" * 64, "/ask", "/upload"):
        response = client.get(path, follow_redirects=False)
        assert response.status_code == 303, path
        assert response.headers["location"].startswith("/login?next=%2F"), path
    script = client.get("/library", headers=JSON)
    assert script.status_code == 401 and "Sign in first" in script.json()["error"]
    assert client.post("/upload", headers=JSON).status_code == 401
    assert client.get("/static/style.css").status_code == 200  # the sign-in page's own
    page = client.get("/login?next=/ask")
    assert page.status_code == 200 and 'name="password" type="password"' in page.text
    assert 'value="/ask"' in page.text
    assert "Signed in as" not in page.text


def test_signing_in_sets_an_http_only_same_site_cookie_and_signing_out_ends_it(accounts_client):
    client = accounts_client()
    response = sign_in(client, "ada", PASSWORD, "/ask")
    assert response.status_code == 303 and response.headers["location"] == "/ask"
    [cookie] = [c for c in response.headers.get_list("set-cookie") if c.startswith(ACCOUNT_COOKIE + "=")]
    assert "HttpOnly" in cookie and "samesite=lax" in cookie.lower() and "Path=/" in cookie
    assert PASSWORD not in cookie
    library = client.get("/library")
    assert library.status_code == 200
    assert "Signed in as <strong>ada</strong>" in library.text and 'id="sign-out"' in library.text
    held = client.cookies.get(ACCOUNT_COOKIE)

    out = client.post("/logout", data={"csrf_token": form_token(client, "/library")}, follow_redirects=False)
    assert out.status_code == 303 and out.headers["location"] == "/login"
    assert client.get("/library", follow_redirects=False).status_code == 303
    # the old cookie, sent again, is of a session that has ended
    client.cookies.set(ACCOUNT_COOKIE, held)
    assert client.get("/library", follow_redirects=False).status_code == 303


def test_a_forged_or_foreign_cookie_and_another_site_s_sign_in_are_refused(accounts_client):
    client = accounts_client()
    client.cookies.set(ACCOUNT_COOKIE, "made-up.0123")
    assert client.get("/library", follow_redirects=False).status_code == 303
    data = {"csrf_token": "0" * 64, "name": "ada", "password": PASSWORD}
    assert client.post("/login", data=data, follow_redirects=False).status_code == 403
    foreign = client.post("/login", data=data, headers={"Origin": "http://evil.example"})
    assert foreign.status_code == 403
    # a redirect after signing in stays on this server
    assert sign_in(client, "ada", PASSWORD, "//evil.example/x").headers["location"] == "/library"


def test_five_wrong_passwords_lock_the_account_and_the_address_waits_longer_each_time(accounts_client):
    client = accounts_client()
    answers = [sign_in(client, "ada", "wrong password") for _ in range(MAX_FAILURES)]
    assert [a.status_code for a in answers] == [401] * MAX_FAILURES
    assert "Wrong name or password." in answers[0].text
    assert "locked until" in html.unescape(answers[-1].text)
    refused = sign_in(client, "ada", PASSWORD)  # the right password, during the lock
    assert refused.status_code == 401 and "locked until" in html.unescape(refused.text)
    assert client.waits == [0.5, 1.0, 2.0, 4.0, 8.0, 8.0]
    # a name without an account is answered the same way
    made_up = [sign_in(client, "nobody", "wrong password").text for _ in range(MAX_FAILURES)]
    assert "Wrong name or password." in made_up[0] and "locked until" in html.unescape(made_up[-1])
    # bob, from the same address, still signs in (his account is not locked); the address starts again
    assert sign_in(client, "bob", PASSWORD + " too").status_code == 303
    sign_in(client, "bob", "wrong password")
    assert client.waits[-1] == 0.5


def test_a_script_signs_in_with_json_and_is_told_why_not(accounts_client):
    client = accounts_client()
    headers = {**JSON, "Origin": "http://testserver"}
    wrong = client.post("/login", data={"name": "ada", "password": "nope nope"}, headers=headers)
    assert wrong.status_code == 401 and wrong.json() == {"error": "Wrong name or password."}
    right = client.post("/login", data={"name": "ada", "password": PASSWORD}, headers=headers)
    assert right.status_code == 200 and right.json() == {"signed_in": "ada"}
    assert client.get("/library", headers=JSON).status_code == 200


def test_a_removed_account_is_signed_out_at_its_next_request(app, accounts_client):
    client = accounts_client()
    sign_in(client, "ada", PASSWORD)
    sessions, asked = client.app.state.signed_in, []
    has_account = sessions._has_account
    sessions._has_account = lambda name: asked.append(name) or has_account(name)
    assert client.get("/library", follow_redirects=False).status_code == 200
    assert asked == ["ada"]  # once a request
    for path in ("/static/style.css", "/favicon.ico"):
        assert client.get(path).status_code == 200
    assert asked == ["ada"]  # the static files look no account up
    app.accounts.remove("ada")
    assert client.get("/library", follow_redirects=False).status_code == 303


def test_each_account_sees_and_changes_only_its_own_judgements_and_highlights(app, db, accounts_client):
    pid = add_paper(db, title="Shared paper")
    add_analysis(db, pid, "synthesis", synth_text(), SYNTH)
    ada, bob = accounts_client(), accounts_client()
    sign_in(ada, "ada", PASSWORD)
    sign_in(bob, "bob", PASSWORD + " too")

    judge = ada.get(f"/paper/{pid}/judge/synthesis-2").text
    form = {
        name: re.search(rf'name="{name}" value="([^"]*)"', judge).group(1)
        for name in ("csrf_token", "sentence", "key", "seen")
    }
    sent = ada.post(f"/paper/{pid}/judgement", data={**form, "verdict": "supported"}, follow_redirects=False)
    assert sent.status_code == 303
    assert "Your judgements (1)" in ada.get(f"/paper/{pid}").text
    assert "Your judgements (1)" not in bob.get(f"/paper/{pid}").text
    assert app.paper(pid).analyses(user="ada").judgements[0]["judged_by"] == "ada"
    assert app.paper(pid).analyses().judgements == []  # the single-user mode's are apart

    with db() as s:  # a PDF of 3 pages, so that it can be highlighted
        s.get(Paper, pid).source_kind, s.get(Paper, pid).pages = "pdf", 3
        s.commit()
    token = form_token(ada, f"/paper/{pid}")
    made = ada.post(
        f"/paper/{pid}/highlights",
        json={"page": 1, "rects": LINE, "text": "ada's words", "csrf_token": token},
        headers={"Origin": "http://testserver"},
    )
    assert made.status_code == 201
    assert "ada&#39;s words" in ada.get(f"/paper/{pid}").text
    assert "ada&#39;s words" not in bob.get(f"/paper/{pid}").text
    bob_token = form_token(bob, f"/paper/{pid}")
    taken = bob.post(f"/paper/{pid}/highlights/{made.json()['id']}/delete", data={"csrf_token": bob_token})
    assert taken.status_code == 404
    assert [h["text"] for h in app.paper(pid).analyses(user="ada").highlights] == ["ada's words"]
    # the notes they download carry their own highlights only
    assert "ada's words" in ada.get(f"/paper/{pid}/note.md").text
    assert "ada's words" not in bob.get(f"/paper/{pid}/note.md").text
    assert "ada's words" not in app.paper(pid).note()[1]  # the single-user mode's note
    assert "ada's words" in app.paper(pid).note(user="ada")[1]


def test_the_token_mode_is_unchanged(app, client_for):  # noqa: F811
    app.accounts.add("ada", PASSWORD)
    client = client_for(web_token="s3cret-token")
    assert client.get("/library", follow_redirects=False).status_code == 401
    assert client.get("/library?token=s3cret-token").status_code == 200
    assert client.get("/library").status_code == 200  # the access cookie
    assert "Signed in as" not in client.get("/library").text
    assert client.get("/login").status_code == 404  # no accounts, no sign-in page


# ---------------------------------------------------------------- the command line


def test_reader_user_add_takes_the_password_from_the_prompt_only(app, monkeypatch):
    from reader.cli import cli

    runner = CliRunner()
    added = runner.invoke(cli, ["user", "add", "ada"], input=f"{PASSWORD}\n{PASSWORD}\n")
    assert added.exit_code == 0, added.output
    assert "Added the account ada" in added.output and PASSWORD not in added.output
    assert app.accounts.verify_login("ada", PASSWORD).passed
    given = runner.invoke(cli, ["user", "add", "bob", "--password", PASSWORD])
    assert given.exit_code == 2 and "No such option" in given.output
    assert not any("password" in p.name for p in cli.commands["user"].commands["add"].params)
    mismatch = runner.invoke(cli, ["user", "add", "bob"], input=f"{PASSWORD}\nother one\n")
    assert mismatch.exit_code != 0 and [a.name for a in app.accounts.list()] == ["ada"]
    listed = runner.invoke(cli, ["user", "list"])
    assert listed.exit_code == 0 and listed.output.startswith("ada  added ")
    assert runner.invoke(cli, ["user", "remove", "ada"]).exit_code == 0
    assert app.accounts.list() == []


def test_reader_serve_accounts_refuses_to_start_without_accounts_or_beside_a_token(app, monkeypatch):
    from reader.cli import cli

    runner = CliRunner()
    none_yet = runner.invoke(cli, ["serve", "--accounts"])
    assert none_yet.exit_code != 0 and "reader user add NAME" in none_yet.output
    app.accounts.add("ada", PASSWORD)
    monkeypatch.setenv("READER_WEB_TOKEN", "s3cret-token")
    both = runner.invoke(cli, ["serve", "--accounts"])
    assert both.exit_code != 0 and "unset READER_WEB_TOKEN" in both.output


def test_no_password_is_logged(accounts_client, caplog):
    import logging

    caplog.set_level(logging.DEBUG)
    client = accounts_client()
    sign_in(client, "ada", "wrong password")
    sign_in(client, "ada", PASSWORD)
    client.post("/login", data={"name": "ada", "password": "a json try"}, headers=JSON)
    assert caplog.records, "something was logged at DEBUG level to look through"
    for secret in (PASSWORD, "wrong password", "a json try"):
        assert secret not in caplog.text
