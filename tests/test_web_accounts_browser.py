"""Signing in and out of a `reader serve --accounts` server in a real browser (the session's
headless chromium, tests/conftest.py): sent to the sign-in page, a wrong password told, the
right one back on the page asked for with an HttpOnly cookie script cannot read, signed out."""

from __future__ import annotations

from conftest import serving

PASSWORD = "correct horse battery"


def test_signing_in_and_out_through_the_sign_in_page(chromium, migrated_home, tmp_path):
    from reader.config import load_settings
    from reader.facade import Reader
    from reader.web.app import create_app

    home = migrated_home(tmp_path / "home")
    ctx = Reader(load_settings({"READER_HOME": str(home)}))
    ctx.accounts.add("ada", PASSWORD)
    web = create_app(ctx, allowed_hosts=["127.0.0.1"], accounts=True)
    context = chromium.new_context(viewport={"width": 1280, "height": 900})
    try:
        with serving(web) as url:
            tab = context.new_page()
            tab.goto(f"{url}/ask")
            assert tab.url == f"{url}/login?next=%2Fask"
            tab.fill("#login-name", "ada")
            tab.fill("#login-password", "wrong password")
            tab.click("#sign-in")
            assert tab.locator("#login-message").inner_text() == "Wrong name or password."
            assert tab.input_value("#login-name") == "ada"  # the name kept, the password not
            assert tab.input_value("#login-password") == ""

            tab.fill("#login-password", PASSWORD)
            tab.click("#sign-in")
            tab.wait_for_url(f"{url}/ask")
            assert tab.locator("#signed-in-as").inner_text() == "Signed in as ada"
            [cookie] = [c for c in context.cookies() if c["name"] == "reader_account"]
            assert cookie["httpOnly"] and cookie["sameSite"] == "Lax"
            assert "reader_account" not in tab.evaluate("document.cookie")

            tab.click("#sign-out")
            tab.wait_for_url(f"{url}/login")
            assert not [c for c in context.cookies() if c["name"] == "reader_account"]
            tab.goto(f"{url}/library")
            assert tab.url.startswith(f"{url}/login?next=")
    finally:
        context.close()
