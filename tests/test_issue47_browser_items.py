"""Issue 47, items 10-19 (the researcher's round in the browser): the parts that need no
browser. The browser's own checks are in tests/test_web_browser_round3.py."""

from __future__ import annotations

import csv
import io

from test_web import client_for  # noqa: F401 - the fixture

from reader.table.model import Cell, ExtractionTable, Source, TableRow


def test_copied_text_has_its_ligatures_as_letters_and_its_broken_words_whole():
    from reader.text.copied import expand_ligatures, joined_lines

    assert expand_ligatures("ﬁne eﬃcient ﬂow") == "fine efficient flow"
    assert joined_lines("the relat- edness of words") == "the relatedness of words"
    # a hyphen that is the writer's stays: "pre- and post-training", a capital after it
    assert joined_lines("pre- and post-training") == "pre- and post-training"
    assert joined_lines("BERT- Large") == "BERT- Large"


def test_the_extraction_table_csv_has_no_ligature_nor_broken_word():
    source = Source(chunk_id=1, page_start=2, page_end=2, text="We ﬁne-tune on the relat- edness set.")
    cell = Cell("data", value="the relat- edness set", sources=[source], verdict="supported")
    table = ExtractionTable(rows=[TableRow(paper_id="p" * 64, title="Eﬃcient reading", cells={"data": cell})])
    table.columns = [("data", "Data")]
    line = list(csv.DictReader(io.StringIO(table.to_csv())))[0]
    assert line["title"] == "Efficient reading"
    assert line["data"] == "the relatedness set"
    assert "ﬁ" not in line["data_source"] and "fine-tune" in line["data_source"]


# ---- item 11: a withheld answer ------------------------------------------------------------------


def test_a_withheld_answer_says_a_draft_was_withheld_and_keeps_its_passages():
    from reader.web.questions import route_in_words

    said = route_in_words("correct", "Not found in the papers.", 3, withheld=True)
    assert "No passage" not in said
    assert said.startswith("3 passages were found and an answer drafted from them") and "withheld" in said
    assert route_in_words("correct", "Not found in the papers.", 1, withheld=True).startswith(
        "A passage was found"
    )
    assert (
        route_in_words("correct", "Not found in the papers.", 0)
        == "No passage of the papers answers this question."
    )


def test_the_answer_page_of_a_withheld_draft_lists_the_passages(db, client_for):  # noqa: F811
    from reader.store.db import transaction
    from reader.store.tables import Question

    with transaction(db) as session:
        row = Question(
            question="How large is the corpus?",
            answer="Not found in the papers.",
            grounded=True,
            grounded_reason="nothing to check: the drafted answer was withheld as unsupported",
            route="correct",
            confidence=0.6,
            details={
                "sources": [{"label": "A paper, p. 3", "pages": "3", "text": "The corpus has 5,690 tweets."}]
            },
        )
        session.add(row)
        session.flush()
        qid = row.id
    page = client_for().get(f"/ask/{qid}").text
    assert "No passage of the papers answers this question." not in page
    assert "A passage was found and an answer drafted from it" in page
    assert "Passages found (the withheld draft was written from them)" in page
    assert "The corpus has 5,690 tweets." in page


# ---- item 12: the evidence sentence within its passage -----------------------------------------


def test_the_evidence_sentence_is_the_passage_s_sentence_nearest_the_claim():
    from reader.web.page_text import evidence_sentence

    passage = (
        "We describe the data first. The WNUT-17 corpus contains 5,690 annotated tweets. "
        "Annotators were paid. Results follow in Section 5."
    )
    claim = "The corpus has 5,690 annotated tweets."
    assert evidence_sentence(passage, claim) == "The WNUT-17 corpus contains 5,690 annotated tweets."
    assert evidence_sentence(passage, "Nothing alike here.") in ("", *passage.split(". "))


# ---- item 13: a page rendered at the zoom ----------------------------------------------------------


