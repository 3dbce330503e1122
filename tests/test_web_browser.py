"""The web app in a real browser: headless Debian chromium driven by Playwright.

The app is served on 127.0.0.1 by uvicorn in a thread, over the real pipeline
(PDF ingest, index, deep read, audit, CRAG) with a scripted LLM and a hashing
embedder, so no model is loaded and nothing leaves the machine.
"""

from __future__ import annotations

import dataclasses
import hashlib
import re
import shutil
import time
from pathlib import Path
from types import SimpleNamespace

import pytest
from conftest import SAMPLE_PAPER, SHARED_PAPERS, make_reader, serving

from reader.web import library, paper_page
from reader.web import pdf as pdf_pages
from reader.web.jobs import upload_file_name

# a shared paper when ../shared is here, else the project's 2-page sample: the
# page checks below hold for either
PAPER = next((p for p in [SHARED_PAPERS / "acl2007_P07-1088.pdf"] if p.exists()), SAMPLE_PAPER)
FABRICATED = "The authors trained the system on forty million lunar photographs."
HOSTILE = '<script>window.__pwned = 1</script><img src=x onerror="window.__pwned = 2">'
UPLOAD_LIMIT_MB = 1
REVIEW_TIMEOUT_S = 240
SCREENSHOT_COPY = Path("/tmp/reader_paper_page.png")


def scripted_answer(prompt: str, stage: str) -> str:
    """The dry-run LLM's answers, plus one sentence the paper cannot support in every
    critique and synthesis (and every rewrite of one), so the audit has something to flag."""
    from reader.llm.dryrun import dry_run_answer

    answer = dry_run_answer(prompt, stage)
    if stage.removeprefix("regenerate-") in ("critique", "synthesis"):
        answer = f"{answer}\n\n{FABRICATED}"
    return answer


@pytest.fixture(scope="module")
def served(tmp_path_factory, migrated_home):
    """The web app on a free loopback port, over a private READER_HOME."""

    from reader.config import load_settings
    from reader.llm.scripted import ScriptedLLM
    from reader.web.app import create_app

    home = migrated_home(tmp_path_factory.mktemp("web_home"))
    settings = dataclasses.replace(load_settings({"READER_HOME": str(home)}), upload_limit_mb=UPLOAD_LIMIT_MB)
    ctx = make_reader(
        settings=settings,
        # a writer that takes a moment, as a real one does: the upload page polls
        # once a second, and a review over in under a second shows only its end (a call per
        # heading: the shared paper's review takes about 20 s at 0.5 s a call)
        llm=ScriptedLLM(scripted_answer, model="scripted-writer", latency_s=0.5, with_stage=True),
        verifier=ScriptedLLM(scripted_answer, model="scripted-checker", with_stage=True),
    )
    web = create_app(ctx, allowed_hosts=["127.0.0.1", "localhost"])
    with serving(web) as url:
        yield SimpleNamespace(url=url, ctx=ctx, app=web)


@pytest.fixture
def page(chromium):
    context = chromium.new_context(viewport={"width": 1280, "height": 1000})
    page = context.new_page()
    dialogs = []
    page.on("dialog", lambda d: (dialogs.append(d.message), d.dismiss()))
    page.dialogs = dialogs
    yield page
    context.close()


