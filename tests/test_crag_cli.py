import json
from dataclasses import replace

import pytest
from click.testing import CliRunner
from controls import record_controls, yes_but_controls
from crag_fakes import CHUNKS, PAPER_A, PAPER_B, TITLES, CragLLM, FakeSearch
from sqlalchemy import select

from reader.cli import cli
from reader.llm.scripted import ScriptedLLM
from reader.store.tables import Chunk, Paper, Question


class FakeIndex:
    def __init__(self):
        self.search_fn = FakeSearch()

    def search(self, query, paper_id=None, top_k_per_path=3):
        return self.search_fn(query, paper_id)


@pytest.fixture
def library(app, monkeypatch):
    with app.services.db() as session:
        for pid, name in ((PAPER_A, "topics.pdf"), (PAPER_B, "wheat.pdf")):
            session.add(
                Paper(id=pid, title=TITLES[pid], source_path=f"/papers/{name}", source_kind="pdf", pages=8)
            )
        for ordinal, (cid, pid, page, text) in enumerate(CHUNKS):
            session.add(
                Chunk(id=cid, paper_id=pid, ordinal=ordinal, page_start=page, page_end=page, text=text)
            )
        session.commit()
    app.services.search_index = FakeIndex()
    app.services.generator = CragLLM(relevant_words=["baselines", "gc-ms"])
    controls = record_controls(monkeypatch)  # the groundedness check's control claims: NO to them
    app.services.verifier = ScriptedLLM(lambda prompt: yes_but_controls(prompt, controls))
    monkeypatch.setattr("reader.facade.Reader", lambda *a, **k: app)
    return app


def invoke(*args, input=None):
    result = CliRunner().invoke(cli, list(args), input=input, catch_exceptions=False)
    return result


def test_ask_prints_answer_sources_grounded_route_and_costs(library):
    out = invoke("ask", "Which baselines do they compare against?", "--paper", PAPER_A[:8])
    assert out.exit_code == 0, out.output
    text = out.output
    assert "They compare against LDA and TF-IDF [1]." in text
    assert "[1] Citation Topic Models, p. 5" in text or "[1] Citation Topic Models, p. 6" in text
    assert "The baselines are LDA and TF-IDF retrieval." in text  # the quote
    assert "Grounded: yes" in text
    assert "Route: correct · confidence" in text
    assert "LLM calls" in text
    with library.services.db() as session:
        [row] = session.scalars(select(Question)).all()
    assert row.paper_id == PAPER_A and row.route == "correct" and row.grounded
    assert row.answer.startswith("They compare")
    assert {"sources", "grades", "rewrites", "llm_calls"} <= set(row.details)


def test_ask_json_across_the_collection(library):
    out = invoke("ask", "How were the metabolite profiles measured with GC-MS?", "--json")
    assert out.exit_code == 0, out.output
    data = json.loads(out.output)
    assert data["paper_id"] is None
    assert data["sources"][0]["paper_id"] == PAPER_B and data["sources"][0]["external"] is False
    assert isinstance(data["grades"][0]["reasoning"], str)


def test_ask_not_found_is_stored_too(library):
    out = invoke("ask", "Which GPU hardware was used?", "--paper", PAPER_A)
    assert out.exit_code == 0
    assert out.output.startswith("Not found in the papers.")
    with library.services.db() as session:
        [row] = session.scalars(select(Question)).all()
    assert row.answer == "Not found in the papers." and row.details["sources"] == []


def test_ask_interactive_keeps_a_session(library):
    out = invoke(
        "ask",
        "--interactive",
        "--paper",
        PAPER_A,
        input="Which baselines do they compare against?\nWhich GPU hardware was used?\n\n",
    )
    assert out.exit_code == 0, out.output
    assert "They compare against LDA" in out.output and "Not found in the papers." in out.output
    with library.services.db() as session:
        assert len(session.scalars(select(Question)).all()) == 2


def test_ask_errors_are_one_line(library, app):
    out = CliRunner().invoke(cli, ["ask", "Which?", "--paper", "ffffffff"])
    assert out.exit_code != 0 and "ffffffff" in out.output and "Traceback" not in out.output
    out = CliRunner().invoke(cli, ["ask"])
    assert out.exit_code != 0 and "give a question" in out.output


