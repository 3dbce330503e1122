"""Key results from the tables (reader.deepread.material.table_results): the main results table's
headline row, with its data and metric, is given to the writer under "Key results", by the deep
read too (the scripted LLM records what it was asked)."""

from __future__ import annotations

from table_pdf import make_table_pdf
from test_deepread import fake_search

from reader.deepread.material import headline_row, main_results_table, table_results
from reader.deepread.read import deep_read
from reader.deepread.writer import Request, write_document
from reader.ingest.pdf import parse_pdf
from reader.ingest.tables import find_tables
from reader.llm.dryrun import claims_with_evidence
from reader.llm.scripted import ScriptedLLM
from reader.text.grid import Table, guess_header_rows
from reader.text.split import split_sentences

HEADLINE = (
    "Table 2 (p. 1, Accuracy of three models on SQA and WikiQA, and their F1.): Ours has "
    "Accuracy / SQA 85.1 (the best of 3), Accuracy / WikiQA 80.3 (the best of 3), F1 0.94 (the best of 3)."
)


def _tables(tmp_path):
    path = make_table_pdf(tmp_path / "tables.pdf")
    return find_tables(path.read_bytes(), parse_pdf(path).captions)


def test_the_headline_row_of_the_main_results_table_with_its_data_and_metric(tmp_path):
    assert table_results(_tables(tmp_path)) == [HEADLINE]
    assert table_results([]) == []


def test_only_the_captions_first_sentence_goes_into_the_line(tmp_path):
    # longeval's Table 2 caption, two sentences long, had split the line in two
    (table,) = [t for t in _tables(tmp_path) if t.label == "Table 2"]
    table.caption = table.caption.rstrip(".") + ". 73% of the papers do not evaluate with humans."
    (line,) = table_results([table])
    assert line == HEADLINE and len(split_sentences(line)) == 1


def test_the_results_table_is_chosen_by_its_caption_and_an_error_column_counts_its_lowest_best():
    sizes = Table(
        "Table 1", "Table 1: Dataset sizes.", 2, [], [["Data", "Train", "Test"], ["A", "900", "100"]], 1
    )
    results = Table(
        "Table 3",
        "Table 3: Results on the test set.",
        5,
        [],
        [
            ["Model", "Accuracy", "Error"],
            ["Base", "81.0", "19.0"],
            ["Large", "84.0", "16.0"],
            ["Tiny", "70.0", "30.0"],
        ],
        1,
    )
    assert main_results_table([sizes, results]) is results
    row = headline_row(results)
    assert [(c.row_header, c.text) for c in row] == [("Large", "84.0"), ("Large", "16.0")]


def test_a_table_of_mixed_measures_or_of_settings_gives_no_headline_row():
    # the README sample's Table 1: a measure per row, counts and ranges among the values; its
    # second and third rows were once taken as column headers ("Value / 14 of 14")
    measures = Table(
        "Table 1",
        "Table 1: Ingest of the 14 shared papers (186 pages).",
        3,
        [],
        [
            ["Measure", "Value"],
            ["Papers with a title", "14 of 14"],
            ["Papers with references", "14 of 14"],
            ["Lowest coverage", "96.6%"],
            ["Median coverage", "99.8%"],
            ["Passages per paper", "44 to 112"],
        ],
        guess_header_rows([["Measure", "Value"], ["Papers with a title", "14 of 14"], ["Lowest", "96.6%"]]),
    )
    assert measures.header_rows == 1
    assert table_results([measures]) == []
    thresholds = Table(
        "Table 9",
        "Table 9: Accuracy when imposing a confidence threshold.",
        8,
        [],
        [["Threshold", "Accuracy"], ["0.5", "0.41"], ["0.65", "0.45"], ["0.8", "0.44"]],
        1,
    )
    assert table_results([thresholds]) == []


def _request(tables, kind="synthesis"):
    return Request(
        kind=kind,
        title="Reading Tables",
        language="en",
        context="## Results\nOur model reaches 85.1 on SQA.",
        left_out=[],
        sections=[],
        paper_id="p" * 64,
        words_per_heading=40,
        tables=tables,
    )


def test_the_writer_is_given_the_headline_row_under_key_results_only(tmp_path):
    tables = _tables(tmp_path)
    generator = ScriptedLLM(lambda prompt: "Ours reaches 85.1 on SQA.")
    write_document(generator, _request(tables))
    asked = {h["prompt"].rsplit('heading "', 1)[-1].split('"', 1)[0]: h["prompt"] for h in generator.history}
    assert HEADLINE in asked["Key results"] and "<material>" in asked["Key results"]
    assert all(HEADLINE not in prompt for heading, prompt in asked.items() if heading != "Key results")
    generator = ScriptedLLM(lambda prompt: "Ours reaches 85.1 on SQA.")
    write_document(generator, _request([]))
    assert all("Ours has" not in h["prompt"] for h in generator.history)


def test_the_deep_read_gives_the_stored_tables_headline_row_to_the_synthesis(app, tmp_path):
    (result,) = app.ingest([make_table_pdf(tmp_path / "tables.pdf")])
    generator = ScriptedLLM(lambda prompt: "The proposed model reaches 85.1 on SQA.")
    verifier = ScriptedLLM(lambda prompt: "\n".join(f"[{n}] YES" for n, _, _ in claims_with_evidence(prompt)))
    db = app.services.db
    deep_read(result.paper_id, db=db, generator=generator, verifier=verifier, search=fake_search(db))
    key_results = [
        h["prompt"] for h in generator.history if h["stage"] == "synthesis" and HEADLINE in h["prompt"]
    ]
    assert len(key_results) == 1 and 'heading "Key results"' in key_results[0]
    assert all(HEADLINE not in h["prompt"] for h in generator.history if h["stage"] == "critique")