def test_upload_review_read_and_ask(served, page, tmp_path):
    # Upload: pick the file; the page sends it and shows the review's progress live.
    page.goto(f"{served.url}/upload")
    page.set_input_files("#file-input", str(PAPER))
    row = page.locator("#jobs tbody tr").first
    row.wait_for()
    assert PAPER.name in row.locator(".job-name").inner_text()
    page.locator("#upload-messages .message.info", has_text="1 paper queued for review.").wait_for()
    # the button after the files went: it opens the picker again, never the old false error
    with page.expect_file_chooser() as chooser:
        page.click("#upload-button")
    assert chooser.value is not None
    overall = page.locator("#overall")
    overall.wait_for(state="visible")
    stages_seen, overall_seen = set(), set()
    started = time.monotonic()
    deadline = started + REVIEW_TIMEOUT_S
    while time.monotonic() < deadline:
        stages_seen.add(row.locator(".job-stage").inner_text())
        overall_seen.add(page.locator("#overall-text").inner_text())
        status = row.locator(".job-status").inner_text()
        if status.startswith(("done", "error")):
            break
        page.wait_for_timeout(100)
    assert status == "done", f"review did not finish: {status!r}"
    print(
        f"\nupload to reviewed, seen in the page: {time.monotonic() - started:.1f} s "
        f"({PAPER.name}, scripted LLM, hashing embedder); stages: {len(stages_seen)}"
    )
    assert row.locator("progress").get_attribute("value") == "100"
    assert any(s.startswith(("ingest", "read")) for s in stages_seen), stages_seen
    assert any("reviewed ·" in t for t in overall_seen), overall_seen
    page.locator("#overall-text", has_text="The review finished.").wait_for()
    assert page.locator(".message.error").count() == 0

    # The same file again: the page says it is in the library, links it, offers a new review.
    page.set_input_files("#file-input", str(PAPER))
    known = page.locator("#upload-messages .known")
    known.wait_for()
    paper_id = hashlib.sha256(PAPER.read_bytes()).hexdigest()
    assert "already in the library" in known.inner_text()
    assert known.locator("a").get_attribute("href") == f"/paper/{paper_id}"
    assert known.locator("button.review-again").is_visible()
    assert page.locator("#jobs tbody tr").count() == 1  # no second review was started
    assert page.locator(".message.error").count() == 0

    # Library: the paper is listed with its audit figures, authors and year.
    page.goto(f"{served.url}/library")
    lib_row = page.locator(f'tr[data-paper="{paper_id}"]')
    assert lib_row.locator(".status").inner_text() == "reviewed"
    assert lib_row.locator(".authors").inner_text() != ""

    # All notes as one zip.
    with page.expect_download() as download:
        page.click("#export-zip")
    import zipfile

    with zipfile.ZipFile(download.value.path()) as archive:
        names = archive.namelist()
        notes = [n for n in names if n.endswith(".md")]
        assert "reader-notes/index.md" in notes and len(notes) == 2, names
        assert any(n.endswith(".csv") for n in names) and any(n.endswith(".png") for n in names), names
        note_text = archive.read(next(n for n in notes if not n.endswith("index.md"))).decode()
    assert f"source: {PAPER.name}" in note_text  # the uploaded name, not uploads/<sha256>.pdf

    # Paper page: the unsupported sentence is highlighted; hovering shows the tooltip.
    row_link = lib_row.locator("td.title a")
    row_link.click()
    page.wait_for_url(f"**/paper/{paper_id}")
    flagged_list = page.locator("#flagged-list")
    assert re.match(r"Flagged sentences \(\d+\)", flagged_list.locator("h2").inner_text())
    assert "to be verified" in flagged_list.inner_text()
    flagged = page.locator(".sent.flagged", has_text=FABRICATED).first
    assert flagged.locator("mark.pending").inner_text() == "[待验证]"
    tip = flagged.locator(".tip")
    assert flagged.get_attribute("aria-describedby") == tip.get_attribute("id")
    assert not tip.is_visible()
    # the page image is there beside the analyses
    image = page.locator("#page-image")
    image.wait_for()
    assert page.wait_for_function("() => document.getElementById('page-image').naturalWidth > 0")
    flagged.scroll_into_view_if_needed()
    flagged.hover()
    tip.wait_for(state="visible")
    tip_text = tip.inner_text()
    assert "No direct evidence found in the paper" in tip_text
    assert re.search(r"\bpp?\. \d+", tip_text), tip_text
    shot = tmp_path / "paper_page.png"
    page.screenshot(path=str(shot), full_page=False)
    shutil.copyfile(shot, SCREENSHOT_COPY)
    print(f"\npaper page screenshot: {shot} (copy: {SCREENSHOT_COPY})")

    # A page reference in the tooltip opens that page with the passage highlighted over its words.
    link = tip.locator("a.ev-page").first
    passage, page_no = int(link.get_attribute("data-passage")), int(link.get_attribute("data-page"))
    link.click()
    check_highlight(page, served.ctx, passage)
    # a page the passage is on (check_highlight: the one holding most of it, with "continued from")
    assert page_no in {rect[0] for rect in pdf_pages.passage_box(served.ctx.library, passage).rects}
    page.keyboard.press("Escape")  # the link had the focus, which keeps its tooltip open

    # A click pins the tooltip, so it stays when the pointer leaves; Escape closes it.
    page.mouse.move(0, 0)
    tip.wait_for(state="hidden")
    flagged.click()
    page.mouse.move(0, 0)
    assert tip.is_visible()
    page.keyboard.press("Escape")
    tip.wait_for(state="hidden")

    # Only flagged sentences are in the Tab order until every verdict is shown.
    supported = page.locator(".sent.verdict-supported").first
    assert supported.get_attribute("tabindex") == "-1" and flagged.get_attribute("tabindex") == "0"
    before = supported.evaluate("e => getComputedStyle(e).backgroundColor")
    page.check("#show-all")
    after = supported.evaluate("e => getComputedStyle(e).backgroundColor")
    assert before != after and supported.get_attribute("tabindex") == "0"
    supported.hover()
    # it says how it was decided: by a model, restated by rule, or the tool's own finding
    heads = ("Supported by the paper · checked by", "Restated from the paper", "The tool's own finding")
    assert any(head in supported.locator(".tip").inner_text() for head in heads)

    # The Markdown note and the PDF download, the PDF under its original name.
    with page.expect_download() as download:
        page.click("#download-note")
    note = Path(download.value.path()).read_text(encoding="utf-8")
    assert "[待验证]" in note or "待验证" in note
    with page.expect_download() as download:
        page.click("#download-pdf")
    assert download.value.suggested_filename == PAPER.name
    assert Path(download.value.path()).read_bytes() == PAPER.read_bytes()

    # Ask: a question about this paper shows its stage while it waits, then the answer at
    # its own address, in plain words, with sources that open their page.
    page.click("text=Ask about this paper")
    assert page.locator("#scope").input_value() == paper_id
    page.fill("#question", ASK_QUESTION)
    page.click("#ask-button")
    # disabled while it waits, unless the scripted answer already opened its own address
    assert page.locator("#ask-button").is_disabled() or re.search(r"/ask/\d+$", page.url)
    page.wait_for_url(re.compile(r".*/ask/\d+$"), timeout=60_000)
    page.locator("#answer").wait_for()
    answer_url = page.url
    assert page.locator("#route").text_content() in ("correct", "ambiguous", "incorrect")
    assert page.locator("#outcome").inner_text().startswith(("Answered", "No passage"))
    assert page.locator("#grounded").inner_text() in (
        "checked against its sources",
        "not fully backed by its sources",
    )
    sources = page.locator("#sources li")
    assert sources.count() >= 1
    assert re.search(r"p\. \d+", sources.first.inner_text())
    answer_text = page.locator("#answer-text").inner_text()
    if re.search(r"\[1\]", answer_text):
        assert page.locator("#answer-text a.cite").first.get_attribute("href") == "#source-1"
    page.screenshot(path=str(tmp_path / "ask_page.png"), full_page=True)
    source_link = page.locator("#sources a.source-link").first
    source_passage = int(re.search(r"passage=(\d+)", source_link.get_attribute("href")).group(1))
    source_link.click()
    page.wait_for_url(f"**/paper/{paper_id}?*")
    check_highlight(page, served.ctx, source_passage)

    # The answer's address opens it again; the question is in the history.
    page.goto(answer_url)
    assert page.locator("#answer").is_visible()
    page.goto(f"{served.url}/ask")
    assert page.locator("#history li", has_text=ASK_QUESTION).count() >= 1

    # The same question across the whole library.
    page.goto(answer_url)
    page.select_option("#scope", "")
    page.click("#ask-button")
    assert not page.locator("#answer").is_visible()  # the previous answer is hidden at once
    page.wait_for_url(lambda url: url != answer_url and re.search(r"/ask/\d+$", url), timeout=60_000)
    page.locator("#answer").wait_for()
    assert page.locator("#scope").input_value() == ""
    assert page.dialogs == []


