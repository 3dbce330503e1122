"""The reader's judgement on the web page (FastAPI's test client): made on its own page, kept,
shown after its sentence apart from the audit's mark, carried into the note and the notes zip;
the form passes the same guards as every other."""

from __future__ import annotations

import html
import io
import re
import zipfile

from sqlalchemy import select
from test_web import SYNTH, add_analysis, add_paper, client_for, synth_text  # noqa: F401 - the fixture

from reader.store.tables import SentenceJudgement

FLAGGED = SYNTH[1][0]  # "It was trained on one million documents." — [待验证]
PASSED = SYNTH[0][0]


def reviewed(db) -> str:
    pid = add_paper(db, title="Judged paper")
    add_analysis(db, pid, "synthesis", synth_text(), SYNTH)
    return pid


def form_of(html: str) -> dict:
    return {
        name: re.search(rf'name="{name}" value="([^"]*)"', html).group(1)
        for name in ("csrf_token", "sentence", "key", "seen")
    }


def judgements(db) -> list[SentenceJudgement]:
    with db() as s:
        return list(s.scalars(select(SentenceJudgement)))


def test_overruling_a_flag_on_the_page_is_kept_shown_and_in_the_note_and_zip(db, client_for):  # noqa: F811
    client = client_for()
    pid = reviewed(db)
    paper = client.get(f"/paper/{pid}").text
    assert f'href="/paper/{pid}/judge/synthesis-2">Your judgement…</a>' in paper
    assert 'id="judgements"' in paper and "None yet." in paper

    judge = client.get(f"/paper/{pid}/judge/synthesis-2")
    assert judge.status_code == 200
    shown = html.unescape(judge.text)
    assert FLAGGED in shown and "[待验证]" in shown
    assert "Supported — overrule the audit's flag" in shown
    assert "We train on a corpus of news articles." in shown  # the closest passage
    sent = client.post(
        f"/paper/{pid}/judgement",
        data={**form_of(judge.text), "verdict": "supported", "comment": "Sec. 4: <1M> docs"},
        follow_redirects=False,
    )
    assert sent.status_code == 303 and sent.headers["location"] == f"/paper/{pid}#j-synthesis-2"

    [row] = judgements(db)
    assert (row.sentence, row.verdict, row.comment, row.audit_verdict) == (
        FLAGGED,
        "supported",
        "Sec. 4: <1M> docs",
        "unsupported",
    )
    page = client.get(f"/paper/{pid}").text
    badge = re.search(r'<span class="judged judged-supported overrules" id="j-synthesis-2">.*?</span>', page)
    assert badge, "the sentence shows the reader's judgement"
    assert "Reader's judgement: supported" in html.unescape(badge.group(0))
    assert "Sec. 4: &lt;1M&gt; docs" in badge.group(0)
    assert "<1M>" not in page  # escaped
    # the reader's decision is the sentence's state: no [待验证] mark, the audit's flag kept
    # beside it (its tooltip, a dashed line) (issue 47, item 16)
    assert not re.search(r'<mark class="pending">\[待验证\]</mark> ' + re.escape(FLAGGED), page)
    assert re.search(
        r'class="sent verdict-unsupported flagged overruled" id="s-[^"]+"[^>]* data-state="supported"', page
    )
    assert "Your judgements (1)" in page

    note = client.get(f"/paper/{pid}/note.md").text
    assert "> [!warning] 待验证" in note
    assert "> [!note] Reader's judgement: supported — overrules the audit's 待验证 flag" in note
    assert "> Comment: Sec. 4: &lt;1M&gt; docs" in note

    archive = zipfile.ZipFile(io.BytesIO(client.get("/library/notes.zip").content))
    [name] = [n for n in archive.namelist() if n.endswith(".md") and not n.endswith("index.md")]
    assert "Reader's judgement: supported" in archive.read(name).decode()


