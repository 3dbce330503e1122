"""Cross-site writes and the access cookie (issue 15, item 7), over FastAPI's test client.

The rule for POSTs (docs/guide/web.md, "Writes"): an Origin, when sent, must be this
server; else a Referer, when sent, must be; and then the request must carry the
access token itself (Bearer or ?token=), or the page's per-session form token,
or — a script on a server without an access token — ask for JSON.
"""

from __future__ import annotations

import dataclasses
import hashlib
import hmac
import re

import pytest
from test_web import FakeReview, with_stages

PDF_BYTES = b"%PDF-1.4\n1 0 obj<<>>endobj\ntrailer<<>>\n%%EOF\n"
TOKEN = "s3cret-token"
JSON = {"Accept": "application/json"}
FOREIGN_REFERER = {"Referer": "http://evil.example/attack.html"}


@pytest.fixture
def web(app):
    """build(base_url=..., **settings) -> TestClient over a fresh app (with .review)."""
    from fastapi.testclient import TestClient

    from reader.web.app import create_app

    made = []

    def build(base_url="http://testserver", **changes):
        review = FakeReview()
        ctx = with_stages(review, dataclasses.replace(app.settings, **changes))
        client = TestClient(create_app(ctx), base_url=base_url)
        client.__enter__()
        client.review = review
        client.home = ctx.settings.home
        made.append(client)
        return client

    yield build
    for client in made:
        client.__exit__(None, None, None)


def form_token(client, path="/ask", **kwargs) -> str:
    html = client.get(path, **kwargs).text
    match = re.search(r'<input type="hidden" name="csrf_token" value="([0-9a-f]{64})">', html)
    assert match, f"no form token on {path}"
    return match.group(1)


def upload_file():
    return {"files": ("p.pdf", PDF_BYTES, "application/pdf")}


def nothing_kept(client):
    assert client.app.state.runner.all() == []
    assert client.review.paths == []
    uploads = client.home / "uploads"
    assert not uploads.exists() or not any(uploads.iterdir())


def cookie_header(response, name: str) -> str:
    found = [c for c in response.headers.get_list("set-cookie") if c.startswith(name + "=")]
    assert len(found) == 1, response.headers.get_list("set-cookie")
    return found[0]


# ---------------------------------------------------------------- Origin and Referer


def test_foreign_referer_without_origin_is_refused(web):
    client = web()
    # the scripts' way in (JSON, no form token) is closed to another site's page
    response = client.post("/upload", headers={**FOREIGN_REFERER, **JSON}, files=upload_file())
    assert response.status_code == 403
    assert response.json()["error"] == "Refused a request from another site (http://evil.example)."
    response = client.post("/ask", headers={**FOREIGN_REFERER, **JSON}, data={"question": "q"})
    assert response.status_code == 403
    # and so is the forms' way, even with a valid form token
    token = form_token(client, "/upload")
    for headers in (FOREIGN_REFERER, {**FOREIGN_REFERER, **JSON}):
        response = client.post("/upload", headers=headers, files=upload_file(), data={"csrf_token": token})
        assert response.status_code == 403, headers
        assert "evil.example" in response.text
        response = client.post(
            "/ask", headers=headers, data={"question": "What is measured?", "csrf_token": token}
        )
        assert response.status_code == 403, headers
    nothing_kept(client)


def test_look_alike_referers_are_foreign(web):
    client = web()
    token = form_token(client)
    for referer in (
        "http://testserver.evil.example/ask",
        "http://testserver:8080/ask",
        "http://testserver@evil.example/ask",
        "not a url",
        "",
    ):
        response = client.post(
            "/ask", headers={"Referer": referer}, data={"question": "q", "csrf_token": token}
        )
        assert response.status_code == 403, referer


def test_foreign_or_null_origin_is_refused_even_with_a_same_origin_referer(web):
    client = web()
    token = form_token(client, "/upload")
    for origin in ("http://evil.example", "null", "http://testserver.evil.example"):
        response = client.post(
            "/upload",
            files=upload_file(),
            data={"csrf_token": token},
            headers={"Origin": origin, "Referer": "http://testserver/upload"},
        )
        assert response.status_code == 403, origin
    nothing_kept(client)


