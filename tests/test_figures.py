"""A PDF's figures found next to their captions with their pictures, stored with the paper and
removed with it (reader/ingest/figures.py, paper_figures), on a PDF made here."""

from __future__ import annotations

import pytest
from figure_pdf import CAPTION_1, CAPTION_2, CHART, PICTURE, make_figure_pdf
from sqlalchemy import func, select

from reader.ingest.figures import find_figures
from reader.ingest.pdf import parse_pdf
from reader.store.paper_figures import paper_figures
from reader.store.tables import PaperFigure
from reader.text.figures import cited_figures


@pytest.fixture(scope="module")
def figure_pdf(tmp_path_factory):
    return make_figure_pdf(tmp_path_factory.mktemp("figures") / "figures.pdf")


def _picture_size(png: bytes) -> tuple[int, int]:
    import pymupdf

    pix = pymupdf.Pixmap(png)
    return pix.width, pix.height


def _within(rect, box_pt, page=(595, 842), slack=12) -> bool:
    x0, y0, x1, y1 = (v * page[i % 2] for i, v in enumerate(rect))
    return (
        abs(x0 - box_pt[0]) <= slack
        and abs(y0 - box_pt[1]) <= slack
        and abs(x1 - box_pt[2]) <= slack
        and abs(y1 - box_pt[3]) <= slack + 20  # the words under a chart (its axis labels) count
    )


def test_an_embedded_image_and_a_drawn_chart_are_found_above_their_captions(figure_pdf):
    parsed = parse_pdf(figure_pdf)
    first, second = find_figures(figure_pdf.read_bytes(), parsed.captions)
    assert (first.label, first.caption, first.page, first.method) == ("Figure 1", CAPTION_1, 1, "image")
    assert _within(first.rect, PICTURE)
    assert first.png.startswith(b"\x89PNG")
    width, height = _picture_size(first.png)
    assert abs(width / height - 308 / 188) < 0.1  # the picture's box, padded, at its own shape
    assert (second.label, second.caption, second.page, second.method) == ("Figure 2", CAPTION_2, 2, "drawing")
    assert _within(second.rect, CHART)
    assert second.rect[3] * 842 >= CHART[3] + 8  # the bars' names under the axis are in it


def test_a_text_figure_without_a_picture_is_rendered_from_the_region_above_its_caption(tmp_path):
    import pymupdf

    doc = pymupdf.open()
    page = doc.new_page(width=595, height=842)
    page.insert_textbox(pymupdf.Rect(72, 72, 520, 140), "A paper about rules. " * 12, fontsize=10)
    page.insert_text((120, 200), "(1) X -> X1 hat X2 versprochen", fontsize=10)
    page.insert_text((120, 214), "(2) X -> X1 versprach X2", fontsize=10)
    page.insert_text((120, 240), "Figure 1: Two rules of a grammar.", fontsize=9)
    doc.save(tmp_path / "text.pdf")
    parsed = parse_pdf(tmp_path / "text.pdf")
    (figure,) = find_figures((tmp_path / "text.pdf").read_bytes(), parsed.captions)
    assert figure.method == "text"
    x0, y0, x1, y1 = (v * s for v, s in zip(figure.rect, (595, 842, 595, 842)))
    assert 180 < y0 < 195 and 214 < y1 < 232  # the two rules, not the paragraph above or the caption


def test_ingest_stores_the_figures_and_removing_the_paper_removes_them(app, figure_pdf):
    (result,) = app.ingest([figure_pdf])
    assert result.status == "ingested", result.error
    with app.services.db() as session:
        stored = paper_figures(session, result.paper_id)
        listed = paper_figures(session, result.paper_id, with_png=False)
    assert [(f.label, f.page, f.method) for f in stored] == [
        ("Figure 1", 1, "image"),
        ("Figure 2", 2, "drawing"),
    ]
    assert all(f.png.startswith(b"\x89PNG") for f in stored) and [f.png for f in listed] == [b"", b""]
    assert listed[0].to_json()["png_bytes"] == 0 and stored[0].to_json()["png_bytes"] == len(stored[0].png)
    app.remove(result.paper_id)
    with app.services.db() as session:
        assert session.scalar(select(func.count()).select_from(PaperFigure)) == 0


