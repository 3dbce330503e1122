"""The upload, ask and library pages' smaller promises, over plain HTTP (FastAPI's test client):
"Review again" says what it does and can read afresh, a form from before a restart is offered
again, search snippets mark the words, a near-duplicate upload is named, the answer's badge
follows its status. tests/test_web_browser_small.py checks what the pages' scripts decide."""

from __future__ import annotations

import hashlib
import re

from conftest import SAMPLE_PAPER, make_reader
from sqlalchemy import select
from test_web import PDF_BYTES, FakeReview, add_paper, client_for, page_token  # noqa: F401 - a fixture

from reader.store.db import transaction
from reader.store.tables import Chunk, Paper, Question, ReviewJob

SAME_SITE = {"Origin": "http://testserver"}
JSON = {"Accept": "application/json"}


def form_token(html: str) -> str:
    return re.search(r'name="csrf_token" value="([0-9a-f]+)"', html).group(1)


# ---------------------------------------------------------------- (a) Review again


class ReReview(FakeReview):
    """A FakeReview whose new review replaces the analyses of the one before, as deep_read does."""

    def read_paper(self, db, paper_id, on_progress):
        from sqlalchemy import delete

        from reader.store.tables import Analysis

        with transaction(db) as s:
            s.execute(delete(Analysis).where(Analysis.paper_id == paper_id))
        return super().read_paper(db, paper_id, on_progress)


def uploaded_and_reviewed(client, review) -> str:
    job = client.post(
        "/upload", headers=JSON, files={"files": ("paper.pdf", PDF_BYTES, "application/pdf")}
    ).json()["jobs"][0]
    assert client.app.state.runner.wait(job["id"], 10).status == "done"
    return hashlib.sha256(PDF_BYTES).hexdigest()


def test_review_again_says_what_it_does_offers_a_fresh_read_and_lands_on_its_progress(client_for):  # noqa: F811
    review = ReReview()
    client = client_for(review=review)
    pid = uploaded_and_reviewed(client, review)
    token = page_token(client, f"/paper/{pid}")

    # the paper page's button (no choice sent): nothing queued yet, the choice is explained
    asked = client.post(
        f"/paper/{pid}/review", data={"csrf_token": token}, headers=SAME_SITE, follow_redirects=False
    )
    assert asked.status_code == 303 and asked.headers["location"] == f"/paper/{pid}/review"
    assert len(client.app.state.runner.all()) == 1
    choice = client.get(f"/paper/{pid}/review")
    assert choice.status_code == 200
    text = " ".join(choice.text.split())
    assert "reused from the cache" in text
    assert 'name="cache" value="reuse"' in choice.text and 'name="cache" value="fresh"' in choice.text

    # a fresh read: queued with the cache bypassed, and the page it lands on follows the job
    sent = client.post(
        f"/paper/{pid}/review",
        data={"csrf_token": form_token(choice.text), "cache": "fresh"},
        headers=SAME_SITE,
        follow_redirects=False,
    )
    assert sent.status_code == 303
    job_id = re.fullmatch(r"/upload\?job=(\d+)&read=fresh", sent.headers["location"]).group(1)
    landed = client.get(sent.headers["location"])
    landed_text = " ".join(landed.text.split())
    assert "asking the model afresh" in landed_text and "paper" in landed_text
    assert f'data-follow="{job_id}"' in landed.text  # the page's bar follows this job
    assert client.app.state.runner.wait(job_id, 10).status == "done"
    assert review.fresh == [False, True]

    # reusing the cache, as a script asks for it: the answer says so
    again = client.post(f"/paper/{pid}/review", headers={**SAME_SITE, **JSON}, data={"cache": "reuse"}).json()
    assert "reused" in again["note"]
    assert client.app.state.runner.wait(again["job"]["id"], 10).status == "done"
    assert review.fresh == [False, True, False]


def test_a_fresh_review_asks_the_model_again_where_review_again_reuses_its_answers(reader_env):
    """The queue carries the choice to the worker; the read then skips the LLM cache."""
    from reader.llm.dryrun import dry_run_answer
    from reader.llm.scripted import ScriptedLLM

    llm = ScriptedLLM(dry_run_answer, with_stage=True)
    ctx = make_reader(llm=llm, cache=True)
    ctx.queue.enqueue([SAMPLE_PAPER])
    ctx.queue.work(until_empty=True, poll_s=0.05)
    first = llm.calls
    assert first > 0
    ctx.queue.enqueue([SAMPLE_PAPER], force=True)
    ctx.queue.work(until_empty=True, poll_s=0.05)
    assert llm.calls == first  # every answer came from the cache
    ctx.queue.enqueue([SAMPLE_PAPER], force=True, fresh=True)
    ctx.queue.work(until_empty=True, poll_s=0.05)
    assert llm.calls >= 2 * first  # every prompt was sent to the model again
    with ctx.services.db() as s:
        assert [j.status for j in s.scalars(select(ReviewJob))] == ["done"]


