"""The extraction table across papers: each cell filled from the stored synthesis or the
paper's passages, with its source passage and page, audited like any sentence ([待验证] without
support), as `reader table --csv` and the web page's CSV download give it."""

from __future__ import annotations

import csv
import io

import pytest
from click.testing import CliRunner
from conftest import make_reader
from controls import real_claims, record_controls, yes_but_controls

from reader.audit.loop import Iteration, LoopResult, audit_sentences, mark_unsupported
from reader.audit.record import save_analysis
from reader.store.db import transaction

# four pages (form feeds), one section each and long enough to be a passage of its own, so
# every passage sits on its own page
PAPER_TEXT = """Robust Tagging of Noisy Tweets

Abstract

We tag named entities in noisy tweets, where spelling and casing vary from one post to the next.

1 Introduction

Named entity tagging of noisy tweets is hard because spelling varies and capital letters are rare. \
Taggers trained on newswire lose much of their accuracy on social media text. \
Users write names in lower case, shorten them, and invent new ones every week. \
Hashtags and mentions hide entities inside tokens that ordinary tokenizers do not split. \
A tagger for this text must therefore read words from their characters rather than from a fixed list.
\f
2 Method

The tagger combines a character BiLSTM with a CRF output layer. \
Character embeddings let the BiLSTM read misspelled words, and the CRF layer keeps the tags consistent. \
Word embeddings pretrained on a large crawl of posts are joined to the character states. \
Dropout between the layers keeps the model from memorising the spellings it has seen. \
The whole network is trained end to end with stochastic gradient descent and early stopping.
\f
3 Experimental setup

The WNUT-17 corpus contains 5,690 annotated tweets for training and testing. \
We compare with two baselines: a CRF tagger with hand-made features and the Stanford NER tagger. \
Each system is tuned on the development split and scored once on the held-out split. \
Entity types follow the shared task: person, location, corporation, product, creative work and group. \
Scores are the shared task's entity-level precision, recall and their harmonic mean.
\f
4 Results

The tagger reaches 91.4 F1 on the WNUT-17 test set, 4.1 points above the CRF baseline. \
Most remaining errors are on rare entity types. \
Creative works and groups are confused with each other more often than any other pair of types. \
Removing the character encoder costs the most, which shows that spelling carries the signal. \
Longer posts are tagged about as well as short ones, so length is not what makes a post hard.
"""
SYNTHESIS = {
    "Problem": "The paper addresses named entity tagging of noisy tweets, where spelling varies.",
    "Method": "The tagger combines a character BiLSTM with a CRF output layer.",
    # 97.9 is in no passage: the audit's guards find it unsupported whatever the verifier says
    "Key results": "The tagger reaches 97.9 F1 on the WNUT-17 test set.",
    "Relation to prior work": "It builds on CRF taggers trained on newswire.",
}


# The audit's control claims (reader.audit.control): the verifier answers them NO, so that its
# YES answers are trusted.
CONTROLS: set[str] = set()


@pytest.fixture(autouse=True)
def controls(monkeypatch):
    CONTROLS.clear()
    record_controls(monkeypatch, CONTROLS)


def yes_to_all():
    from reader.llm.scripted import ScriptedLLM

    return ScriptedLLM(lambda prompt: yes_but_controls(prompt, CONTROLS), model="scripted-checker")


@pytest.fixture
def library(reader_env, tmp_path):
    """A Reader over one ingested four-page text paper with a stored, audited synthesis."""
    verifier = yes_to_all()
    app = make_reader(llm=verifier, verifier=verifier)
    path = tmp_path / "tweets.txt"
    path.write_text(PAPER_TEXT, encoding="utf-8")
    [result] = app.ingest([path])
    store_synthesis(app, result.paper_id, SYNTHESIS)
    app.verifier_llm = verifier
    app.paper_id = result.paper_id
    return app


def store_synthesis(app, paper_id: str, sections: dict[str, str]) -> None:
    claims = list(sections.values())
    audit = audit_sentences(
        claims, paper_id=paper_id, verifier=yes_to_all(), search=app.services.search_index.search
    )
    text = "\n\n".join(f"## {heading}\n{body}" for heading, body in sections.items())
    text = mark_unsupported(text, audit.to_mark)
    with transaction(app.services.db) as session:
        save_analysis(
            session, paper_id=paper_id, kind="synthesis", loop=LoopResult([Iteration(text, audit)], text)
        )