def test_reader_figures_off_ingests_no_figure(reader_env, monkeypatch, figure_pdf):
    from reader.facade import Reader

    monkeypatch.setenv("READER_FIGURES", "off")
    app = Reader()
    (result,) = app.ingest([figure_pdf])
    assert result.status == "ingested", result.error
    with app.services.db() as session:
        assert paper_figures(session, result.paper_id) == []


def test_the_migration_adds_paper_figures_after_0013(tmp_path):
    import sqlalchemy as sa
    from alembic import command

    from reader.store.db import HEAD_REVISION, alembic_config, upgrade

    url = f"sqlite:///{tmp_path / 'r.db'}"
    command.upgrade(alembic_config(url), "0013")
    engine = sa.create_engine(url)
    assert "paper_figures" not in sa.inspect(engine).get_table_names()
    upgrade(url)
    columns = {c["name"] for c in sa.inspect(engine).get_columns("paper_figures")}
    assert {"paper_id", "label", "caption", "page", "rect", "method", "png"} <= columns
    assert HEAD_REVISION >= "0014"  # migrations after 0014 keep its table
    engine.dispose()


def test_the_figures_a_sentence_cites():
    assert cited_figures("As Figure 3 shows, and Fig. 4b too.") == ["3", "4"]
    assert cited_figures("Figs. 2 and 3 compare them (Figures 5–7).") == ["2", "3", "5", "6", "7"]
    assert cited_figures("The figure shows a trend; see Table 3.") == []


def _reviewed(app, figure_pdf) -> str:
    """The figures' PDF ingested, with a stored synthesis (a note needs one)."""
    from reader.audit.loop import AuditResult, Iteration, LoopResult, SentenceResult
    from reader.audit.record import save_analysis
    from reader.store.db import transaction

    (result,) = app.ingest([figure_pdf])
    text = "Figure 2 compares three models on SQA."
    audit = AuditResult([SentenceResult(text, "supported", "YES", [])])
    with transaction(app.services.db) as session:
        save_analysis(
            session,
            paper_id=result.paper_id,
            kind="synthesis",
            loop=LoopResult([Iteration(text, audit)], text),
        )
    return result.paper_id


def test_the_export_writes_each_figure_beside_the_note_and_shows_it(app, figure_pdf, tmp_path):
    paper_id = _reviewed(app, figure_pdf)
    exported = app.export(tmp_path / "notes")
    (note,) = exported.notes
    first, second = exported.figures
    stem = note.name.removesuffix(".md")
    assert (first.name, second.name) == (f"{stem}-figure-1.png", f"{stem}-figure-2.png")
    assert first.parent == note.parent and first.read_bytes().startswith(b"\x89PNG")
    body = note.read_text(encoding="utf-8")
    assert "## Figures" in body and f"![Figure 2]({second.name})" in body and "(p. 2)" in body
    assert exported.to_json()["figures"] == [str(first), str(second)]
    shown = app.paper(paper_id).analyses().to_json()
    assert [(f["label"], f["page"], f["method"]) for f in shown["figures"]] == [
        ("Figure 1", 1, "image"),
        ("Figure 2", 2, "drawing"),
    ]


def test_reader_figures_writes_the_pngs_and_lists_them(app, figure_pdf, tmp_path):
    import json

    from click.testing import CliRunner

    from reader.cli import cli

    (result,) = app.ingest([figure_pdf])
    out = tmp_path / "figs"
    run = CliRunner().invoke(cli, ["figures", result.paper_id[:12], "--out", str(out)], obj=app)
    assert run.exit_code == 0, run.output
    files = sorted(out.glob("*.png"))
    assert [p.name.rsplit("-", 2)[-2:] for p in files] == [["figure", "1.png"], ["figure", "2.png"]]
    assert "Figure 2" in run.output and "p. 2" in run.output and "2 figures written" in run.output
    listed = json.loads(
        CliRunner()
        .invoke(cli, ["figures", result.paper_id[:12], "--out", str(out), "--json"], obj=app)
        .output
    )
    assert [f["file"] for f in listed["figures"]] == [str(p) for p in files]
    assert listed["figures"][1]["caption"] == CAPTION_2


