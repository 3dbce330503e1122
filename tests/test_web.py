"""The web app over plain HTTP (FastAPI's test client): pages, escaping and the upload guards.

Rows are written straight into the database here so each page can be checked
alone; tests/test_web_browser.py runs the real pipeline in a browser.
"""

from __future__ import annotations

import dataclasses
import hashlib
import threading
from pathlib import Path
from types import SimpleNamespace

import pytest
from sqlalchemy import select

from reader.store.db import transaction
from reader.store.tables import (
    Analysis,
    AnalysisIteration,
    Paper,
    ReviewJob,
    SentenceVerdict,
    VerdictEvidence,
)
from reader.web import paper_page

HOSTILE = '<script>alert("x")</script><img src=x onerror=alert(1)>'
PDF_BYTES = b"%PDF-1.4\n1 0 obj<<>>endobj\ntrailer<<>>\n%%EOF\n"


def with_stages(review, *args, **kwargs):
    """A Reader (built from `args`, `kwargs`) whose review workers run `review`'s stages in place
    of the pipeline's: the web page's production runner, without PDF parsing or an LLM."""
    from reader.facade import Reader

    app = Reader(*args, **kwargs)

    def read_paper(paper_id, *, on_progress=None, db=None, fresh=False):
        review.fresh.append(fresh)
        return review.read_paper(db or app.services.db, paper_id, on_progress)

    app.services.warm_up = lambda: None
    app.services.ingest_data = lambda data, label: review.ingest_data(app, data, label)
    app.services.read_paper = read_paper
    return app


def _ctx(app, review=None, **changes):
    from reader.facade import Reader

    settings = dataclasses.replace(app.settings, **changes)
    return with_stages(review, settings) if review is not None else Reader(settings)


class FakeReview:
    """Stands in for the pipeline's stages: records what it was given, stores a bare paper,
    reports a stage, then stores a critique and a synthesis (or fails)."""

    def __init__(self, fail: str | None = None):
        self.paths = []
        self.forced = []  # per read: whether its job was queued with force ("Review again")
        self.fresh = []  # per read: whether it was to skip the LLM cache ("Ask the model afresh")
        self.fail = fail
        self.release = threading.Event()
        self.release.set()

    def ingest_data(self, ctx, data, label):
        path = Path(label)
        self.paths.append(path)
        self.release.wait(10)
        paper_id = hashlib.sha256(data).hexdigest()
        with transaction(ctx.services.db) as s:
            s.add(Paper(id=paper_id, title=path.stem, source_path=label, source_kind="pdf", pages=1))
        return SimpleNamespace(paper_id=paper_id, status="ingested", error="", title=path.stem)

    def read_paper(self, db, paper_id, on_progress):
        with db() as s:
            job = s.scalars(select(ReviewJob).where(ReviewJob.paper_id == paper_id)).first()
            self.forced.append(bool((job.summary or {}).get("force")))
        on_progress("audit")
        if self.fail:
            from reader.errors import ReaderError

            raise ReaderError(self.fail.format(path=self.paths[-1].name))
        with transaction(db) as s:
            for kind in ("critique", "synthesis"):
                s.add(Analysis(paper_id=paper_id, kind=kind, final_text="Fine."))


@pytest.fixture
def client_for(app):
    from fastapi.testclient import TestClient

    from reader.web.app import create_app

    made = []

    def build(review=None, **changes):
        web = create_app(_ctx(app, review or FakeReview(), **changes))
        client = TestClient(web)
        client.__enter__()
        made.append(client)
        return client

    yield build
    for client in made:
        client.__exit__(None, None, None)


def page_token(client, path="/upload") -> str:
    """The form token a page gives its forms (posts that want HTML need it)."""
    import re

    return re.search(r'name="csrf_token" value="([0-9a-f]+)"', client.get(path).text).group(1)


def add_paper(db, *, title="A paper", language="en", pid=None) -> str:
    pid = pid or hashlib.sha256(title.encode()).hexdigest()
    with transaction(db) as s:
        s.add(
            Paper(
                id=pid,
                title=title,
                authors=["Ada Lovelace"],
                year=2020,
                source_path="x.pdf",
                source_kind="pdf",
                language=language,
                pages=9,
            )
        )
    return pid