def test_each_cell_has_its_value_source_and_page_and_an_unsupported_one_is_marked(library):
    calls_before = library.verifier_llm.calls
    table = library.library.extraction_table([library.paper_id[:12]])
    [row] = table.rows
    assert row.paper_id == library.paper_id and row.title == "Robust Tagging of Noisy Tweets"
    cells = row.cells

    task = cells["task"]
    assert task.value == SYNTHESIS["Problem"] and task.origin == "synthesis: Problem"
    assert task.verdict == "supported" and not task.marked and task.shown == task.value
    assert task.source.page == 1 and "noisy tweets" in task.source.text and task.source.chunk_id

    method = cells["method"]
    assert method.value == SYNTHESIS["Method"] and method.verdict == "supported"
    assert method.source.page == 2 and "character BiLSTM" in method.source.text

    datasets = cells["datasets"]  # the rigour checklist's: a size of data in a sentence about data
    assert datasets.value == "WNUT-17: 5,690 annotated tweets"
    assert datasets.origin == "checklist: Datasets and sizes (rule)"
    assert datasets.verdict == "supported" and datasets.source.page == 3
    assert "5,690 annotated tweets" in datasets.source.text
    assert datasets.quote == "The WNUT-17 corpus contains 5,690 annotated tweets for training and testing."

    baselines = cells["baselines"]  # the checklist's sentence that names the baselines compared
    assert baselines.value.startswith("We compare with two baselines: a CRF tagger")
    assert baselines.origin == "checklist: Baselines compared (rule)"
    assert baselines.verdict == "supported" and baselines.source.page == 3

    result = cells["result"]  # 97.9 is nowhere in the paper: unsupported by the guard, no verifier asked
    assert result.value == SYNTHESIS["Key results"]
    assert result.verdict == "unsupported" and result.marked
    assert result.shown == "[待验证] " + SYNTHESIS["Key results"]
    assert any("97.9" in reason for reason in result.reasons), result.reasons
    assert result.source.page == 4 and "91.4 F1" in result.source.text  # the passage that came nearest
    assert (
        result.quote
        == "The tagger reaches 91.4 F1 on the WNUT-17 test set, 4.1 points above the CRF baseline."
    )
    assert table.n_marked == 1

    # every cell went through the audit: the verifier saw each cell as a claim, but for the one
    # a guard had already found unsupported
    asked = library.verifier_llm.history[calls_before:]
    assert asked and all(call["stage"] == "audit" for call in asked)
    claims = {c for call in asked for _, c in real_claims(call["prompt"], CONTROLS)}
    assert {cell.value for key, cell in cells.items() if key != "result"} <= claims
    assert result.value not in claims
    assert table.llm_calls == len(asked)

    as_json = table.to_json()
    assert [c["key"] for c in as_json["columns"]] == ["task", "datasets", "method", "baselines", "result"]
    assert as_json["rows"][0]["cells"]["result"]["shown"].startswith("[待验证] ")
    assert as_json["rows"][0]["cells"]["datasets"]["pages"] == "p. 3"


def test_a_paper_without_a_synthesis_gets_the_rule_cells_and_says_what_is_missing(library, tmp_path):
    other = tmp_path / "other.txt"
    other.write_text(
        "Sparse Retrieval\n\nAbstract\n\nWe retrieve passages.\n\n1 Experimental setup\n\n"
        "The MS MARCO collection contains 8.8M passages for training.\n",
        encoding="utf-8",
    )
    [stored] = library.ingest([other])
    table = library.library.extraction_table([stored.paper_id, library.paper_id])
    assert [r.paper_id for r in table.rows] == [stored.paper_id, library.paper_id]  # the order given
    row = table.rows[0]
    assert (
        row.cells["task"].value == "" and row.cells["task"].verdict == ""
    )  # nothing claimed, nothing marked
    assert any("no synthesis stored" in note for note in row.notes)
    assert row.cells["datasets"].value == "MS MARCO: 8.8M passages"
    assert row.cells["datasets"].verdict == "supported"


def test_no_papers_or_too_many_is_one_line(library):
    from reader.errors import ReaderError
    from reader.table import MAX_PAPERS

    with pytest.raises(ReaderError, match="no papers chosen"):
        library.library.extraction_table([])
    with pytest.raises(ReaderError, match=f"at most {MAX_PAPERS}"):
        library.services.extraction_table([f"{i:064x}" for i in range(MAX_PAPERS + 1)])


def parse_csv(text: str) -> list[dict]:
    return list(csv.DictReader(io.StringIO(text)))


def check_csv_rows(rows: list[dict], paper_id: str) -> None:
    [row] = rows
    assert row["paper_id"] == paper_id and row["title"] == "Robust Tagging of Noisy Tweets"
    assert row["task"] == SYNTHESIS["Problem"] and row["task_verdict"] == "supported"
    assert row["task_pages"] == "1" and "noisy tweets" in row["task_source"]
    assert row["datasets"] == "WNUT-17: 5,690 annotated tweets" and row["datasets_pages"] == "3"
    assert row["method_pages"] == "2" and row["baselines_pages"] == "3"
    assert row["result"] == "[待验证] " + SYNTHESIS["Key results"]
    assert row["result_verdict"] == "unsupported" and row["result_pages"] == "4"
    assert row["result_source"] == (
        "The tagger reaches 91.4 F1 on the WNUT-17 test set, 4.1 points above the CRF baseline."
    )


