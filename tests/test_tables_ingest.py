"""A PDF's tables found next to their captions, stored with the paper and removed with it
(reader/ingest/tables.py, paper_tables), on a PDF made here and on the shared papers."""

from __future__ import annotations

import pytest
from conftest import SHARED_PAPERS
from sqlalchemy import func, select
from table_pdf import CAPTION, HEADER, ROWS, make_table_pdf

from reader.ingest.pdf import parse_pdf
from reader.ingest.tables import FINDERS, find_tables
from reader.store.paper_tables import paper_tables
from reader.store.tables import PaperTable

SPECTER = SHARED_PAPERS / "acl2020_specter_2020.acl-main.207.pdf"


@pytest.fixture(scope="module")
def table_pdf(tmp_path_factory):
    return make_table_pdf(tmp_path_factory.mktemp("tables") / "tables.pdf")


@pytest.mark.parametrize("finder", ["auto", "words", "lines"])
def test_the_table_under_its_caption_is_read_as_cells(table_pdf, finder):
    parsed = parse_pdf(table_pdf)
    (table,) = find_tables(table_pdf.read_bytes(), parsed.captions, finder)
    assert (table.label, table.caption, table.page) == ("Table 2", CAPTION, 1)
    assert table.rows[1] == HEADER and table.rows[2:] == ROWS
    assert table.header_rows == 2
    assert table.rows[0][1:3] == ["Accuracy", "Accuracy"]  # over the two datasets, by its short rule
    x0, y0, x1, y1 = table.rect
    assert 0 < x0 < x1 < 1 and 0 < y0 < y1 < 1
    x0, y0, x1, y1 = table.cell_rects[4][1]  # "85.1"
    assert x0 <= 195 / 595 <= x1 and y0 <= 308 / 842 <= y1


def test_off_finds_nothing_and_an_unknown_finder_is_named(table_pdf):
    parsed = parse_pdf(table_pdf)
    assert find_tables(table_pdf.read_bytes(), parsed.captions, "off") == []
    with pytest.raises(ValueError, match="unknown table finder 'grid'"):
        find_tables(table_pdf.read_bytes(), parsed.captions, "grid")
    assert "auto" in FINDERS


def test_ingest_stores_the_tables_and_removing_the_paper_removes_them(app, table_pdf):
    (result,) = app.ingest([table_pdf])
    assert result.status == "ingested", result.error
    with app.services.db() as session:
        (table,) = paper_tables(session, result.paper_id)
    assert table.rows[2:] == ROWS and table.method == "words"
    assert [c.value for c in table.cells() if c.row_header == "Ours"] == [85.1, 80.3, 0.94]
    app.remove(result.paper_id)
    with app.services.db() as session:
        assert session.scalar(select(func.count()).select_from(PaperTable)) == 0


def test_reader_tables_off_ingests_no_table(reader_env, monkeypatch, table_pdf):
    from reader.facade import Reader

    monkeypatch.setenv("READER_TABLES", "off")
    app = Reader()
    (result,) = app.ingest([table_pdf])
    with app.services.db() as session:
        assert paper_tables(session, result.paper_id) == []


@pytest.mark.skipif(not SPECTER.exists(), reason="needs ../shared/papers")
def test_a_shared_papers_ablation_table_keeps_every_cell_with_its_headers():
    parsed = parse_pdf(SPECTER)
    tables = {t.label: t for t in find_tables(SPECTER.read_bytes(), parsed.captions, "words")}
    assert set(tables) == {"Table 1", "Table 2", "Table 3"}
    cells = {(c.row_header, c.col_header): c.text for c in tables["Table 2"].cells()}
    assert cells[("SPECTER", "CLS")] == "84.2"
    assert cells[("−abstract", "USR")] == "72.2"
    assert cells[("Start w/ BERT-Large", "Avg.")] == "77.5"
    assert len(cells) == 30
    # Table 1's decimal points are glyphs of their own: read from the words, "78.4" stays whole
    sif = [c.text for c in tables["Table 1"].cells() if c.row_header.startswith("SIF")]
    assert sif[:3] == ["78.4", "81.4", "79.4"]


def test_a_stored_analysis_keeps_the_tables_word_first_and_show_json_lists_the_tables(app, table_pdf):
    from reader.audit.loop import AuditResult, Iteration, LoopResult, SentenceResult
    from reader.audit.record import save_analysis
    from reader.audit.verify import EvidenceRef
    from reader.store.db import transaction

    (result,) = app.ingest([table_pdf])
    right = "The proposed model improves on BERT by 3.2 points on SQA."
    wrong = "RoBERTa reaches 0.94 F1."
    passage = EvidenceRef(None, 1, 1, "Our model reaches 85.1 on SQA.")
    # a tool's finding quoting a sentence with a number a table holds: its item's evidence alone
    finding = "On what it compares with, the paper says (p. 1): “Ours reaches 0.94 F1 against RoBERTa”."
    item = EvidenceRef(None, 1, 1, "Ours reaches 0.94 F1 against RoBERTa.")
    audit = AuditResult(
        [
            SentenceResult(right, "supported", "YES", [], [passage]),
            SentenceResult(wrong, "unsupported", "", []),
            SentenceResult(
                finding, "supported", "", [], [item], decided_by="tool", checklist_item="baselines"
            ),
        ]
    )
    text = f"{right} {wrong} {finding}"
    with transaction(app.services.db) as session:
        save_analysis(
            session,
            paper_id=result.paper_id,
            kind="synthesis",
            loop=LoopResult([Iteration(text, audit)], text),
        )
    shown = app.paper(result.paper_id).analyses().to_json()
    sentences = {s["text"]: s for s in shown["analyses"][0]["sentences"]}
    first, second = sentences[right]["evidence"]
    assert first["text"] == "85.1 − 81.9 = 3.2 (Table 2, Accuracy / SQA, p. 1)" and first["pages"] == "1"
    assert second["text"] == passage.text
    assert sentences[wrong]["evidence"][0]["text"] == 'Table 2 (p. 1): "Ours" × "F1" = 0.94'
    assert [e["text"] for e in sentences[finding]["evidence"]] == [item.text]
    (table,) = shown["tables"]
    assert table["label"] == "Table 2" and table["rows"][2:] == ROWS and table["header_rows"] == 2


def test_the_export_writes_each_table_as_csv_beside_the_note_and_lists_it(app, table_pdf, tmp_path):
    import csv

    from test_export import add_analysis

    (result,) = app.ingest([table_pdf])
    text = "The proposed model improves on BERT by 3.2 points on SQA."
    add_analysis(app.services.db, result.paper_id, "synthesis", [(text, "supported")])
    exported = app.export(tmp_path / "notes")
    (note,) = exported.notes
    (table_file,) = exported.tables
    assert (
        table_file.parent == note.parent and table_file.name == note.name.removesuffix(".md") + "-table-2.csv"
    )
    with open(table_file, encoding="utf-8", newline="") as fh:
        rows = list(csv.reader(fh))
    assert rows[1] == HEADER and rows[2:] == ROWS
    body = note.read_text(encoding="utf-8")
    assert "## Tables" in body and f"[CSV]({table_file.name})" in body
    assert "| Ours | 85\\.1 | 80\\.3 | 0\\.94 |" in body or "| Ours | 85.1 | 80.3 | 0.94 |" in body