def check_highlight(page, ctx, passage: int) -> None:
    """The viewer shows the passage's page with a highlight over words the PDF itself places
    there (found by pymupdf's own text search of a phrase of the passage)."""
    import pymupdf

    viewer = page.locator("#pdf")
    page.wait_for_function(f"() => document.getElementById('pdf').dataset.highlighted === '{passage}'")
    page.wait_for_function("() => document.getElementById('page-image').complete")
    shown_page = int(viewer.get_attribute("data-page"))
    box = pdf_pages.passage_box(ctx.library, passage)
    area: dict[int, float] = {}
    for number, x0, y0, x1, y1 in box.rects:
        area[number] = area.get(number, 0.0) + (x1 - x0) * (y1 - y0)
    if viewer.get_attribute("data-sentence") == "placed":  # its evidence sentence's page (issue 47, item 12)
        assert shown_page in area and page.locator("#page-frame .hl-sentence").count() >= 1
    else:
        assert shown_page == max(area, key=area.get, default=box.page)  # the page holding most of it
    image = page.locator("#page-image").bounding_box()
    highlights = [h.bounding_box() for h in page.locator("#page-frame .hl").all()]
    assert highlights, "no highlight drawn"
    pdf, _ = pdf_pages.paper_file(ctx.library, box.paper_id)
    with ctx.services.db() as session:
        from reader.store.tables import Chunk

        text = session.get(Chunk, passage).text
    with pymupdf.open(pdf) as doc:
        pdf_page = doc[shown_page - 1]
        width, height = pdf_page.rect.width, pdf_page.rect.height
        words = pdf_page.get_text("words")
        # words of the passage on this page: the ones pymupdf finds for 3-word phrases of it
        tokens = text.split()
        found = []
        for i in range(0, max(1, len(tokens) - 3), 7):
            found += pdf_page.search_for(" ".join(tokens[i : i + 3]))
            if len(found) >= 5:
                break
    assert words and found, "pymupdf finds none of the passage's phrases on the page"

    def overlaps(rect, h):
        x0 = image["x"] + rect.x0 / width * image["width"]
        y0 = image["y"] + rect.y0 / height * image["height"]
        x1 = image["x"] + rect.x1 / width * image["width"]
        y1 = image["y"] + rect.y1 / height * image["height"]
        return x0 < h["x"] + h["width"] and h["x"] < x1 and y0 < h["y"] + h["height"] and h["y"] < y1

    assert any(overlaps(rect, h) for rect in found for h in highlights), (found[:3], highlights[:3])