def add_analysis(db, pid, kind, final_text, verdicts, regenerations=0) -> None:
    """verdicts: [(sentence, verdict, [(page_start, page_end, text), ...]), ...]"""
    n_flagged = sum(1 for _, v, _ in verdicts if v == "unsupported")
    with transaction(db) as s:
        analysis = Analysis(
            paper_id=pid,
            kind=kind,
            final_text=final_text,
            flagged_ratio=n_flagged / max(1, len(verdicts)),
            regenerations=regenerations,
            generator_model="gen",
            verifier_model="ver",
        )
        it = AnalysisIteration(
            iteration=regenerations,
            text=final_text.replace(paper_page.MARK, ""),
            n_sentences=len(verdicts),
            n_flagged=n_flagged,
            flagged_ratio=n_flagged / max(1, len(verdicts)),
        )
        for i, (sentence, verdict, evidence) in enumerate(verdicts):
            sv = SentenceVerdict(
                ordinal=i,
                text=sentence,
                verdict=verdict,
                llm_answer="NO" if verdict == "unsupported" else "YES",
            )
            sv.evidence = [
                VerdictEvidence(rank=r, page_start=a, page_end=b, text=t)
                for r, (a, b, t) in enumerate(evidence)
            ]
            it.verdicts.append(sv)
        analysis.iterations.append(it)
        s.add(analysis)


SYNTH = [
    (
        "The model improves accuracy by 0.3% on the test set.",
        "supported",
        [(4, 4, "Table 2 shows a 0.3% gain on the test set.")],
    ),
    (
        "It was trained on one million documents.",
        "unsupported",
        [(2, 3, "We train on a corpus of news articles."), (7, 7, "Appendix: corpus statistics.")],
    ),
    ("The authors release their code.", "unanswered", []),
]


def synth_text() -> str:
    return f"{SYNTH[0][0]} {paper_page.MARK}{SYNTH[1][0]}\n\n{SYNTH[2][0]}"


# ---------------------------------------------------------------- read models (pure)


def test_segments_keep_every_character_and_find_marked_sentences(db):
    pid = add_paper(db)
    add_analysis(db, pid, "synthesis", synth_text(), SYNTH)
    with db() as s:
        view = paper_page.paper_of(s, pid)
    segments = view.analyses[0].segments
    rebuilt = "".join(
        (paper_page.MARK if seg.sentence and seg.sentence.marked else "") + seg.text for seg in segments
    )
    assert rebuilt == synth_text()
    sentences = [seg.sentence for seg in segments if seg.sentence]
    assert [(s.verdict, s.marked) for s in sentences] == [
        ("supported", False),
        ("unsupported", True),
        ("unanswered", False),
    ]
    assert sentences[1].evidence[0].pages == "pp. 2–3"
    assert sentences[0].evidence[0].pages == "p. 4"


def test_only_first_occurrence_is_marked_and_missing_sentences_stay_in_text():
    row = SimpleNamespace(
        ordinal=0,
        text="Same claim.",
        verdict="unsupported",
        llm_answer="NO",
        reasons=[],
        reused=False,
        evidence=[],
    )
    gone = SimpleNamespace(
        ordinal=1,
        text="Not in the text.",
        verdict="supported",
        llm_answer="YES",
        reasons=[],
        reused=False,
        evidence=[],
    )
    text = f"{paper_page.MARK}Same claim. Then Same claim. again."
    segments = paper_page.segment_text(text, [row, gone])
    marked = [seg for seg in segments if seg.sentence and seg.sentence.marked]
    assert len(marked) == 1 and marked[0].text == "Same claim."
    assert "".join(seg.text for seg in segments if not seg.sentence) == " Then Same claim. again."


def test_a_mark_without_a_verdict_is_still_highlighted():
    segments = paper_page.segment_text(f"Fine. {paper_page.MARK}Orphan claim here. Tail.", [])
    flagged = [seg.sentence for seg in segments if seg.sentence]
    assert [(s.text, s.marked) for s in flagged] == [("Orphan claim here.", True)]