def test_a_page_is_rendered_at_the_scale_asked_within_the_render_limits():
    from reader.ingest.pages import MAX_RENDER_PIXELS, render_zoom
    from reader.web.pdf import RENDER_SCALES, render_scale

    assert render_scale(1.0) == RENDER_SCALES[0] == 1.5
    assert render_scale(1.7) == 2.0 and render_scale(2.5) == 3.0 and render_scale(99) == RENDER_SCALES[-1]
    assert render_scale(float("nan")) == RENDER_SCALES[-1]
    # a Letter page at the largest scale stays within the render limit
    z = render_zoom(612, 792, RENDER_SCALES[-1])
    assert (612 * z + 1) * (792 * z + 1) <= MAX_RENDER_PIXELS + 1 and z > 2


# ---- item 16: the reader's decision counts -----------------------------------------------------------


def test_overruled_flags_leave_the_library_count_and_the_note_s_unverified_tag(db, client_for):  # noqa: F811
    import re

    from test_web_judgements import form_of, reviewed

    client = client_for()
    pid = reviewed(db)
    assert re.search(r'data-label="Flagged">33% <span class="hint">\(1\)', client.get("/library").text)
    assert "reader/has-unverified" in client.get(f"/paper/{pid}/note.md").text
    judge = client.get(f"/paper/{pid}/judge/synthesis-2")
    client.post(f"/paper/{pid}/judgement", data={**form_of(judge.text), "verdict": "supported"})
    library = client.get("/library").text
    assert re.search(r'data-label="Flagged">0% <span class="hint">\(0\)', library)
    assert "reader/has-unverified" not in client.get(f"/paper/{pid}/note.md").text
    assert "Flagged sentences (0; 1 more you judged supported)" in client.get(f"/paper/{pid}").text


# ---- item 18: the time left, steadied by the page ------------------------------------------------------


def test_the_batch_summary_gives_the_time_left_in_seconds_and_one_review_is_said_so():
    from test_web import NOW, a_job, finished_in

    from reader.web.progress import batch_summary

    summary = batch_summary([a_job("running", percent=40, started=NOW - 40, job_id="r")], NOW)
    assert summary["head"] == "0 of 1 reviewed · 40%" and summary["left_s"] == 60.0
    assert batch_summary(finished_in(5), NOW)["text"] == "The review finished."


# ---- item 19: the smaller ones ---------------------------------------------------------------------------


def test_an_answer_sets_the_paper_s_own_citation_apart_from_its_source_markers():
    from reader.web.pages import cited
    from reader.web.questions import QuestionSource

    source = QuestionSource(number=1, label="A paper", pages="3", text="…", paper_id=None, chunk_id=None)
    html = str(cited("BERT helps [1], as earlier work found [5].", [source]))
    assert '<a class="cite" href="#source-1">[1]</a>' in html
    assert '<span class="own-cite"' in html and "[5]<small> (paper's ref.)</small>" in html


def test_a_chinese_title_has_no_space_between_its_characters():
    from reader.ingest.pdf import no_cjk_gaps

    assert no_cjk_gaps("基于深度 学习的文本分类") == "基于深度学习的文本分类"
    assert no_cjk_gaps("BERT 模型 for 中文") == "BERT 模型 for 中文"


def test_the_library_names_its_columns_in_words_and_a_first_visit_says_what_comes_out(db, client_for):  # noqa: F811
    from test_web import add_paper

    client = client_for()
    empty = client.get("/library").text
    assert 'id="first-visit"' in empty and "Markdown note" in empty and "[待验证]" in empty
    a = add_paper(db, title="Same title", pid="a" * 64)
    b = add_paper(db, title="Same title", pid="b" * 64)
    page = client.get("/library").text
    assert "Unch." not in page and "Regen." not in page and ">Unchecked<" in page and "Rewrites" in page
    assert f"id {a[:8]}" in page and f"id {b[:8]}" in page  # the two rows told apart