# ---------------------------------------------------------------- (c) a form from before a restart


def test_a_form_from_before_a_restart_is_offered_again_with_what_was_typed(db, client_for):  # noqa: F811
    pid = add_paper(db, title="Wheat under heat")
    before = client_for()
    ask_token = form_token(before.get("/ask").text)
    after = client_for()  # the server restarted: its form tokens are new
    after.cookies = before.cookies

    question = "Which temperature <b>regime</b> is optimal?"
    response = after.post(
        "/ask", data={"question": question, "paper": pid, "csrf_token": ask_token}, headers=SAME_SITE
    )
    assert response.status_code == 403
    text = " ".join(response.text.split())
    assert "server restarted" in text and "nothing was" in text.lower()
    assert 'id="ask-form"' in response.text
    assert "Which temperature &lt;b&gt;regime&lt;/b&gt; is optimal?</textarea>" in response.text
    assert f'<option value="{pid}" selected>' in response.text
    fresh = form_token(response.text)
    assert fresh != ask_token and fresh == form_token(after.get("/ask").text)

    # the upload form: files cannot be kept, so it says to choose them again
    upload = after.post(
        "/upload",
        data={"csrf_token": ask_token},
        files={"files": ("p.pdf", PDF_BYTES, "application/pdf")},
        headers=SAME_SITE,
    )
    assert upload.status_code == 403 and 'id="upload-form"' in upload.text
    assert "choose the files again" in " ".join(upload.text.split())
    assert after.app.state.runner.all() == []

    # deleting: the confirmation again, the paper kept
    deleted = after.post(f"/paper/{pid}/delete", data={"csrf_token": ask_token}, headers=SAME_SITE)
    assert deleted.status_code == 403 and 'id="confirm-delete"' in deleted.text
    assert "server restarted" in " ".join(deleted.text.split())
    with db() as s:
        assert s.get(Paper, pid) is not None

    # from another site, or with no token at all, still the plain refusal: nothing offered
    foreign = after.post(
        "/ask",
        data={"question": question, "csrf_token": ask_token},
        headers={"Origin": "https://evil.example"},
    )
    assert foreign.status_code == 403 and "ask-form" not in foreign.text
    bare = after.post("/ask", data={"question": question}, headers=SAME_SITE)
    assert bare.status_code == 403 and "reload the page" in bare.text and "ask-form" not in bare.text


# ---------------------------------------------------------------- (e) snippets with their match marked


def test_search_snippets_mark_the_words_found_and_escape_the_rest(db, client_for):  # noqa: F811
    pid = add_paper(db, title="Grain yield")
    with transaction(db) as s:
        from reader.store.tables import Analysis

        s.add(
            Analysis(
                paper_id=pid,
                kind="synthesis",
                final_text="The <script>x</script> GRAIN filling rate fell when grain & heat rose.",
            )
        )
    client = client_for()
    html = client.get("/library?q=grain+heat&text=1").text
    row = html.split(f'data-paper="{pid}"')[1].split("</tr>")[0]
    match = re.search(r'<span class="match">(.*?)</span>', row, re.S).group(1)
    assert "<mark>GRAIN</mark>" in match and "<mark>grain</mark>" in match and "<mark>heat</mark>" in match
    assert "&lt;script&gt;x&lt;/script&gt;" in match and "&amp;" in match
    assert "<script>" not in row


# ---------------------------------------------------------------- (f) near-duplicate uploads


def stored_paper(db, pid, title, text, doi=None):
    with transaction(db) as s:
        s.add(Paper(id=pid, title=title, source_path="x.pdf", source_kind="pdf", pages=1, doi=doi))
        s.flush()
        words = text.split()
        for n, start in enumerate(range(0, len(words), 50)):  # 60 words, 10 repeated, as ingest does
            passage = " ".join(words[start : start + 60])
            s.add(Chunk(paper_id=pid, ordinal=n, page_start=1, page_end=1, text=passage))


BODY = " ".join(
    f"In plot {n} the grain filled {n * 7 % 11} days faster under regime {n * 3 % 13}, "
    f"with {n * 17 % 29} kernels per spike and a yield of {n * 31 % 37} tonnes."
    for n in range(120)
)