def test_flagging_a_passed_sentence_then_withdrawing_it(db, client_for):  # noqa: F811
    client = client_for()
    pid = reviewed(db)
    judge = client.get(f"/paper/{pid}/judge/synthesis-1").text
    assert "Not supported — flag it, though the audit passed it" in html.unescape(judge)
    client.post(f"/paper/{pid}/judgement", data={**form_of(judge), "verdict": "unsupported"})
    page = client.get(f"/paper/{pid}").text
    assert 'class="judged judged-unsupported overrules" id="j-synthesis-1"' in page
    note = client.get(f"/paper/{pid}/note.md").text
    assert "> [!note] Reader's judgement: unsupported — overrules the audit, which passed it" in note
    assert f"> {PASSED}" in note

    judge = client.get(f"/paper/{pid}/judge/synthesis-1").text
    assert 'id="judge-withdraw"' in judge and "Kept now: <strong>unsupported</strong>" in judge
    gone = client.post(
        f"/paper/{pid}/judgement", data={**form_of(judge), "withdraw": "1"}, follow_redirects=False
    )
    assert gone.headers["location"] == f"/paper/{pid}#judgements"
    assert judgements(db) == []
    assert "Reader's judgement" not in client.get(f"/paper/{pid}/note.md").text


def test_the_judgement_form_passes_the_guards_of_every_form(db, client_for):  # noqa: F811
    client = client_for()
    pid = reviewed(db)
    form = form_of(client.get(f"/paper/{pid}/judge/synthesis-2").text)

    no_token = client.post(f"/paper/{pid}/judgement", data={**form, "csrf_token": "", "verdict": "supported"})
    assert no_token.status_code == 403 and "reload the page" in no_token.text
    other_site = client.post(
        f"/paper/{pid}/judgement",
        data={**form, "verdict": "supported"},
        headers={"origin": "https://evil.example"},
    )
    assert other_site.status_code == 403
    changed = client.post(f"/paper/{pid}/judgement", data={**form, "key": "0" * 64, "verdict": "supported"})
    assert changed.status_code == 400 and "reload the page" in changed.text
    no_choice = client.post(f"/paper/{pid}/judgement", data=form)
    assert no_choice.status_code == 400 and "supported or unsupported" in no_choice.text
    assert judgements(db) == []

    missing = client.get(f"/paper/{pid}/judge/critique-9")
    assert missing.status_code == 404 and "no such sentence" in missing.text

    # a script on loopback: JSON in, JSON out
    done = client.post(
        f"/paper/{pid}/judgement",
        data={"sentence": "synthesis-2", "verdict": "unsupported", "comment": "agreed"},
        headers={"accept": "application/json"},
    )
    assert done.status_code == 200
    assert done.json()["judgement"]["relation"] == "agrees with the audit's 待验证 flag"


def test_two_tabs_saving_one_sentence_do_not_replace_each_other_silently(db, client_for):  # noqa: F811
    """Both tabs showed the sentence unjudged; the first save is kept, the second is told the
    judgement changed meanwhile (409) instead of replacing it; after a reload it saves."""
    client = client_for()
    pid = reviewed(db)
    first_tab = form_of(client.get(f"/paper/{pid}/judge/synthesis-2").text)
    second_tab = form_of(client.get(f"/paper/{pid}/judge/synthesis-2").text)
    saved = client.post(
        f"/paper/{pid}/judgement",
        data={**first_tab, "verdict": "supported", "comment": "first tab"},
        follow_redirects=False,
    )
    assert saved.status_code == 303
    late = client.post(
        f"/paper/{pid}/judgement", data={**second_tab, "verdict": "unsupported", "comment": "second tab"}
    )
    assert late.status_code == 409, late.text
    assert "changed meanwhile" in late.text and "reload the page" in late.text
    [row] = judgements(db)
    assert (row.verdict, row.comment) == ("supported", "first tab")

    reloaded = client.get(f"/paper/{pid}/judge/synthesis-2").text
    assert "first tab" in reloaded
    again = client.post(
        f"/paper/{pid}/judgement",
        data={**form_of(reloaded), "verdict": "unsupported", "comment": "second tab"},
        follow_redirects=False,
    )
    assert again.status_code == 303
    [row] = judgements(db)
    assert (row.verdict, row.comment) == ("unsupported", "second tab")