def test_a_mark_without_a_verdict_covers_the_whole_sentence_past_abbreviations():
    sentence = "It beats BERT (Fig. 3) by 2.5 points, e.g. on ACL."
    segments = paper_page.segment_text(f"Fine. {paper_page.MARK}{sentence} Tail.", [])
    flagged = [seg.sentence for seg in segments if seg.sentence]
    assert [(s.text, s.marked) for s in flagged] == [(sentence, True)]
    assert [seg.text for seg in segments if not seg.sentence] == ["Fine. ", " Tail."]


def test_no_evidence_message_follows_the_paper_language():
    assert paper_page.no_evidence_message("zh") == "未在原文中找到直接证据"
    assert paper_page.no_evidence_message("en") == "No direct evidence found in the paper"


# ---------------------------------------------------------------- pages


def test_paper_page_highlights_flagged_sentences_with_evidence_and_pages(db, client_for):
    pid = add_paper(db, title="Attention Everywhere")
    add_analysis(db, pid, "synthesis", synth_text(), SYNTH)
    add_analysis(
        db,
        pid,
        "critique",
        "The evaluation is thin.",
        [("The evaluation is thin.", "supported", [(5, 5, "We evaluate on one set.")])],
    )
    html = client_for().get(f"/paper/{pid}").text
    assert html.index('id="synthesis"') < html.index('id="critique"')
    flagged = html.split('class="sent verdict-unsupported flagged"', 1)[1].split("</span></span>")[0]
    assert "[待验证]" in flagged and SYNTH[1][0] in flagged
    assert "No direct evidence found in the paper" in flagged
    assert "pp. 2–3" in flagged and "We train on a corpus of news articles." in flagged
    assert html.count(' flagged"') == 1  # supported/unanswered sentences are not highlighted
    assert 'id="show-all"' in html and f'href="/paper/{pid}/note.md"' in html


def test_chinese_paper_tooltip_is_in_chinese(db, client_for):
    pid = add_paper(db, title="中文论文", language="zh")
    add_analysis(
        db,
        pid,
        "synthesis",
        f"{paper_page.MARK}该方法提升了准确率。",
        [("该方法提升了准确率。", "unsupported", [(3, 3, "实验结果见表2。")])],
    )
    html = client_for().get(f"/paper/{pid}").text
    assert "未在原文中找到直接证据" in html and "p. 3" in html


def test_hostile_text_from_papers_and_llms_is_escaped_everywhere(db, client_for):
    pid = add_paper(db, title=HOSTILE)
    add_analysis(
        db,
        pid,
        "synthesis",
        f"{paper_page.MARK}Claim {HOSTILE} here.",
        [(f"Claim {HOSTILE} here.", "unsupported", [(1, 1, f"Evidence {HOSTILE}")])],
    )
    client = client_for()
    for path in (f"/paper/{pid}", "/library", f"/ask?paper={pid}", "/library?q=%3Cscript%3E"):
        html = client.get(path).text
        assert "<script>alert" not in html and "<img src=x" not in html, path
        assert "&lt;script&gt;alert(" in html, path


def test_library_lists_sorts_and_filters(db, client_for):
    a = add_paper(db, title="Alpha study")
    b = add_paper(db, title="Beta study")
    add_paper(db, title="Gamma notes")
    add_analysis(db, a, "synthesis", synth_text(), SYNTH, regenerations=2)
    add_analysis(db, b, "synthesis", "All good.", [("All good.", "supported", [])])
    with transaction(db) as s:
        s.add(ReviewJob(source_path="b.pdf", paper_id=b, status="running", stage="read"))
    client = client_for()

    def titles(url):
        html = client.get(url).text
        return [chunk.split("</a>")[0].split(">")[-1] for chunk in html.split('<td class="title">')[1:]]

    assert titles("/library?sort=title&order=asc") == ["Alpha study", "Beta study", "Gamma notes"]
    assert titles("/library?sort=flagged&order=desc") == ["Alpha study", "Beta study", "Gamma notes"]
    assert titles("/library?sort=regenerations&order=desc")[0] == "Alpha study"
    assert titles("/library?q=STUDY&sort=title&order=desc") == ["Beta study", "Alpha study"]
    html = client.get("/library?sort=title&order=asc").text
    alpha_row = html.split(f'data-paper="{a}"')[1].split("</tr>")[0]
    assert "reviewed" in alpha_row and "33%" in alpha_row and ">2<" in alpha_row
    assert "running: read" in html.split(f'data-paper="{b}"')[1].split("</tr>")[0]