# a question the paper answers (the scripted LLM answers by word overlap)
ASK_QUESTION = (
    "Which column is read first inside a band of the page?"
    if PAPER == SAMPLE_PAPER
    else "What does the paper propose?"
)


def hostile_pdf(path: Path) -> Path:
    """A one-page PDF whose title (metadata and first lines) is markup."""
    import pymupdf

    doc = pymupdf.open()
    page = doc.new_page()
    page.insert_text((50, 80), HOSTILE[:45], fontsize=16)
    page.insert_text((50, 100), HOSTILE[45:], fontsize=16)
    page.insert_text((50, 140), "1 Introduction", fontsize=12, fontname="helvetica-bold")
    for i in range(30):
        page.insert_text(
            (50, 160 + 14 * i),
            f"Sentence {i}: the method improves recall by {i}.5 points on the held-out test set.",
            fontsize=10,
        )
    doc.set_metadata({"title": HOSTILE})
    doc.save(path)
    doc.close()
    return path


def wait_for_job(page, name: str) -> str:
    row = page.locator("#jobs tbody tr", has_text=name).first
    row.wait_for()
    deadline = time.monotonic() + REVIEW_TIMEOUT_S
    while time.monotonic() < deadline:
        status = row.locator(".job-status").inner_text()
        if status.startswith(("done", "error")):
            return status
        page.wait_for_timeout(100)
    return status


def test_hostile_title_renders_as_text(served, page, tmp_path):
    # The title comes out of the real ingest of an uploaded PDF; the file name is markup too.
    pdf = hostile_pdf(tmp_path / "<img src=x onerror=alert(1)>.pdf")
    page.goto(f"{served.url}/upload")
    page.set_input_files("#file-input", str(pdf))
    # the name is kept as the stored file name, reduced to harmless characters
    assert wait_for_job(page, upload_file_name("<img src=x onerror=alert(1)>.pdf")).startswith("done")
    pid = hashlib.sha256(pdf.read_bytes()).hexdigest()
    page.goto(f"{served.url}/library?q=script")
    assert page.locator(f'tr[data-paper="{pid}"] td.title').inner_text() == HOSTILE
    page.goto(f"{served.url}/paper/{pid}")
    assert page.locator("#paper-title").inner_text() == HOSTILE
    assert page.title().startswith(HOSTILE)
    page.goto(f"{served.url}/ask?paper={pid}")
    assert page.locator("#scope option:checked").inner_text() == HOSTILE
    assert page.evaluate("window.__pwned") is None
    assert page.locator("img[src=x]").count() == 0
    assert page.dialogs == []