def test_ask_on_an_empty_library_says_to_ingest(app, monkeypatch):
    monkeypatch.setattr("reader.facade.Reader", lambda *a, **k: app)
    out = CliRunner().invoke(cli, ["ask", "Which baselines?"])
    assert out.exit_code != 0 and "reader ingest" in out.output


def test_calibrate_reports_routes_and_accuracy_per_threshold(library, tmp_path):
    questions = tmp_path / "q.jsonl"
    rows = [
        {
            "id": "a1",
            "question": "Which baselines do they compare against?",
            "paper": "topics.pdf",
            "answer_paper": "topics.pdf",
        },
        {
            "id": "a2",
            "question": "How were metabolite profiles measured with GC-MS?",
            "paper": None,
            "answer_paper": PAPER_B,
        },
        {
            "id": "n1",
            "question": "Which GPU hardware was used?",
            "paper": "topics.pdf",
            "answer_paper": "none",
        },
    ]
    questions.write_text("\n".join(json.dumps(r) for r in rows) + "\n")
    out = invoke(
        "calibrate",
        "--questions",
        str(questions),
        "--thresholds",
        "0.6,0.95",
        "--ungrounded",
        "keep",
        "--json",
    )
    assert out.exit_code == 0, out.output
    report = json.loads(out.stdout)  # progress lines go to stderr
    assert "[1/3] a1 counts 0.6, quote 0.9, answers at P(YES) 0.3 from 0.3: correct, ok" in out.stderr
    # 100% against 33%
    assert report["recommended"] == {
        "routing": "counts",
        "threshold": 0.6,
        "quote_threshold": 0.9,
        "refusal": "p_yes",
        "answer_p_yes": 0.3,
        "evidence_p_yes": 0.3,
        "ungrounded": "keep",
        "grader": False,  # READER_CRAG_GRADER=off in the tests: the scripted LLM grades every passage
    }
    by_t = {t["threshold"]: t for t in report["thresholds"]}
    assert by_t[0.6]["answer_accuracy"] == 1.0 and by_t[0.6]["refusal_accuracy"] == 1.0
    assert by_t[0.6]["routes"] == {"correct": 1, "ambiguous": 0, "incorrect": 1} | by_t[0.6]["routes"]
    # the scripted grader gives 0.9, so a 0.95 threshold keeps nothing: every answer becomes a refusal
    assert by_t[0.95]["answer_accuracy"] == 0.0 and by_t[0.95]["refusal_accuracy"] == 1.0
    assert by_t[0.6]["latency_p95_s"] >= by_t[0.6]["latency_p50_s"]
    text = invoke("calibrate", "--questions", str(questions), "--thresholds", "0.6").output
    assert "answer acc" in text and "100%" in text
    subset = json.loads(invoke("calibrate", "--questions", str(questions), "--ids", "n1", "--json").stdout)
    assert [q["id"] for q in subset["thresholds"][0]["questions"]] == ["n1"]
    out = CliRunner().invoke(cli, ["calibrate", "--questions", str(questions), "--ids", "zz"])
    assert out.exit_code != 0 and "zz" in out.output


def test_calibrate_names_a_missing_paper(library, tmp_path):
    questions = tmp_path / "q.jsonl"
    questions.write_text(
        json.dumps({"id": "x", "question": "q?", "paper": None, "answer_paper": "missing.pdf"}) + "\n"
    )
    out = CliRunner().invoke(cli, ["calibrate", "--questions", str(questions)])
    assert out.exit_code != 0 and "missing.pdf" in out.output and "reader ingest" in out.output