def test_unknown_paper_is_a_404_page(client_for):
    client = client_for()
    assert client.get("/paper/" + "0" * 64).status_code == 404
    assert client.get("/paper/..%2F..%2Fetc%2Fpasswd").status_code == 404
    response = client.get("/paper/not-a-paper-id")
    assert response.status_code == 404 and "no paper with id" in response.text


def test_no_directory_listing(client_for, reader_env):
    client = client_for()
    client.post("/upload", files={"files": ("p.pdf", PDF_BYTES, "application/pdf")})
    for path in ("/static/", "/static", "/uploads/", "/uploads"):
        response = client.get(path)
        assert response.status_code == 404, path
        assert "paper.js" not in response.text and "upload.js" not in response.text
        assert hashlib.sha256(PDF_BYTES).hexdigest() not in response.text
    assert client.get("/static/style.css").status_code == 200


def test_security_headers(client_for):
    headers = client_for().get("/library").headers
    assert "script-src 'self'" in headers["content-security-policy"]
    assert headers["x-content-type-options"] == "nosniff"


# ---------------------------------------------------------------- uploads


def test_upload_checks_content_not_name(client_for, reader_env):
    review = FakeReview()
    client = client_for(review=review)
    response = client.post(
        "/upload",
        headers={"Accept": "application/json"},
        files={"files": ("paper.pdf", b"<html>not a pdf</html>", "application/pdf")},
    )
    assert response.status_code == 400
    assert "paper.pdf: not a PDF" in response.json()["errors"][0]
    response = client.post(
        "/upload",
        headers={"Accept": "application/json"},
        files={"files": ("notes.txt", PDF_BYTES, "text/plain")},
    )
    assert response.status_code == 200 and response.json()["jobs"][0]["name"] == "notes.txt"
    job = client.app.state.runner.wait(response.json()["jobs"][0]["id"], 10)
    assert job.status == "done" and job.percent == 100
    assert job.paper_id == hashlib.sha256(PDF_BYTES).hexdigest()


def test_upload_names_are_never_paths(client_for, reader_env, tmp_path):
    review = FakeReview()
    client = client_for(review=review)
    hostile_name = "../../../" + "evil<script>.pdf"
    response = client.post(
        "/upload",
        headers={"Accept": "application/json"},
        files={"files": (hostile_name, PDF_BYTES, "application/pdf")},
    )
    job = response.json()["jobs"][0]
    client.app.state.runner.wait(job["id"], 10)
    stored = review.paths[0]
    assert stored.parent == reader_env / "uploads" / hashlib.sha256(PDF_BYTES).hexdigest()
    assert stored.name == "evil_script_.pdf"  # reduced to harmless characters
    assert [p.relative_to(stored.parent) for p in tmp_path.rglob("evil*")] == [Path(stored.name)]
    assert job["name"] == "evil<script>.pdf"  # shown (escaped), never used
    html = client.get("/upload").text
    assert "evil_script_.pdf" in html and "evil<script>" not in html


def test_oversized_upload_gets_a_clear_message(client_for):
    client = client_for(upload_limit_mb=1)
    big = PDF_BYTES + b"0" * (1024 * 1024 + 10)
    response = client.post(
        "/upload",
        headers={"Accept": "application/json"},
        files={"files": ("big.pdf", big, "application/pdf")},
    )
    assert response.status_code == 413
    assert "big.pdf: larger than the upload limit of 1 MB" in response.json()["errors"][0]
    # a request far over the cap is refused from its Content-Length, before parsing
    huge = b"x" * (12 * 1024 * 1024)
    response = client.post("/upload", content=huge, headers={"Content-Type": "application/octet-stream"})
    assert response.status_code == 413 and "limit of 1 MB" in response.text
    # the HTML form path shows the message on the page
    response = client.post(
        "/upload",
        files={"files": ("big.pdf", big, "application/pdf")},
        data={"csrf_token": page_token(client)},
    )
    assert response.status_code == 413 and "larger than the upload limit of 1 MB" in response.text


