"""`reader stats` and `--no-cache` through the command line."""

import json

from click.testing import CliRunner

from loopback_openai import LoopbackOpenAI
from reader.store.calls import CallStore
from reader.cli import cli
from reader.llm.base import user
from reader.llm.logged import LoggedLLM
from reader.llm.scripted import ScriptedLLM
from reader.store.db import transaction
from reader.store.tables import Paper


def add_paper(db, paper_id, title):
    with transaction(db) as session:
        session.add(Paper(id=paper_id, title=title, source_path=f"/x/{paper_id}.pdf",
                          source_kind="pdf", pages=3))


def record_calls(db):
    add_paper(db, "a" * 64, "Attention Is All You Need")
    add_paper(db, "b" * 64, "深度学习综述")
    gen = LoggedLLM(ScriptedLLM(lambda p: "a long critique text"), "generator", CallStore(db))
    ver = LoggedLLM(ScriptedLLM(lambda p: "[1] YES", model="checker"), "verifier", CallStore(db))
    gen.complete(user("critique A"), stage="critique", paper_id="a" * 64)
    gen.complete(user("critique A"), stage="critique", paper_id="a" * 64)  # cached
    ver.complete(user("verify A"), stage="verify", paper_id="a" * 64)
    gen.complete(user("critique B"), stage="critique", paper_id="b" * 64)
    failing = LoggedLLM(ScriptedLLM().enqueue(RuntimeError("boom")), "verifier", CallStore(db))
    try:
        failing.complete(user("verify B"), stage="verify", paper_id="b" * 64)
    except RuntimeError:
        pass


def test_stats_json_groups_by_stage_model_and_paper(app):
    record_calls(app.db)
    result = CliRunner().invoke(cli, ["stats", "--json"])
    assert result.exit_code == 0, result.output
    data = json.loads(result.output)
    assert data["total"]["calls"] == 5
    assert data["total"]["cached"] == 1 and data["total"]["errors"] == 1
    stages = {r["key"]: r for r in data["by_stage"]}
    assert stages["critique"]["calls"] == 3 and stages["critique"]["cached"] == 1
    assert stages["verify"]["errors"] == 1
    # The cache hit costs no tokens: two spent critique calls, not three.
    one_call = stages["critique"]["prompt_tokens"] // 2
    assert one_call > 0 and stages["critique"]["prompt_tokens"] == 2 * one_call
    models = {r["key"] for r in data["by_model"]}
    assert models == {"generator / scripted", "verifier / checker", "verifier / scripted"}
    papers = {r["key"]: r for r in data["by_paper"]}
    assert papers["a" * 64]["title"] == "Attention Is All You Need"
    assert papers["b" * 64]["title"] == "深度学习综述"


def test_stats_for_one_paper_by_title_or_prefix(app):
    record_calls(app.db)
    result = CliRunner().invoke(cli, ["stats", "--paper", "attention", "--json"])
    assert result.exit_code == 0, result.output
    data = json.loads(result.output)
    assert data["paper_id"] == "a" * 64 and data["total"]["calls"] == 3
    result = CliRunner().invoke(cli, ["stats", "--paper", "bbbbbb"])
    assert result.exit_code == 0, result.output
    assert result.output.startswith("2 LLM calls for paper bbbbbbbbbbbb: 0 from the cache, 1 failed")
    assert "critique" in result.output and "深度学习综述" in result.output


def test_stats_unknown_paper_is_a_one_line_error(app):
    record_calls(app.db)
    result = CliRunner().invoke(cli, ["stats", "--paper", "no such paper"])
    assert result.exit_code == 1
    assert result.output.strip() == (
        "Error: no paper matches 'no such paper'; see `reader papers` for ids and titles")


def test_stats_on_an_empty_log(app):
    result = CliRunner().invoke(cli, ["stats"])
    assert result.exit_code == 0 and "No LLM calls recorded." in result.output


def test_no_cache_option_reaches_the_app(reader_env, monkeypatch):
    with LoopbackOpenAI(respond=lambda p: "answer", models=("m",)) as server:
        monkeypatch.setenv("READER_LLM_BASE_URL", server.base_url)
        monkeypatch.setenv("READER_LLM_MODEL", "m")
        seen = {}

        import click

        @click.command("probe-llm")
        @click.pass_obj
        def probe(app):
            seen["use_cache"] = app.use_cache
            app.generator.complete(user("q"), stage="probe")

        cli.add_command(probe)
        try:
            runner = CliRunner()
            assert runner.invoke(cli, ["probe-llm"]).exit_code == 0
            assert runner.invoke(cli, ["probe-llm"]).exit_code == 0
            assert seen["use_cache"] is True and len(server.chat_requests) == 1
            assert runner.invoke(cli, ["--no-cache", "probe-llm"]).exit_code == 0
            assert seen["use_cache"] is False and len(server.chat_requests) == 2
            out = runner.invoke(cli, ["stats", "--json"]).output
            assert json.loads(out)["by_stage"][0] == {
                "key": "probe", "calls": 3, "cached": 1, "errors": 0, "prompt_tokens": 22,
                "completion_tokens": 2, "time_s": json.loads(out)["by_stage"][0]["time_s"], "title": ""}
        finally:
            cli.commands.pop("probe-llm", None)