def test_oversized_and_non_pdf_uploads_get_their_messages(served, page, tmp_path):
    big = tmp_path / "huge.pdf"
    big.write_bytes(b"%PDF-1.4\n" + b"0" * (UPLOAD_LIMIT_MB * 1024 * 1024 + 1000))
    fake = tmp_path / "slides.pdf"
    fake.write_bytes(b"PK\x03\x04 this is a zip archive, not a PDF")
    page.goto(f"{served.url}/upload")
    jobs_before = page.locator("#jobs tbody tr").count()
    page.set_input_files("#file-input", [str(big), str(fake)])
    # each file's line says "sending…", then "sent; the server is reading it…", until the server
    # has answered for it
    page.wait_for_function(
        """() => {
            const items = [...document.querySelectorAll('#upload-messages li')];
            return items.length >= 2 && items.every(
                li => !li.textContent.includes('sending') && !li.textContent.includes('reading it'));
        }"""
    )
    text = " | ".join(page.locator("#upload-messages li").all_inner_texts())
    assert f"huge.pdf: larger than the upload limit of {UPLOAD_LIMIT_MB} MB" in text
    assert "slides.pdf: not a PDF" in text
    assert page.locator("#jobs tbody tr").count() == jobs_before


def test_delete_asks_first_then_removes_the_paper(served, page, tmp_path):
    pdf = hostile_pdf(tmp_path / "to-delete.pdf")
    [result] = served.ctx.ingest([pdf])
    pid = result.paper_id
    page.goto(f"{served.url}/paper/{pid}")
    page.click("#delete-paper")
    page.wait_for_url(f"**/paper/{pid}/delete")
    assert (
        page.locator("#delete-title").inner_text() == served.ctx.library.view(paper_page.paper_of, pid).title
    )
    assert (
        served.ctx.library.view(library.paper_status_of, pid) is not None
    )  # nothing removed before the confirmation
    page.click("#confirm-delete")
    page.wait_for_url(re.compile(r".*/library\?deleted=.+"))
    assert "Deleted" in page.locator("#deleted-notice").inner_text()
    assert page.locator(f'tr[data-paper="{pid}"]').count() == 0
    assert served.ctx.library.view(library.paper_status_of, pid) is None
    assert page.dialogs == []


NARROW = 390


def test_no_sideways_scrolling_on_a_phone_and_screenshots(served, chromium, tmp_path):
    """Every page fits 390 px (an iPhone's width); screenshots at 390 and 1280 px."""
    [result] = served.ctx.ingest([SAMPLE_PAPER])
    question_id = served.ctx.ask(
        ASK_QUESTION if PAPER == SAMPLE_PAPER else "Which column is read first inside a band of the page?",
        result.paper_id,
    ).question_id
    paths = [
        "/library",
        "/upload",
        "/ask",
        f"/ask/{question_id}",
        f"/paper/{result.paper_id}",
        "/library?q=column&text=1",
    ]
    reviewed = [r.id for r in served.ctx.library.view(library.library_rows) if r.flagged_ratio is not None]
    paths += [f"/paper/{pid}" for pid in reviewed[:1]]
    widths = {}
    for width in (NARROW, 1280):
        context = chromium.new_context(viewport={"width": width, "height": 900})
        page = context.new_page()
        for path in paths:
            page.goto(f"{served.url}{path}")
            page.wait_for_load_state("load")
            widths[(width, path)] = page.evaluate("document.documentElement.scrollWidth")
        target = f"/paper/{reviewed[0]}" if reviewed else f"/paper/{result.paper_id}"
        page.goto(f"{served.url}{target}")
        # the page image loads lazily: below a long review on a phone it would wait for a scroll
        page.evaluate(
            "() => { const i = document.getElementById('page-image'); if (i) i.loading = 'eager'; }"
        )
        page.wait_for_function(
            "() => !document.getElementById('page-image') || document.getElementById('page-image').complete"
        )
        shot = tmp_path / f"paper_page_{width}.png"
        page.screenshot(path=str(shot), full_page=False)
        shutil.copyfile(shot, Path(f"/tmp/reader_paper_page_{width}.png"))
        context.close()
    print("\nscrollWidth at 390 px: " + ", ".join(f"{p} {w}" for (v, p), w in widths.items() if v == NARROW))
    too_wide = {p: w for (v, p), w in widths.items() if v == NARROW and w > NARROW}
    assert not too_wide, too_wide


# ---- each sentence opens its own evidence --------------------------------------------------