def test_calibrate_needs_every_expected_term_and_every_answer_paper(library, tmp_path):
    questions = tmp_path / "q.jsonl"
    rows = [
        {
            "id": "a1",
            "question": "Which baselines do they compare against?",
            "paper": "topics.pdf",
            "answer_paper": "topics.pdf",
            "expected_terms": ["LDA", "tf-idf"],
        },
        {
            "id": "a2",
            "question": "Which baselines do they compare against?",
            "paper": "topics.pdf",
            "answer_paper": "topics.pdf",
            "expected_terms": ["LDA", "BM25"],
        },
        {
            "id": "t1",
            "question": "Which baselines do they compare against?",
            "paper": None,
            "answer_paper": ["topics.pdf", "wheat.pdf"],
            "expected_terms": ["LDA"],
        },
    ]
    questions.write_text("\n".join(json.dumps(r) for r in rows) + "\n")
    out = invoke("calibrate", "--questions", str(questions), "--thresholds", "0.6", "--json")
    assert out.exit_code == 0, out.output
    [t] = json.loads(out.stdout)["thresholds"]
    by_id = {q["id"]: q for q in t["questions"]}
    assert by_id["a1"]["right"] and by_id["a1"]["terms_right"]
    assert not by_id["a2"]["right"] and by_id["a2"]["missing_terms"] == ["BM25"]
    assert not by_id["t1"]["right"] and by_id["t1"]["cites_answer_papers"] is False
    assert t["answer_accuracy"] == round(1 / 3, 3) and t["terms_right"] == round(2 / 3, 3)
    text = invoke("calibrate", "--questions", str(questions), "--thresholds", "0.6").output
    assert "terms" in text
    questions.write_text(json.dumps(rows[2] | {"answer_paper": ["topics.pdf", "missing.pdf"]}) + "\n")
    out = CliRunner().invoke(cli, ["calibrate", "--questions", str(questions)])
    assert out.exit_code != 0 and "missing.pdf" in out.output


def test_external_search_is_off_unless_named(library, monkeypatch):
    from loopback_scholarly import ScholarlyServer

    server = ScholarlyServer()
    try:
        from functools import partial

        from reader.crag import scholarly

        monkeypatch.setitem(scholarly.ADAPTERS, "arxiv", partial(scholarly.Arxiv, base_url=server.url))
        result = invoke("ask", "What GPU was used?", "--paper", PAPER_A[:8], "--json")
        assert json.loads(result.output)["answer"] == "Not found in the papers." and server.requests == []
        # READER_EXTERNAL_SEARCH=arxiv
        library.services.settings = replace(library.settings, external_search="arxiv")
        invoke("ask", "What GPU was used?", "--paper", PAPER_A[:8], "--json")
        assert [r["service"] for r in server.requests] == ["arxiv"]
        invoke("ask", "What GPU was used?", "--paper", PAPER_A[:8], "--external", "off")
        assert len(server.requests) == 1  # --external off wins over the setting
    finally:
        server.close()


def test_an_unknown_external_search_names_the_setting(library):
    result = CliRunner().invoke(cli, ["ask", "Which baselines?", "--external", "scholar"])
    assert result.exit_code != 0
    assert "--external='scholar': unknown external search scholar: use one or more of" in result.output
    library.services.settings = replace(library.settings, external_search="arxiv,bing")
    result = CliRunner().invoke(cli, ["ask", "Which baselines?"])
    assert "READER_EXTERNAL_SEARCH='arxiv,bing': unknown external search bing" in result.output


def test_external_search_settings_are_read_and_described(tmp_path):
    from reader.config import describe, load_settings

    settings = load_settings(
        {
            "READER_HOME": str(tmp_path),
            "READER_EXTERNAL_SEARCH": "arxiv,openalex",
            "READER_SEMANTIC_SCHOLAR_KEY": "secret-key-123",
            "READER_OPENALEX_MAILTO": "me@x.org",
        }
    )
    assert (settings.external_search, settings.semantic_scholar_key, settings.openalex_mailto) == (
        "arxiv,openalex",
        "secret-key-123",
        "me@x.org",
    )
    shown = dict(describe(settings))
    assert shown["READER_EXTERNAL_SEARCH"] == "arxiv,openalex" and "secret-key-123" not in shown.values()
    assert dict(describe(load_settings({"READER_HOME": str(tmp_path)})))["READER_EXTERNAL_SEARCH"].startswith(
        "off"
    )


def two_questions(tmp_path):
    """One answerable question and one no paper answers, as a question file."""
    questions = tmp_path / "q.jsonl"
    rows = [
        {
            "id": "a1",
            "question": "Which baselines do they compare against?",
            "paper": "topics.pdf",
            "answer_paper": "topics.pdf",
        },
        {
            "id": "n1",
            "question": "Which GPU hardware was used?",
            "paper": "topics.pdf",
            "answer_paper": "none",
        },
    ]
    questions.write_text("\n".join(json.dumps(r) for r in rows) + "\n")
    return questions