def test_reader_table_writes_the_csv(library, monkeypatch, tmp_path):
    from reader.cli import cli

    monkeypatch.setattr("reader.facade.Reader", lambda *a, **k: library)
    out = tmp_path / "table.csv"
    result = CliRunner().invoke(
        cli, ["table", library.paper_id[:10], "--csv", str(out)], catch_exceptions=False
    )
    assert result.exit_code == 0, result.output
    assert "Robust Tagging of Noisy Tweets" in result.output
    assert "[待验证] The tagger reaches 97.9 F1" in result.output and "p. 4" in result.output
    assert f"wrote {out}" in result.output
    check_csv_rows(parse_csv(out.read_text(encoding="utf-8-sig")), library.paper_id)

    missing = CliRunner().invoke(
        cli, ["table", library.paper_id[:10], "--csv", str(tmp_path / "no" / "t.csv")]
    )
    assert missing.exit_code == 1
    assert "t.csv" in missing.output and "Traceback" not in missing.output
    assert len(missing.output.strip().splitlines()) == 1, missing.output


def test_a_cell_that_would_start_a_spreadsheet_formula_is_written_as_text():
    from reader.table import Cell, ExtractionTable, Source, TableRow
    from reader.table.model import COLUMNS

    cells = {key: Cell(key) for key, _ in COLUMNS}
    cells["task"] = Cell(
        "task", '=HYPERLINK("http://x")', "synthesis: Problem", [Source(1, 2, 2, "-1 is low")]
    )
    cells["task"].verdict = "supported"
    row = parse_csv(ExtractionTable([TableRow("p" * 64, "@title", cells)]).to_csv())[0]
    assert row["task"] == '\'=HYPERLINK("http://x")' and row["title"] == "'@title"
    assert row["task_source"] == "'-1 is low"


def test_the_web_page_lists_the_table_and_downloads_the_csv(library):
    from fastapi.testclient import TestClient

    from reader.web.app import create_app

    with TestClient(create_app(library)) as client:
        chooser = client.get("/table")
        assert chooser.status_code == 200
        assert f'value="{library.paper_id}"' in chooser.text  # a checkbox per paper

        token = chooser.text.split('name="csrf_token" value="', 1)[1].split('"', 1)[0]
        page = client.post("/table", data={"paper": library.paper_id, "csrf_token": token})  # builds it
        assert page.status_code == 200 and page.url.path == "/table"  # then shows it as stored
        assert "WNUT-17: 5,690 annotated tweets" in page.text
        assert "[待验证]" in page.text and "p. 4" in page.text
        assert f'href="/table.csv?paper={library.paper_id}"' in page.text

        download = client.get("/table.csv", params={"paper": library.paper_id})
        assert download.status_code == 200
        assert download.headers["content-type"].startswith("text/csv")
        assert "attachment" in download.headers["content-disposition"]
        assert "extraction-table.csv" in download.headers["content-disposition"]
        check_csv_rows(parse_csv(download.content.decode("utf-8-sig")), library.paper_id)

        bad = client.get("/table.csv", params={"paper": "not-an-id"})
        assert bad.status_code == 404 and "Traceback" not in bad.text


def test_a_paper_s_own_row_is_its_row_of_the_table(library):
    """`reader.paper(ref).table_row()`: the paper's row, as the table across papers has it."""
    row = library.paper(library.paper_id).table_row()
    [same] = library.library.extraction_table([library.paper_id]).rows
    assert row.to_json() == same.to_json()


def test_the_headline_result_is_the_key_results_sentence_with_a_figure_and_an_outcome():
    from reader.table.cells import synthesis_sections, synthesis_sentence

    # the wheat paper's Key results began with its setting; roark13's with a pointer to a table
    sections = synthesis_sections(
        "## Key results\n"
        "In a controlled environment experiment, heat stress (35:28 ± 0.08˚C) was initiated 10 days after anthesis. "
        "The gains are reported in Table 3. "
        "With the fully adapted ASR the F-score improves more than 13%, and it is only 3.4% worse than manual.\n"
    )
    assert synthesis_sentence(sections, "Key results", headline=True).startswith("With the fully adapted ASR")
    assert synthesis_sentence(sections, "Key results").startswith("In a controlled environment")
    captioned = synthesis_sections(
        "## Key results\n(B) Same analysis as in (A), at 4.5 Hz. Accuracy rises to 81.2%.\n"
    )
    assert synthesis_sentence(captioned, "Key results", headline=True) == "Accuracy rises to 81.2%."