EVIDENCE_PAPER = next(
    (p for p in [SHARED_PAPERS / "plosone2018_wheat_metabolomics.pdf"] if p.exists()), SAMPLE_PAPER
)


def store_audited_synthesis(ctx, paper_id: str, claims: list[str], search) -> None:
    """The claims audited by the real audit (scripted verifier) and stored as the paper's synthesis."""
    from reader.audit.loop import Iteration, LoopResult, audit_sentences, mark_unsupported
    from reader.audit.record import save_analysis
    from reader.llm.scripted import ScriptedLLM
    from reader.store.db import transaction

    verifier = ScriptedLLM(scripted_answer, model="scripted-checker", with_stage=True)
    audit = audit_sentences(claims, paper_id=paper_id, verifier=verifier, search=search)
    text = mark_unsupported(" ".join(claims), audit.to_mark)
    with transaction(ctx.services.db) as session:
        save_analysis(
            session,
            paper_id=paper_id,
            kind="synthesis",
            loop=LoopResult([Iteration(text, audit)], text),
            verifier_model="scripted-checker",
        )


def sentences_with_their_passages(ctx, paper_id: str, n: int) -> list[tuple[str, object]]:
    """(a sentence of the paper, the passage holding it) for n passages, on different pages where
    the paper has them."""
    from sqlalchemy import select

    from reader.store.tables import Chunk
    from reader.text.split import split_sentences

    with ctx.services.db() as session:
        chunks = list(
            session.scalars(select(Chunk).where(Chunk.paper_id == paper_id).order_by(Chunk.ordinal))
        )
    picked, pages = [], set()
    for spread in (True, False):
        for chunk in chunks:
            if len(picked) == n or chunk in (c for _, c in picked) or (spread and chunk.page_start in pages):
                continue
            long = [" ".join(s.split()) for s in split_sentences(chunk.text) if 10 <= len(s.split()) <= 40]
            long = [s for s in long if not s.startswith(("[", "("))]
            if long:
                picked.append((long[0], chunk))
                pages.add(chunk.page_start)
    return picked


def sentence_id(page, sentence: str) -> str:
    """The element id of the audited sentence with this text (its own text, not a tooltip's)."""
    return page.evaluate(
        """(wanted) => [...document.querySelectorAll('.sent')].find(s =>
             [...s.childNodes].filter(n => !(n.classList && n.classList.contains('tip')))
               .map(n => n.textContent).join('').replace(/\\[待验证\\]/, '').trim() === wanted).id""",
        sentence,
    )


def test_a_sentence_opens_its_own_passage_and_a_flagged_one_lists_the_nearest(served, page, tmp_path):
    """A click or Enter on a sentence opens the passage that holds it, even where the search put
    another passage first; a flagged sentence lists the passages that came nearest."""
    from reader.index.hits import SearchHit

    [result] = served.ctx.ingest([EVIDENCE_PAPER])
    pid = result.paper_id
    held = sentences_with_their_passages(served.ctx, pid, 3)
    assert len(held) == 3, held
    chunks = [c for _, c in held]

    def as_hit(chunk, score):
        return SearchHit(
            chunk.id, pid, chunk.text, chunk.section or "", chunk.page_start, chunk.page_end, score
        )

    def search(query, paper_id):
        # a search that ranks the holding passage last (a dense search often does)
        holder = next((c for s, c in held if s == query), None)
        others = [c for c in chunks if c is not holder]
        return [as_hit(c, 0.9 - 0.1 * i) for i, c in enumerate(others + ([holder] if holder else []))]

    store_audited_synthesis(served.ctx, pid, [s for s, _ in held] + [FABRICATED], search)
    page.goto(f"{served.url}/paper/{pid}")
    page.check("#show-all")
    for n, (sentence, chunk) in enumerate(held):
        span = page.locator(f"#{sentence_id(page, sentence)}")
        assert "verdict-supported" in span.get_attribute("class"), sentence
        if n == 0:
            span.click()
        else:
            span.focus()
            page.keyboard.press("Enter")
        page.wait_for_function(
            f"() => document.getElementById('pdf').dataset.highlighted === '{chunk.id}'", timeout=5000
        )
        if n == 0:
            check_highlight(page, served.ctx, chunk.id)
        page.keyboard.press("Escape")
    page.screenshot(path=str(tmp_path / "own_evidence_1280.png"))

    # the flagged sentence: its tooltip lists the passages that came nearest, each opening its page
    flagged = page.locator(f"#{sentence_id(page, FABRICATED)}")
    flagged.focus()
    page.keyboard.press("Enter")
    tip = flagged.locator(".tip")
    tip.wait_for(state="visible")
    assert "Closest passages" in tip.inner_text()
    links = tip.locator("a.ev-page")
    assert links.count() == len(chunks)
    nearest = links.first.get_attribute("data-passage")
    page.wait_for_function(f"() => document.getElementById('pdf').dataset.highlighted === '{nearest}'")
    page.set_viewport_size({"width": NARROW, "height": 900})
    page.screenshot(path=str(tmp_path / "own_evidence_390.png"))