def test_same_origin_referer_is_accepted(web):
    client = web()
    token = form_token(client, "/upload")
    referer = {"Referer": "http://testserver/upload"}
    response = client.post(
        "/upload", headers={**referer, **JSON}, files=upload_file(), data={"csrf_token": token}
    )
    assert response.status_code == 200 and response.json()["jobs"][0]["name"] == "p.pdf"
    response = client.post("/upload", headers={**referer, **JSON}, files=upload_file())
    assert response.status_code == 200  # a script on the page: JSON, same-origin, no token
    response = client.post("/upload", headers=referer, files=upload_file(), data={"csrf_token": token})
    assert response.status_code == 200 and 'id="upload-form"' in response.text
    response = client.post(
        "/ask", headers={"Referer": "http://testserver/ask"}, data={"question": "", "csrf_token": token}
    )
    assert response.status_code == 400 and "Type a question first" in response.text


# ---------------------------------------------------------------- the pages' form token


def test_the_forms_carry_a_per_session_token(web):
    client = web()
    token = form_token(client, "/upload")
    assert form_token(client, "/ask") == token  # one per session
    assert client.cookies.get("reader_session") not in (None, token)
    assert form_token(web(), "/ask") != token  # another browser, another token
    # the page without a form sets no session cookie
    assert "reader_session" not in web().get("/library").headers.get("set-cookie", "")


def test_form_post_without_the_page_token_is_refused(web):
    client = web()
    form_token(client, "/upload")  # the session exists, the post just lacks its token
    same_site = {"Origin": "http://testserver"}
    response = client.post("/upload", headers=same_site, files=upload_file())
    assert response.status_code == 403 and "reload the page" in response.text
    response = client.post("/ask", headers=same_site, data={"question": "What is measured?"})
    assert response.status_code == 403 and "reload the page" in response.text
    response = client.post(
        "/ask", headers=same_site, data={"question": "What is measured?", "csrf_token": "0" * 64}
    )
    assert response.status_code == 403
    # neither header and no token: what an old browser's forged form would look like
    response = client.post("/upload", files=upload_file())
    assert response.status_code == 403
    nothing_kept(client)


def test_a_token_from_another_session_is_refused(web):
    mine, theirs = web(), web()
    stolen = form_token(theirs, "/ask")
    form_token(mine, "/ask")
    response = mine.post("/ask", data={"question": "", "csrf_token": stolen})
    assert response.status_code == 403
    fresh = web()  # no session cookie at all
    response = fresh.post("/ask", data={"question": "", "csrf_token": stolen})
    assert response.status_code == 403


def test_the_session_cookie_is_httponly_lax_and_secure_over_https(web):
    response = web().get("/upload")
    cookie = cookie_header(response, "reader_session").lower()
    assert "httponly" in cookie and "samesite=lax" in cookie and "path=/" in cookie
    assert "secure" not in cookie
    cookie = cookie_header(web(base_url="https://testserver").get("/upload"), "reader_session").lower()
    assert "; secure" in cookie


# ---------------------------------------------------------------- scripts (JSON API)


def test_json_posts_without_origin_or_referer_work_on_a_server_without_a_token(web):
    client = web()
    # ask first: once the upload's review has run, the library is no longer empty
    response = client.post("/ask", headers=JSON, data={"question": "What is measured?"})
    assert response.status_code == 400 and "library is empty" in response.json()["error"]
    response = client.post("/upload", headers=JSON, files=upload_file())
    assert response.status_code == 200 and len(response.json()["jobs"]) == 1


def test_with_an_access_token_scripts_send_it_and_pages_send_their_form_token(web):
    client = web(web_token=TOKEN)
    bearer = {"Authorization": f"Bearer {TOKEN}", **JSON}
    response = client.post("/upload", headers=bearer, files=upload_file())
    assert response.status_code == 200
    assert client.post(f"/upload?token={TOKEN}", headers=JSON, files=upload_file()).status_code == 200
    # now the cookie is set; a post carried by the cookie alone is a browser's: it needs the form
    response = client.post("/upload", headers=JSON, files=upload_file())
    assert response.status_code == 403 and "csrf_token" in response.json()["error"]
    token = form_token(client, "/upload")
    response = client.post("/upload", headers=JSON, files=upload_file(), data={"csrf_token": token})
    assert response.status_code == 200
    # the upload page's script: the cookie and a same-origin Origin (browsers send it on POSTs)
    response = client.post("/upload", headers={**JSON, "Origin": "http://testserver"}, files=upload_file())
    assert response.status_code == 200
    # and a foreign Referer is refused whatever the credential
    response = client.post("/upload", headers={**bearer, **FOREIGN_REFERER}, files=upload_file())
    assert response.status_code == 403