def test_simultaneous_first_judgements_on_the_web_are_never_a_500(db, app):
    """Ten posts at once from scripts (no page state: the last writer wins), then ten from the
    same page (one is kept, the others are told it changed meanwhile): never a 500."""
    import json
    import threading
    import urllib.error
    import urllib.request

    from conftest import serving

    from reader.web.app import create_app

    pid = reviewed(db)

    def post(url: str, data: dict) -> tuple[int, str]:
        request = urllib.request.Request(
            url, data=urllib.parse.urlencode(data).encode(), headers={"accept": "application/json"}
        )
        try:
            with urllib.request.urlopen(request, timeout=60) as reply:
                return reply.status, reply.read().decode()
        except urllib.error.HTTPError as exc:
            return exc.code, exc.read().decode()

    def at_once(url: str, forms: list[dict]) -> list[tuple[int, str]]:
        start, results = threading.Barrier(len(forms)), [None] * len(forms)

        def run(i):
            start.wait()
            results[i] = post(url, forms[i])

        threads = [threading.Thread(target=run, args=(i,)) for i in range(len(forms))]
        [t.start() for t in threads]
        [t.join(90) for t in threads]
        return results

    import urllib.parse

    with serving(create_app(app)) as url:
        for n, sid in enumerate(("synthesis-1", "synthesis-2", "synthesis-3")):
            scripts = [
                {"sentence": sid, "verdict": ("supported", "unsupported")[i % 2], "comment": f"script {i}"}
                for i in range(10)
            ]
            replies = at_once(f"{url}/paper/{pid}/judgement", scripts)
            assert all(status == 200 for status, _ in replies), [r for r in replies if r[0] != 200]
            assert len(judgements(db)) == n + 1

        for sid in ("synthesis-1", "synthesis-2", "synthesis-3"):
            post(f"{url}/paper/{pid}/judgement", {"sentence": sid, "withdraw": "1"})
        assert judgements(db) == []
        with urllib.request.urlopen(f"{url}/paper/{pid}/judge/synthesis-2") as reply:
            seen = re.search(r'name="seen" value="([^"]*)"', reply.read().decode()).group(1)
        tabs = [
            {"sentence": "synthesis-2", "seen": seen, "verdict": "supported", "comment": f"tab {i}"}
            for i in range(10)
        ]
        replies = at_once(f"{url}/paper/{pid}/judgement", tabs)
    statuses = sorted(status for status, _ in replies)
    assert statuses == [200] + [409] * 9, replies
    assert all("changed meanwhile" in json.loads(body)["error"] for status, body in replies if status == 409)
    [row] = judgements(db)
    assert row.comment.startswith("tab ")


def test_a_judgement_whose_sentence_a_new_review_dropped_is_shown_on_the_page(db, client_for):  # noqa: F811
    """After "Review again" the judgement vanished from the paper page: it is listed, with its
    sentence and comment, as no longer in the review."""
    from reader.store.db import transaction
    from reader.store.tables import Analysis

    client = client_for()
    pid = reviewed(db)
    form = form_of(client.get(f"/paper/{pid}/judge/synthesis-2").text)
    client.post(
        f"/paper/{pid}/judgement", data={**form, "verdict": "supported", "comment": "Sec. 4 <says> so"}
    )
    with transaction(db) as s:  # reviewed again: the judged sentence is gone
        s.delete(s.scalars(select(Analysis)).one())
    add_analysis(db, pid, "synthesis", f"{PASSED} A sentence of the new review.", [SYNTH[0]])

    page = client.get(f"/paper/{pid}").text
    section = page.split('id="judgements"', 1)[1].split("</section>", 1)[0]
    assert "Your judgements (1)" in section and "None yet" not in section
    assert "No longer in the review (1)" in section
    gone = section.split('class="judgements-gone"', 1)[1]
    assert html.escape(FLAGGED) in gone or FLAGGED in gone
    assert '<strong class="judged-supported">supported</strong>, no longer in the review' in gone
    assert "Sec. 4 &lt;says&gt; so" in gone
    note = client.get(f"/paper/{pid}/note.md").text
    assert "> [!note] Reader's judgement: supported — the sentence is no longer in the review" in note
    assert f"> {FLAGGED}" in note