def test_a_verdict_tooltip_is_the_sentence_s_own_and_leaves_the_next_one_reachable(served, page, tmp_path):
    """With every verdict shown, hovering a sentence opens a small tooltip by that sentence that
    covers none of the next sentence, so the pointer reaches it and opens its tooltip instead."""
    [result] = served.ctx.ingest([EVIDENCE_PAPER])
    pid = result.paper_id
    held = sentences_with_their_passages(served.ctx, pid, 6)
    assert len(held) >= 4, held
    from reader.index.hits import SearchHit

    def search(query, paper_id):
        return [
            SearchHit(c.id, pid, c.text, c.section or "", c.page_start, c.page_end, 1.0 / (1 + i))
            for i, (s, c) in enumerate(sorted(held, key=lambda h: h[0] != query))
        ]

    store_audited_synthesis(served.ctx, pid, [s for s, _ in held], search)
    for width in (1280, NARROW):
        page.set_viewport_size({"width": width, "height": 900})
        page.goto(f"{served.url}/paper/{pid}")
        page.check("#show-all")
        ids = [sentence_id(page, s) for s, _ in held]
        section = page.locator("#synthesis").bounding_box()
        for here, after in zip(ids, ids[1:]):
            sentence, next_one = page.locator(f"#{here}"), page.locator(f"#{after}")
            page.mouse.move(0, 0)
            sentence.evaluate("e => e.scrollIntoView({block: 'center'})")
            first = sentence.evaluate(
                "e => { const r = e.getClientRects()[0]; return [r.x + r.width / 2, r.y + r.height / 2]; }"
            )
            page.mouse.move(*first)
            tip = sentence.locator(".tip")
            tip.wait_for(state="visible")
            box = tip.bounding_box()
            if width > NARROW:  # not section-wide (on a phone the section is the screen)
                assert box["width"] <= min(460, 0.8 * section["width"]), (width, box, section)
            assert box["height"] <= 0.4 * 900, box
            # no line of the next sentence is under the tooltip, and every one can be pointed at
            covered = next_one.evaluate(
                """(e, tip) => [...e.getClientRects()].filter(r => {
                       const overlaps = r.left < tip.x + tip.width && tip.x < r.right
                           && r.top < tip.y + tip.height && tip.y < r.bottom;
                       const hit = document.elementFromPoint(r.x + r.width / 2, r.y + r.height / 2);
                       return overlaps || !hit || hit.closest('.sent') !== e; }).length""",
                box,
            )
            assert covered == 0, (width, here, after, box)
            last = next_one.evaluate(
                "e => { const rs = e.getClientRects(); const r = rs[rs.length - 1]; return [r.x + r.width / 2, r.y + r.height / 2]; }"
            )
            page.mouse.move(*last)
            next_one.locator(".tip").wait_for(state="visible")
            assert not tip.is_visible()
        page.screenshot(path=str(tmp_path / f"verdict_tooltip_{width}.png"))


# ---- the library at a laptop's width -------------------------------------------------------

LONG_TITLES = [
    "Comparative physiological and metabolomics analysis of wheat (Triticum aestivum L.) "
    "following post-anthesis heat stress",
    "Discriminative Joint Modeling of Lexical Variation and Acoustic Confusion for Automated "
    "Narrative Retelling Assessment",
    "2kenize: Tying Subword Sequences for Chinese Script Conversion",
    "SPECTER: Document-level Representation Learning using Citation-informed Transformers",
]