def test_a_sentence_citing_a_figure_the_paper_does_not_have_is_flagged():
    from reader.audit.guards import PaperFacts, check_sentence

    text = "We compare three models on SQA in two figures."
    facts = PaperFacts.from_texts([text], figures={"1": (1, CAPTION_1), "2": (2, CAPTION_2)})
    assert check_sentence("Figure 2 compares three models on SQA.", facts) == []
    assert check_sentence("As Fig. 7 shows, three models are compared.", facts) == [
        "Figure 7 not found in the paper (its figures: 1, 2)"
    ]
    # a figure whose caption was not found but which the paper's text names is no finding
    named = PaperFacts.from_texts([text + " Figure 7 plots the losses."], figures={"1": (1, CAPTION_1)})
    assert check_sentence("As Fig. 7 shows, three models are compared.", named) == []
    # a paper whose figure captions are not known has no say
    assert check_sentence("As Fig. 7 shows, three models are compared.", PaperFacts.from_texts([text])) == []


def test_the_deep_read_knows_the_figures_and_a_stored_sentence_has_its_figures_caption_as_evidence(
    app, figure_pdf
):
    from reader.deepread.context import load_material

    paper_id = _reviewed(app, figure_pdf)
    with app.services.db() as session:
        material = load_material(session, paper_id)
    assert material.figures == {"1": (1, CAPTION_1), "2": (2, CAPTION_2)}
    shown = app.paper(paper_id).analyses().to_json()
    (sentence,) = shown["analyses"][0]["sentences"]
    assert sentence["evidence"][0]["text"] == CAPTION_2 and sentence["evidence"][0]["pages"] == "2"


def _missed_caption_pdf(path):
    """Figure 2's caption starts its text block; Figure 1's shares a block with the figure's title,
    as Neuron sets them, so the parser does not find it."""
    import pymupdf

    doc = pymupdf.open()
    page = doc.new_page(width=595, height=842)
    page.insert_textbox(pymupdf.Rect(72, 72, 520, 130), "A paper about pictures. " * 12, fontsize=10)
    page.draw_rect(pymupdf.Rect(100, 160, 300, 300), color=(0, 0, 0), fill=(0.9, 0.2, 0.2))
    title_and_caption = "The model at a glance\nFigure 1. The whole model, drawn."
    page.insert_textbox(pymupdf.Rect(72, 310, 520, 360), title_and_caption, fontsize=9)
    page.draw_rect(pymupdf.Rect(100, 420, 300, 560), color=(0, 0, 0), fill=(0.2, 0.2, 0.9))
    page.insert_text((72, 580), "Figure 2: The second figure.", fontsize=9)
    doc.save(path)
    return path


def test_a_caption_the_parser_missed_inside_a_text_block_is_found_at_its_line(tmp_path):
    path = _missed_caption_pdf(tmp_path / "missed.pdf")
    parsed = parse_pdf(path)
    assert {c.label for c in parsed.captions if c.kind == "figure"} == {"Figure 2"}
    first, second = find_figures(path.read_bytes(), parsed.captions)
    caption = "Figure 1. The whole model, drawn."
    assert (first.label, first.caption, first.method) == ("Figure 1", caption, "drawing")
    assert 150 < first.rect[1] * 842 < 165 and 295 < first.rect[3] * 842 < 325
    assert second.label == "Figure 2"


def test_the_audit_knows_a_figure_whose_caption_only_the_figures_reader_found(app, tmp_path):
    from reader.store.paper_figures import figure_captions

    (result,) = app.ingest([_missed_caption_pdf(tmp_path / "missed.pdf")])
    with app.services.db() as session:
        known = figure_captions(session, result.paper_id)
    assert known == {"2": (1, "Figure 2: The second figure."), "1": (1, "Figure 1. The whole model, drawn.")}