class VersionReview(FakeReview):
    """Stores the uploaded paper with a title and text (and DOI) chosen by the test."""

    def __init__(self, title, text, doi=None):
        super().__init__()
        self.title, self.text, self.doi = title, text, doi

    def ingest_data(self, ctx, data, label):
        from types import SimpleNamespace

        pid = hashlib.sha256(data).hexdigest()
        stored_paper(ctx.services.db, pid, self.title, self.text, self.doi)
        return SimpleNamespace(paper_id=pid, status="ingested", error="", title=self.title)


def upload_and_wait(client, name, data=PDF_BYTES) -> dict:
    job = client.post("/upload", headers=JSON, files={"files": (name, data, "application/pdf")}).json()[
        "jobs"
    ][0]
    assert client.app.state.runner.wait(job["id"], 10).status == "done"
    return next(j for j in client.get("/api/jobs").json()["jobs"] if j["id"] == job["id"])


def test_a_near_duplicate_upload_is_added_and_named_as_a_version_of_the_stored_paper(db, client_for):  # noqa: F811
    old = "a" * 64
    stored_paper(db, old, "Wheat Grain Filling Under Heat", BODY)
    revised = BODY.replace("Sentence 3 says", "Sentence 3 now says")
    client = client_for(review=VersionReview("Wheat grain filling under heat", revised))
    job = upload_and_wait(client, "v2.pdf")
    assert job["similar"] == {
        "paper_id": old,
        "title": "Wheat Grain Filling Under Heat",
        "reason": "the same title and nearly the same text",
    }
    html = client.get("/upload").text
    row = html.split(f'data-job="{job["id"]}"')[1].split("</tr>")[0]
    assert "Looks like a version of" in row and f'href="/paper/{old}"' in row
    with db() as s:  # still added
        assert s.get(Paper, hashlib.sha256(PDF_BYTES).hexdigest()) is not None


def test_the_same_doi_is_a_version_and_the_same_title_alone_is_not(db, client_for):  # noqa: F811
    stored_paper(db, "b" * 64, "Results", BODY, doi="10.1000/XYZ.1")
    other_text = " ".join(f"Line {n} is about rice paddies and methane {n}." for n in range(200))
    review = VersionReview("Results", other_text)
    client = client_for(review=review)
    assert upload_and_wait(client, "other.pdf")["similar"] is None  # a common title, other text
    review.title, review.doi = "Preprint", "https://doi.org/10.1000/xyz.1"
    job = upload_and_wait(client, "preprint.pdf", PDF_BYTES + b"%v2\n")
    assert job["similar"] == {"paper_id": "b" * 64, "title": "Results", "reason": "the same DOI"}


# ---------------------------------------------------------------- (g) the answer's badge


def stored_answer(db, answer, grounded, reason="") -> int:
    with transaction(db) as s:
        row = Question(
            question="What is measured?",
            answer=answer,
            grounded=grounded,
            grounded_reason=reason,
            route="incorrect",
            confidence=0.1,
            details={"sources": [], "notes": []},
        )
        s.add(row)
        s.flush()
        return row.id


def badge(html: str) -> tuple[str, str]:
    m = re.search(r'<span id="grounded" class="badge ([\w-]+)">([^<]*)</span>', html)
    return m.group(1), m.group(2)


def test_the_answer_badge_follows_the_answer_s_status(db, client_for):  # noqa: F811
    client = client_for()
    found = stored_answer(db, "Grain yield [1].", True)
    unsupported = stored_answer(db, "Grain yield.", False, "1 of 1 sentences unsupported")
    not_found = stored_answer(db, "Not found in the papers.", True, "nothing to check: the answer is that …")
    zh = stored_answer(db, "未在论文中找到。", True)
    withheld = stored_answer(
        db,
        "Not found in the papers.",
        True,
        "nothing to check: the drafted answer was withheld as unsupported",
    )
    assert badge(client.get(f"/ask/{found}").text) == ("ok", "checked against its sources")
    assert badge(client.get(f"/ask/{unsupported}").text) == ("warn", "not fully backed by its sources")
    assert badge(client.get(f"/ask/{not_found}").text) == ("neutral", "not found in the papers")
    assert badge(client.get(f"/ask/{zh}").text) == ("neutral", "not found in the papers")
    assert badge(client.get(f"/ask/{withheld}").text) == ("warn", "an unsupported draft was withheld")
    history = client.get("/ask").text.split('id="history"')[1]
    assert history.count("not found") == 3