def test_calibrate_grids_both_routings_and_writes_the_recommended_setting(library, tmp_path):
    from reader.config import load_settings

    questions = two_questions(tmp_path)
    out = invoke(
        "calibrate",
        "--questions",
        str(questions),
        "--thresholds",
        "0.6,0.95",
        "--routing",
        "counts,confidence",
        "--theta-high",
        "0.7,0.9",
        "--theta-low",
        "0.3",
        "--json",
        "--write",
    )
    report = json.loads(out.stdout)
    labels = [t["label"] for t in report["thresholds"]]
    assert labels == [
        f"{name}, quote 0.9, answers at P(YES) 0.3 from 0.3, unsupported withheld"
        for name in (
            "counts 0.6",
            "counts 0.95",
            "confidence 0.6 / 0.7 / 0.3",
            "confidence 0.6 / 0.9 / 0.3",
            "confidence 0.95 / 0.7 / 0.3",
            "confidence 0.95 / 0.9 / 0.3",
        )
    ]
    best = max(report["thresholds"], key=lambda t: t["accuracy"])
    assert report["recommended"]["threshold"] == 0.6 and best["accuracy"] == 1.0
    config = library.settings.home / "config.toml"
    assert "wrote the recommended setting to" in out.stderr and config.is_file()
    settings = load_settings({"READER_HOME": str(library.settings.home)})
    assert (settings.crag.routing, settings.crag.threshold) == (report["recommended"]["routing"], 0.6)
    text = invoke("calibrate", "--questions", str(questions), "--thresholds", "0.6").output
    assert "recommended: counts 0.6" in text


def test_calibrate_grids_the_quote_threshold_keeps_every_row_and_writes_off(library, tmp_path):
    from reader.config import load_settings

    questions = two_questions(tmp_path)
    saved = tmp_path / "rows.jsonl"
    out = invoke(
        "calibrate",
        "--questions",
        str(questions),
        "--thresholds",
        "0.6",
        "--quote",
        "off,0.7",
        "--rows",
        str(saved),
        "--json",
        "--write",
    )
    assert out.exit_code == 0, out.output
    report = json.loads(out.stdout)
    assert [t["label"] for t in report["thresholds"]] == [
        "counts 0.6, quote off, answers at P(YES) 0.3 from 0.3, unsupported withheld",
        "counts 0.6, quote 0.7, answers at P(YES) 0.3 from 0.3, unsupported withheld",
    ]
    # question-major: each question through both settings before the next question
    lines = [json.loads(line) for line in saved.read_text().splitlines()]
    assert [(r["id"], r["setting"]["quote_threshold"]) for r in lines] == [
        ("a1", None),
        ("a1", 0.7),
        ("n1", None),
        ("n1", 0.7),
    ]
    assert all(r["right"] for r in lines) and lines[0]["quoted"] is False
    # same accuracy and calls: the earlier setting ("off") is recommended and written as off
    assert report["recommended"]["quote_threshold"] is None
    config = (library.settings.home / "config.toml").read_text()
    assert 'crag_quote_threshold = "off"' in config
    assert load_settings({"READER_HOME": str(library.settings.home)}).crag.quote_threshold is None
    both = json.loads(
        invoke(
            "calibrate",
            "--questions",
            str(questions),
            "--thresholds",
            "0.6",
            "--refusal",
            "p_yes,grader",
            "--json",
        ).stdout
    )
    assert [t["label"] for t in both["thresholds"]] == [
        "counts 0.6, quote 0.9, answers at P(YES) 0.3 from 0.3, unsupported withheld",
        "counts 0.6, quote 0.9, grader refuses, unsupported withheld",
    ]
    assert [t["setting"]["refusal"] for t in both["thresholds"]] == ["p_yes", "grader"]
    kept = json.loads(
        invoke(
            "calibrate",
            "--questions",
            str(questions),
            "--thresholds",
            "0.6",
            "--routing",
            "counts,confidence",
            "--keep",
            "0.27",
            "--theta-high",
            "0.42",
            "--json",
        ).stdout
    )
    assert [t["label"] for t in kept["thresholds"]] == [
        "counts 0.6, quote 0.9, answers at P(YES) 0.3 from 0.3, unsupported withheld",
        "confidence 0.27 / 0.42 / 0.3, quote 0.9, answers at P(YES) 0.3 from 0.3, unsupported withheld",
    ]
    withheld = json.loads(
        invoke(
            "calibrate",
            "--questions",
            str(questions),
            "--thresholds",
            "0.6",
            "--ungrounded",
            "keep,refuse",
            "--json",
            "--write",
        ).stdout
    )
    assert [t["label"] for t in withheld["thresholds"]] == [
        "counts 0.6, quote 0.9, answers at P(YES) 0.3 from 0.3",
        "counts 0.6, quote 0.9, answers at P(YES) 0.3 from 0.3, unsupported withheld",
    ]
    assert load_settings({"READER_HOME": str(library.settings.home)}).crag.ungrounded == "keep"
    out = CliRunner().invoke(cli, ["calibrate", "--questions", str(questions), "--refusal", "nobody"])
    assert out.exit_code != 0 and "unknown refusal nobody" in out.output
    out = CliRunner().invoke(cli, ["calibrate", "--questions", str(questions), "--quote", "1.5"])
    assert out.exit_code != 0 and "--quote '1.5'" in out.output
    out = CliRunner().invoke(
        cli,
        ["calibrate", "--questions", str(questions), "--rows", str(tmp_path / "no-such-dir" / "rows.jsonl")],
    )
    assert out.exit_code != 0 and "cannot write" in out.output and "Traceback" not in out.output