def test_the_abstract_says_the_method_and_a_headline_result_with_a_figure_and_an_outcome():
    from reader.table.cells import abstract_method, headline

    abstract = (
        "Representation learning matters. We introduce the problem of generation in semantics. "
        "We propose SPECTER, a method to embed scientific documents. "
        "Categories and Subject Descriptors D.3.4 compilers. "
        "Our experiments show that SPECTER reduces error by 39% on average."
    )
    assert abstract_method(abstract) == "We propose SPECTER, a method to embed scientific documents."
    assert abstract_method("This paper shows how to assess sparse extractions with language models.")
    assert abstract_method("We present experiments on 1.5 million sentences.") == ""
    both = "We motivate this challenge on practical grounds and propose a simple data-driven approach."
    assert abstract_method(f"We introduce the problem of generation. {both}") == both
    assert headline(abstract, "") == "Our experiments show that SPECTER reduces error by 39% on average."
    # a synthesis sentence that scores higher stays; a subject code alone is no headline
    assert (
        headline("Categories and Subject Descriptors D.3.4 compilers.", "F1 rises to 91.4.")
        == "F1 rises to 91.4."
    )
    assert headline("Categories and Subject Descriptors D.3.4 compilers.", "") == ""
    assert headline("", "The tutorial provides an overview of recent advances.") == ""
    # from the synthesis too, a figure and a word of outcome: not a plot's caption, not a sentence
    # of method with one word of outcome (a perspective's and a position paper's Key results)
    assert headline("", "Accuracy rises to 81.2%.") == "Accuracy rises to 81.2%."
    assert (
        headline("", "For each pass, the upper plot shows the LFP at 5.5 Hz and the lower one spikes.") == ""
    )
    assert headline("", "They set the basis for an analysis matrix to score the elements of a city.") == ""


def test_the_task_is_the_synthesis_problem_when_it_names_one_else_the_abstracts_gap():
    from reader.table.cells import abstract_task

    abstract = (
        "Representation learning is a critical ingredient for NLP systems. "
        "Recent language models learn powerful representations, but these models do not leverage "
        "inter-document relatedness. We propose SPECTER."
    )
    stated = "The problem the paper addresses is assessing sparse extractions from text."
    assert abstract_task(abstract, stated) == ""  # the synthesis's sentence stays
    # SPECTER's synthesis opened its Problem with the abstract's context
    context = "For applications on scientific documents, the embeddings power strong performance."
    assert abstract_task(abstract, context) == (
        "Recent language models learn powerful representations, but these models do not leverage "
        "inter-document relatedness."
    )
    assert abstract_task("We propose SPECTER. It works well.", context) == ""  # the synthesis's stays


def test_the_table_takes_method_and_headline_result_from_the_abstract(library):
    from reader.store.tables import Paper

    with transaction(library.services.db) as session:
        session.get(Paper, library.paper_id).abstract = (
            "We propose a character BiLSTM tagger with a CRF output layer for noisy tweets. "
            "The tagger reaches 91.4 F1 on the WNUT-17 test set, 4.1 points above the CRF baseline."
        )
    [row] = library.library.extraction_table([library.paper_id]).rows
    method, result = row.cells["method"], row.cells["result"]
    assert method.origin == "abstract" and method.value.startswith("We propose a character BiLSTM")
    assert result.origin == "abstract" and result.value.startswith("The tagger reaches 91.4 F1")
    assert result.verdict == "supported" and result.source.page == 4
    assert row.cells["task"].origin == "synthesis: Problem"


def test_the_datasets_cell_names_the_data_by_a_name_before_its_size_not_after():
    from types import SimpleNamespace

    from reader.table.cells import checklist_value

    def cell(quote: str) -> str:
        return checklist_value("datasets", SimpleNamespace(quote=quote, value=""))

    # roark13: MCI is the subjects' diagnosis, not the data's name
    roark13 = (
        "Corpus: Our models were trained on immediate and delayed retellings from 144 subjects with a mean "
        "age of 85.4, of whom 36 were clinically diagnosed with MCI (training set)."
    )
    assert cell(roark13) == "144 subjects"
    assert cell("We sanity-check the two spaces on MEN (Bruni et al., 2012), a 3,000 items data set.") == (
        "MEN: 3,000 items"
    )
    assert cell("The CIFAR-10 dataset has 60,000 images.") == "CIFAR-10: 60,000 images"
    assert cell("A total of 720 images were collected using a CCD detector.") == "720 images"