def test_upload_without_a_file_and_empty_file(client_for):
    client = client_for()
    response = client.post(
        "/upload",
        headers={"Accept": "application/json"},
        files={"files": ("empty.pdf", b"", "application/pdf")},
    )
    assert response.status_code == 400 and "empty.pdf: the file is empty" in response.json()["errors"][0]
    response = client.post("/upload", headers={"Accept": "application/json"}, data={"x": "1"})
    assert response.status_code == 400 and "No file received" in response.json()["errors"][0]


def test_failed_review_is_reported_on_its_job(client_for):
    client = client_for(review=FakeReview(fail="{path}: the PDF has no text layer"))
    job = client.post(
        "/upload",
        headers={"Accept": "application/json"},
        files={"files": ("broken.pdf", PDF_BYTES, "application/pdf")},
    ).json()["jobs"][0]
    done = client.app.state.runner.wait(job["id"], 10)
    assert done.status == "error" and done.error == "broken.pdf: the PDF has no text layer"
    listed = client.get("/api/jobs").json()["jobs"]
    assert listed[0]["status"] == "error" and "no text layer" in listed[0]["error"]


def test_progress_is_visible_while_a_review_runs(client_for):
    review = FakeReview()
    review.release.clear()
    client = client_for(review=review)
    runner = client.app.state.runner
    job = client.post(
        "/upload",
        headers={"Accept": "application/json"},
        files={"files": ("p.pdf", PDF_BYTES, "application/pdf")},
    ).json()["jobs"][0]
    deadline = threading.Event()
    for _ in range(500):
        current = runner.get(job["id"])
        if current.stage.startswith("ingest"):
            break
        deadline.wait(0.01)
    assert current.status == "running" and current.percent == 5
    review.release.set()
    finished = runner.wait(job["id"], 10)
    assert finished.status == "done" and finished.percent == 100


# ---------------------------------------------------------------- access


def test_token_is_required_when_configured(client_for):
    client = client_for(web_token="s3cret-token")
    assert client.get("/library").status_code == 401
    assert client.get("/library", headers={"Authorization": "Bearer wrong"}).status_code == 401
    assert client.get("/library", headers={"Authorization": "Bearer s3cret-token"}).status_code == 200
    response = client.get("/library?token=s3cret-token")
    assert response.status_code == 200 and "reader_token=" in response.headers["set-cookie"]
    assert client.get("/library").status_code == 200  # the cookie carries it from now on


def test_cross_site_posts_are_refused(client_for):
    client = client_for()
    response = client.post(
        "/upload",
        headers={"Origin": "http://evil.example"},
        files={"files": ("p.pdf", PDF_BYTES, "application/pdf")},
    )
    assert response.status_code == 403
    response = client.post(
        "/ask",
        headers={"Origin": "http://testserver"},
        data={"question": "", "csrf_token": page_token(client, "/ask")},
    )
    assert response.status_code == 400 and "Type a question first" in response.text


def test_serve_refuses_remote_binding_without_the_flag():
    from reader.commands.serve import check_bind
    from reader.errors import ConfigError

    assert check_bind("127.0.0.1", False, None) == []
    with pytest.raises(ConfigError, match="--allow-remote"):
        check_bind("0.0.0.0", False, None)
    warnings = check_bind("0.0.0.0", True, None)
    assert any("READER_WEB_TOKEN is not set" in w for w in warnings)


def test_asking_an_empty_library_says_so_on_the_ask_page(client_for):
    client = client_for()
    response = client.post(
        "/ask", data={"question": "What is measured?", "csrf_token": page_token(client, "/ask")}
    )
    assert response.status_code == 400
    assert "the library is empty" in response.text and 'id="ask-form"' in response.text