def test_calibrate_grids_the_p_yes_rule_and_writes_its_thresholds(library, tmp_path):
    from reader.config import load_settings

    questions = two_questions(tmp_path)
    report = json.loads(
        invoke(
            "calibrate",
            "--questions",
            str(questions),
            "--thresholds",
            "0.6",
            "--refusal",
            "writer,p_yes",
            "--answer-p-yes",
            "0.5,0.7",
            "--json",
        ).stdout
    )
    assert [t["label"] for t in report["thresholds"]] == [
        "counts 0.6, quote 0.9, unsupported withheld",
        "counts 0.6, quote 0.9, answers at P(YES) 0.5 from 0.3, unsupported withheld",
        "counts 0.6, quote 0.9, answers at P(YES) 0.7 from 0.3, unsupported withheld",
    ]
    assert "answer_p_yes" not in report["thresholds"][0]["setting"]
    invoke(
        "calibrate",
        "--questions",
        str(questions),
        "--thresholds",
        "0.6",
        "--refusal",
        "p_yes",
        "--answer-p-yes",
        "0.7",
        "--write",
    )
    settings = load_settings({"READER_HOME": str(library.settings.home)})
    assert (settings.crag.refusal, settings.crag.answer_p_yes, settings.crag.evidence_p_yes) == (
        "p_yes",
        0.7,
        0.3,
    )
    out = CliRunner().invoke(
        cli, ["calibrate", "--questions", str(questions), "--refusal", "p_yes", "--answer-p-yes", "0.1"]
    )
    assert out.exit_code != 0 and "--answer-p-yes 0.1" in out.output and "Traceback" not in out.output


@pytest.mark.parametrize(
    "env, message",
    [
        ({"READER_CRAG_ROUTING": "fancy"}, "READER_CRAG_ROUTING='fancy': use counts or confidence"),
        (
            {"READER_CRAG_THETA_LOW": "0.8"},
            "READER_CRAG_THETA_LOW=0.8 must be below READER_CRAG_THETA_HIGH=0.7",
        ),
        ({"READER_CRAG_THRESHOLD": "2"}, "READER_CRAG_THRESHOLD=2.0 must lie between 0 and 1"),
        ({"READER_CRAG_QUOTE_THRESHOLD": "2"}, "READER_CRAG_QUOTE_THRESHOLD=2.0 must lie between 0 and 1"),
        ({"READER_CRAG_QUOTE_THRESHOLD": "maybe"}, "READER_CRAG_QUOTE_THRESHOLD='maybe' is not a number"),
        ({"READER_CRAG_REFUSAL": "nobody"}, "READER_CRAG_REFUSAL='nobody': use writer"),
        ({"READER_CRAG_UNGROUNDED": "maybe"}, "READER_CRAG_UNGROUNDED='maybe': use keep"),
        (
            {"READER_CRAG_EVIDENCE_P_YES": "0.7"},
            "READER_CRAG_EVIDENCE_P_YES=0.7 must not exceed READER_CRAG_ANSWER_P_YES=0.3",
        ),
        ({"READER_CRAG_ANSWER_P_YES": "1.5"}, "READER_CRAG_ANSWER_P_YES=1.5 must lie between 0 and 1"),
    ],
)
def test_routing_settings_are_checked(tmp_path, env, message):
    from reader.config import load_settings
    from reader.errors import ConfigError

    with pytest.raises(ConfigError) as caught:
        load_settings({"READER_HOME": str(tmp_path), **env})
    assert message in str(caught.value)