# ---------------------------------------------------------------- the access cookie


def test_the_access_cookie_holds_a_derived_value_not_the_token(web):
    client = web(web_token=TOKEN)
    response = client.get(f"/library?token={TOKEN}")
    assert response.status_code == 200
    cookie = cookie_header(response, "reader_token")
    value = cookie.split(";", 1)[0].split("=", 1)[1]
    assert TOKEN not in cookie
    assert value == hmac.new(TOKEN.encode(), b"reader-session", hashlib.sha256).hexdigest()
    attributes = [a.strip().lower() for a in cookie.split(";")[1:]]
    assert "httponly" in attributes and "samesite=strict" in attributes
    assert "secure" not in attributes  # plain http: a Secure cookie would never come back
    assert client.get("/library").status_code == 200  # the cookie lets the browser in
    # the raw token in the cookie (what older versions stored) is not accepted
    client.cookies.clear()
    client.cookies.set("reader_token", TOKEN)
    assert client.get("/library").status_code == 401


def test_the_access_cookie_is_secure_over_https(web):
    client = web(base_url="https://testserver", web_token=TOKEN)
    response = client.get(f"/library?token={TOKEN}")
    attributes = [a.strip().lower() for a in cookie_header(response, "reader_token").split(";")]
    assert "secure" in attributes and "httponly" in attributes and "samesite=strict" in attributes
    assert client.get("/library").status_code == 200
    token = form_token(client, "/ask")
    response = client.post(
        "/ask", headers={"Origin": "https://testserver"}, data={"question": "", "csrf_token": token}
    )
    assert response.status_code == 400 and "Type a question first" in response.text


# ---------------------------------------------------------------- in a real browser


@pytest.fixture
def browser_and_server(app, chromium):
    """The session's chromium, and the app on a loopback port (skipped without chromium, as
    tests/test_web_browser.py is); the contexts the test opens are closed after it."""
    from conftest import serving

    from reader.web.app import create_app

    review = FakeReview()
    web_app = create_app(with_stages(review, app.settings), allowed_hosts=["127.0.0.1", "localhost"])
    before = set(chromium.contexts)
    with serving(web_app) as url:
        try:
            yield chromium, url, web_app, review
        finally:
            for context in set(chromium.contexts) - before:
                context.close()


def serving(html: str):
    """A Playwright route handler answering with this page."""
    return lambda route: route.fulfill(status=200, content_type="text/html", body=html)


def test_a_forged_form_on_another_site_is_refused_in_chromium(browser_and_server):
    browser, url, web_app, review = browser_and_server
    page = browser.new_context().new_page()
    page.goto(f"{url}/ask")  # the victim has the page open: a session cookie exists
    assert page.locator('input[name="csrf_token"]').count() == 1
    attack = "http://localhost:9/attack.html"  # another site (other host and port)
    # with no-referrer the forged post carries `Origin: null`, without it the attacker's origin
    cases = [
        ("/ask", "application/x-www-form-urlencoded", "no-referrer", "null"),
        ("/upload", "multipart/form-data", "no-referrer", "null"),
        ("/ask", "application/x-www-form-urlencoded", "unsafe-url", "http://localhost:9"),
        ("/upload", "multipart/form-data", "unsafe-url", "http://localhost:9"),
    ]
    for action, enctype, policy, seen_as in cases:
        html = (
            f'<meta name="referrer" content="{policy}">'
            f'<form method="post" action="{url}{action}" enctype="{enctype}">'
            f'<input name="question" value="forged"><input name="files" value="x"></form>'
            f"<script>document.forms[0].submit()</script>"
        )
        page.route(attack, serving(html))
        with page.expect_navigation(url=f"{url}{action}"):
            page.goto(attack)
        assert f"Refused a request from another site ({seen_as})." in page.content(), policy
        page.unroute(attack)
    assert review.paths == [] and web_app.state.runner.all() == []
    # the page's own form still works in the same browser
    page.goto(f"{url}/ask")
    page.fill("#question", "What is measured?")
    page.click("#ask-button")
    failed = page.locator("#ask-failed")  # the page's script posts to /api/ask and polls
    failed.wait_for(state="visible")
    assert "the library is empty" in failed.inner_text()