def test_reader_serve_listens_on_loopback_and_serves_pages(reader_env):
    import os
    import re
    import subprocess
    import sys
    import urllib.request

    env = {**os.environ, "READER_HOME": str(reader_env)}
    proc = subprocess.Popen(
        [sys.executable, "-m", "reader", "serve", "--port", "0"],
        env=env,
        stderr=subprocess.PIPE,
        stdout=subprocess.DEVNULL,
        text=True,
    )
    try:
        line = proc.stderr.readline()
        match = re.search(r"http://127\.0\.0\.1:(\d+)/", line)
        assert match, line
        with urllib.request.urlopen(f"http://127.0.0.1:{match.group(1)}/library", timeout=10) as r:
            assert r.status == 200 and "The library is empty" in r.read().decode()
        request = urllib.request.Request(
            f"http://127.0.0.1:{match.group(1)}/library", headers={"Host": "rebound.example"}
        )
        with pytest.raises(urllib.error.HTTPError) as refused:
            urllib.request.urlopen(request, timeout=10)
        assert refused.value.code == 400  # loopback serves loopback Host names only
    finally:
        proc.terminate()
        proc.wait(10)


def test_reader_serve_refuses_a_public_address_without_the_flag(reader_env):
    from click.testing import CliRunner

    from reader.cli import cli

    result = CliRunner().invoke(cli, ["serve", "--host", "0.0.0.0"])
    assert result.exit_code != 0 and "--allow-remote" in result.output


# ---------------------------------------------------------------- hostile requests

HUGE_ID = "9" * 26  # over any 64-bit integer


@pytest.mark.parametrize(
    "path",
    [
        f"/api/passage/{HUGE_ID}",
        f"/ask/{HUGE_ID}",
        f"/paper/{'0' * 64}/page/{HUGE_ID}.png",
        f"/paper/{'0' * 64}/page/{'9' * 5000}.png",
        "/api/passage/-1",
        "/ask/abc",
    ],
)
def test_an_id_no_row_can_have_is_not_found(client_for, path):
    client = client_for()
    for headers in ({"Accept": "application/json"}, {}):
        response = client.get(path, headers=headers)
        assert response.status_code == 404, (path, response.status_code, response.text[:200])


def test_every_numeric_path_id_is_parsed_within_the_database_range():
    """A new route with an integer in its path gets the same bound (the `id` convertor)."""
    import importlib
    import inspect
    import pkgutil

    import reader.web.routes
    from reader.web.pages import RowId

    numeric = []
    for info in pkgutil.iter_modules(reader.web.routes.__path__):
        module = importlib.import_module(f"reader.web.routes.{info.name}")
        for route in module.router.routes:
            signature = inspect.signature(route.endpoint, eval_str=True)
            for name, convertor in route.param_convertors.items():
                if signature.parameters[name].annotation is int:
                    numeric.append(route.path)
                    assert isinstance(convertor, RowId), f"{route.path}: {name} is parsed without a bound"
    assert len(numeric) >= 3, numeric  # passages, questions, page numbers


def test_a_chunked_upload_over_the_limit_gets_the_limit_message(app):
    """Without a Content-Length the body is counted as it streams in: past the cap the answer
    is the 413 limit message, not a parser's 400."""
    import httpx
    from conftest import serving

    from reader.web.app import create_app

    web = create_app(_ctx(app, FakeReview(), upload_limit_mb=1))
    boundary = "b0undary"

    def body(files_mb=14):  # the default, 14 MB, is over the request cap of 10 files of 1 MB
        yield (
            f'--{boundary}\r\nContent-Disposition: form-data; name="files"; filename="big.pdf"\r\n'
            f"Content-Type: application/pdf\r\n\r\n"
        ).encode() + PDF_BYTES
        for _ in range(files_mb):
            yield b"0" * (1024 * 1024)
        yield f"\r\n--{boundary}--\r\n".encode()

    with serving(web) as url:
        for accept in ("application/json", "text/html"):
            response = httpx.post(
                f"{url}/upload",
                content=body(),
                headers={
                    "Content-Type": f"multipart/form-data; boundary={boundary}",
                    "Accept": accept,
                    "Origin": url,
                },
                timeout=30,
            )
            assert response.status_code == 413, response.text[:300]
            assert "larger than the limit of 1 MB" in response.text
            assert "READER_UPLOAD_LIMIT_MB" in response.text
        # under the request cap, one file over the per-file limit gets the per-file message
        response = httpx.post(
            f"{url}/upload",
            content=body(files_mb=2),
            headers={
                "Content-Type": f"multipart/form-data; boundary={boundary}",
                "Accept": "application/json",
                "Origin": url,
            },
            timeout=30,
        )
        assert response.status_code == 413
        assert response.json()["errors"] == [
            "big.pdf: larger than the upload limit of 1 MB (set READER_UPLOAD_LIMIT_MB to change it)."
        ]