def add_listed_paper(db, title: str, n: int) -> str:
    """A reviewed paper as the library lists it: four authors, 24 sentences, 4 flagged."""
    from reader.store.db import transaction
    from reader.store.tables import Analysis, AnalysisIteration, Paper

    pid = hashlib.sha256(f"listed {title}".encode()).hexdigest()
    with transaction(db) as session:
        session.add(
            Paper(
                id=pid,
                title=title,
                authors=["Kayla Thomason", "Md Ali Babar", "John E. Erickson", "Michael Mulvaney"],
                year=2018 + n,
                source_path=f"listed-{n}.pdf",
                source_kind="pdf",
                pages=21,
            )
        )
        session.flush()  # the paper before its analysis
        analysis = Analysis(
            paper_id=pid, kind="synthesis", final_text="Text.", flagged_ratio=4 / 24, regenerations=1
        )
        analysis.iterations.append(
            AnalysisIteration(iteration=1, text="Text.", n_sentences=24, n_flagged=4, flagged_ratio=4 / 24)
        )
        session.add(analysis)
    return pid


def test_the_library_fits_a_laptop_screen_and_gives_titles_the_room(served, chromium, tmp_path):
    """At 1280 px the library has no sideways scrolling, the Title column is the widest and a long
    title takes at most three lines (four at 1024); every column, Added included, is on the screen."""
    ids = [add_listed_paper(served.ctx.services.db, title, n) for n, title in enumerate(LONG_TITLES)]
    for width in (1280, 1024, NARROW):
        context = chromium.new_context(viewport={"width": width, "height": 900})
        page = context.new_page()
        page.goto(f"{served.url}/library?sort=added&order=desc")
        assert page.evaluate("document.documentElement.scrollWidth") <= width
        if width == NARROW:  # a card per paper, the title across it
            cell = page.locator(f'tr[data-paper="{ids[0]}"] td.title').bounding_box()
            assert cell["width"] >= 0.8 * width, cell
        else:
            columns = page.evaluate(
                "() => [...document.querySelectorAll('#library thead th')].map(th => th.getBoundingClientRect().toJSON())"
            )
            assert max(c["right"] for c in columns) <= width, columns
            title, *others = [c["width"] for c in columns]
            assert title >= max(others) and title >= (320 if width == 1280 else 240), [
                c["width"] for c in columns
            ]
            for pid in ids:
                cell = page.locator(f'tr[data-paper="{pid}"] td.title a')
                lines = cell.evaluate("a => a.getClientRects().length")
                assert lines <= (3 if width == 1280 else 4), (width, cell.inner_text(), lines)
        page.screenshot(path=str(tmp_path / f"library_{width}.png"), full_page=True)
        context.close()


def test_the_upload_page_estimates_from_the_reviews_that_finished(served, page, tmp_path):
    """The bar's time left comes from how long finished reviews took (reader.web.progress), not
    from the running paper's elapsed time alone."""
    from datetime import UTC, datetime, timedelta

    from sqlalchemy import delete

    from reader.store.db import transaction
    from reader.store.tables import ReviewJob

    now = datetime.now(UTC)
    with transaction(served.ctx.services.db) as session:
        rows = [
            ReviewJob(
                source_path=f"/elsewhere/finished-{n}.pdf",
                status="done",
                queued_at=now - timedelta(seconds=1000),
                started_at=now - timedelta(seconds=n + 1 + took),
                finished_at=now - timedelta(seconds=n + 1),
            )
            # the queue's last ten reviews (the earlier tests' finished before): 210 s on average
            for n, took in enumerate([200, 220, 210] * 3 + [210])
        ]
        rows.append(  # reviewed by another worker, 20 s in: about 210 - 20 s to go
            ReviewJob(
                source_path="/elsewhere/running.pdf",
                status="running",
                queued_at=now - timedelta(seconds=30),
                started_at=now - timedelta(seconds=20),
                worker="elsewhere:1",
                lease_until=now + timedelta(hours=1),
            )
        )
        session.add_all(rows)
    try:
        page.goto(f"{served.url}/upload")
        text = page.locator("#overall-text")
        text.wait_for()
        page.wait_for_function("() => document.getElementById('overall-text').textContent.includes('left')")
        assert text.inner_text() == "0 of 1 reviewed · 1% · about 3 min left"
        page.screenshot(path=str(tmp_path / "upload_estimate_1280.png"))
        page.set_viewport_size({"width": NARROW, "height": 900})
        page.screenshot(path=str(tmp_path / "upload_estimate_390.png"))
    finally:
        with transaction(served.ctx.services.db) as session:
            session.execute(delete(ReviewJob).where(ReviewJob.source_path.like("/elsewhere/%")))