def _ipv6_loopback() -> bool:
    import socket

    try:
        with socket.socket(socket.AF_INET6) as sock:
            sock.bind(("::1", 0))
        return True
    except OSError:
        return False


@pytest.mark.parametrize(
    "host, also_sent",
    [
        ("127.0.0.2", []),
        ("127.1", ["127.0.0.1"]),  # what a browser sends for http://127.1:port/
        pytest.param(
            "::1",
            ["localhost"],
            marks=pytest.mark.skipif(not _ipv6_loopback(), reason="no IPv6 loopback here"),
        ),
    ],
)
def test_reader_serve_answers_at_the_loopback_address_it_prints(reader_env, host, also_sent):
    import os
    import re
    import subprocess
    import sys
    import urllib.error
    import urllib.request

    env = {**os.environ, "READER_HOME": str(reader_env)}
    proc = subprocess.Popen(
        [sys.executable, "-m", "reader", "serve", "--host", host, "--port", "0"],
        env=env,
        stderr=subprocess.PIPE,
        stdout=subprocess.DEVNULL,
        text=True,
    )
    try:
        line = proc.stderr.readline()
        match = re.search(r"(http://(\S+?):(\d+)/)", line)
        assert match, line
        url, port = match.group(1), match.group(3)
        with urllib.request.urlopen(f"{url}library", timeout=10) as r:
            assert r.status == 200 and "The library is empty" in r.read().decode()
        for sent in also_sent:
            request = urllib.request.Request(f"{url}library", headers={"Host": f"{sent}:{port}"})
            with urllib.request.urlopen(request, timeout=10) as r:
                assert r.status == 200
        request = urllib.request.Request(f"{url}library", headers={"Host": f"rebound.example:{port}"})
        with pytest.raises(urllib.error.HTTPError) as refused:
            urllib.request.urlopen(request, timeout=10)
        assert refused.value.code == 400  # still loopback names only (no DNS rebinding)
    finally:
        proc.terminate()
        proc.wait(10)


def test_only_numeric_loopback_addresses_and_localhost_count_as_loopback():
    from reader.commands.serve import check_bind
    from reader.errors import ConfigError
    from reader.web.security import is_loopback

    for host in ("127.0.0.1", "127.0.0.2", "127.1", "::1", "0:0:0:0:0:0:0:1", "localhost", "LOCALHOST"):
        assert is_loopback(host), host
    for host in (
        "127.evil.example",
        "127.0.0.1.nip.io",
        "0.0.0.0",
        "10.0.0.1",
        "::",
        "",
        "localhost.example",
    ):
        assert not is_loopback(host), host
    with pytest.raises(ConfigError, match="--allow-remote"):
        check_bind("127.evil.example", False, None)  # a name: it resolves wherever DNS says


# ---- the upload page's time left ----------------------------------------------------------


def a_job(status, *, percent=0, started=None, finished=None, job_id="1"):
    from reader.web.jobs import JobProgress

    return JobProgress(
        id=job_id, name="p.pdf", status=status, percent=percent, started=started, finished_at=finished
    )


NOW = 100_000.0


def finished_in(*seconds):
    """Done jobs that took these many seconds, one after the other, the last just now."""
    jobs, end = [], NOW - 20
    for n, took in enumerate(reversed(seconds)):
        jobs.append(a_job("done", percent=100, started=end - took, finished=end, job_id=f"d{n}"))
        end -= took
    return jobs


def test_time_left_is_the_finished_papers_mean_for_each_paper_left():
    from reader.web.progress import batch_summary, seconds_left

    # 5 papers: 3 done (100, 120 and 110 s), the fourth 20 s in at 40%, the fifth queued: the
    # fourth needs about 110 - 20 s more and the fifth 110 s (the bar said "about 5 s left")
    batch = finished_in(100, 120, 110) + [
        a_job("running", percent=40, started=NOW - 20, job_id="r"),
        a_job("queued", job_id="q"),
    ]
    assert seconds_left(batch, NOW) == 200
    assert batch_summary(batch, NOW) == {
        "percent": 68,
        "done": 3,
        "total": 5,
        "text": "3 of 5 reviewed · 68% · about 3 min left",
        "head": "3 of 5 reviewed · 68%",
        "left_s": 200.0,
    }
    # a failed paper counts as done on the bar, but its time is no review's time
    failed = a_job("error", started=NOW - 1000, finished=NOW - 999, job_id="e")
    assert seconds_left([*batch, failed], NOW) == 200
    # a paper running past the mean: its own pace (150 s at 75%: 200 s in all, 50 s more)
    late = finished_in(100) + [a_job("running", percent=75, started=NOW - 150, job_id="r")]
    assert seconds_left(late, NOW) == 50


def test_time_left_before_the_batch_has_a_finished_paper():
    from reader.web.progress import batch_summary, seconds_left

    first = [a_job("running", percent=10, started=NOW - 30, job_id="r"), a_job("queued", job_id="q")]
    # earlier reviews on the queue stand in for the batch's own: 200 s each
    assert seconds_left(first, NOW, history=finished_in(200, 200)) == 170 + 200
    # none anywhere: the running paper's own pace (30 s for 10%: 300 s in all)
    assert seconds_left(first, NOW) == 270 + 300
    early = [a_job("running", percent=1, started=NOW - 2, job_id="r")]
    assert seconds_left(early, NOW) is None
    assert batch_summary(early, NOW)["text"] == "0 of 1 reviewed · 1% · estimating the time left…"
    assert batch_summary(finished_in(5, 7), NOW)["text"] == "All 2 reviews finished."


def test_the_jobs_api_sums_up_the_batch_the_page_follows(db, client_for):
    from datetime import UTC, datetime, timedelta

    now = datetime.now(UTC)
    with transaction(db) as s:
        for n, took in enumerate((200, 220, 210)):
            end = now - timedelta(seconds=60 * (3 - n))  # a mean of 210 s
            s.add(
                ReviewJob(
                    source_path=f"done{n}.pdf",
                    status="done",
                    queued_at=end - timedelta(seconds=took + 1),
                    started_at=end - timedelta(seconds=took),
                    finished_at=end,
                )
            )
        s.add(
            ReviewJob(
                source_path="running.pdf",
                status="running",
                queued_at=now - timedelta(seconds=30),
                started_at=now - timedelta(seconds=20),
                worker="elsewhere:1",
                lease_until=now + timedelta(hours=1),
            )
        )
    client = client_for()
    jobs = client.get("/api/jobs").json()
    assert "batch" not in jobs
    ids = {j["name"]: j["id"] for j in jobs["jobs"]}
    done = next(j for j in jobs["jobs"] if j["name"] == "done0.pdf")
    assert round(done["finished_at"] - done["started"]) == 200  # a finished job keeps its times
    followed = ",".join(ids[name] for name in ("done0.pdf", "done1.pdf", "done2.pdf", "running.pdf"))
    batch = client.get(f"/api/jobs?batch={followed},x,../1").json()["batch"]
    assert batch["done"] == 3 and batch["total"] == 4
    assert batch["text"] == "3 of 4 reviewed · 75% · about 3 min left"  # 210 - 20 s
    # only the running one followed: the queue's finished reviews give the pace
    alone = client.get(f"/api/jobs?batch={ids['running.pdf']}").json()["batch"]
    assert alone["text"] == "0 of 1 reviewed · 1% · about 3 min left"
