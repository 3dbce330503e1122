"""`reader stats` and `--no-cache` through the command line."""

import json
import re

from click.testing import CliRunner
from loopback_openai import LoopbackOpenAI

from reader.cli import cli
from reader.config import EMBEDDED_MODEL_NAME, LLMSettings
from reader.llm.base import user
from reader.llm.logged import LoggedLLM
from reader.llm.openai_compat import OpenAICompatLLM
from reader.llm.scripted import ScriptedLLM
from reader.store.calls import CallStore
from reader.store.db import transaction
from reader.store.tables import Paper


def add_paper(db, paper_id, title):
    with transaction(db) as session:
        session.add(
            Paper(id=paper_id, title=title, source_path=f"/x/{paper_id}.pdf", source_kind="pdf", pages=3)
        )


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
    record_calls(app.services.db)
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
    record_calls(app.services.db)
    result = CliRunner().invoke(cli, ["stats", "--paper", "attention", "--json"])
    assert result.exit_code == 0, result.output
    data = json.loads(result.output)
    assert data["paper_id"] == "a" * 64 and data["total"]["calls"] == 3
    result = CliRunner().invoke(cli, ["stats", "--paper", "bbbbbb"])
    assert result.exit_code == 0, result.output
    assert result.output.startswith("2 LLM calls for paper bbbbbbbbbbbb: 0 from the cache, 1 failed")
    assert "critique" in result.output and "深度学习综述" in result.output


def test_stats_unknown_paper_is_a_one_line_error(app):
    record_calls(app.services.db)
    result = CliRunner().invoke(cli, ["stats", "--paper", "no such paper"])
    assert result.exit_code == 1
    assert result.output.strip() == (
        "Error: no paper matches 'no such paper'; see `reader papers` for ids and titles"
    )


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
            seen["use_cache"] = app.services.use_cache
            app.services.generator.complete(user("q"), stage="probe")

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
                "key": "probe",
                "calls": 3,
                "cached": 1,
                "errors": 0,
                "prompt_tokens": 22,
                "completion_tokens": 2,
                "time_s": json.loads(out)["by_stage"][0]["time_s"],
                "title": "",
                # the loopback server reports no timings here
                "prompt_s": None,
                "generation_s": None,
                "cached_prompt_tokens": None,
                "drafted_tokens": None,
                "accepted_tokens": None,
                "timed_calls": 0,
                "longest_stage": "",
                "longest_stage_s": 0.0,
            }
        finally:
            cli.commands.pop("probe-llm", None)


# -- server timings: llama.cpp's `timings` through the call log into `reader stats` --


def width(line: str) -> int:
    """Terminal columns (wide CJK characters take two)."""
    import unicodedata

    return sum(2 if unicodedata.east_asian_width(c) in "WF" else 1 for c in line)


def server_timings(prompt):
    """What llama-server would report: a verify call reuses 40 prompt tokens from its cache."""
    verify = prompt.startswith("verify")
    return {
        "cache_n": 40 if verify else 0,
        "prompt_n": 11,
        "prompt_ms": 250.0 if verify else 1500.0,
        "predicted_n": 2,
        "predicted_ms": 500.0 if verify else 4000.0,
    }


def record_timed_calls(db, server):
    add_paper(db, "a" * 64, "Attention Is All You Need")
    add_paper(db, "b" * 64, "深度学习综述：卷积神经网络、循环神经网络与注意力机制的发展与应用研究")
    endpoint = OpenAICompatLLM(LLMSettings(base_url=server.base_url, model=EMBEDDED_MODEL_NAME, api_key="k"))
    gen = LoggedLLM(endpoint, "generator", CallStore(db))
    ver = LoggedLLM(endpoint, "verifier", CallStore(db))
    gen.complete(user("critique A"), stage="critique", paper_id="a" * 64)
    gen.complete(user("critique A"), stage="critique", paper_id="a" * 64)  # cached: no timings
    for n in range(3):
        ver.complete(user(f"verify A {n}"), stage="verify", paper_id="a" * 64)
    ver.complete(user("verify B"), stage="verify", paper_id="b" * 64)
    # a backend that reports no timings, on the same paper
    LoggedLLM(ScriptedLLM(lambda p: "rewritten"), "generator", CallStore(db)).complete(
        user("regenerate A"), stage="regenerate-synthesis", paper_id="a" * 64
    )


def test_server_timings_are_summed_per_stage_and_paper_in_json(app):
    with LoopbackOpenAI(models=(EMBEDDED_MODEL_NAME,), timings=server_timings) as server:
        record_timed_calls(app.services.db, server)
    data = json.loads(CliRunner().invoke(cli, ["stats", "--json"]).output)
    total = data["total"]
    assert (total["calls"], total["cached"], total["timed_calls"]) == (7, 1, 5)
    assert (total["prompt_s"], total["generation_s"], total["cached_prompt_tokens"]) == (2.5, 6.0, 160)
    stages = {r["key"]: r for r in data["by_stage"]}
    assert (stages["critique"]["prompt_s"], stages["critique"]["generation_s"]) == (1.5, 4.0)
    assert stages["critique"]["cached_prompt_tokens"] == 0 and stages["critique"]["timed_calls"] == 1
    assert (stages["verify"]["prompt_s"], stages["verify"]["generation_s"]) == (1.0, 2.0)
    assert stages["verify"]["cached_prompt_tokens"] == 160
    regenerate = stages["regenerate-synthesis"]
    assert (
        regenerate["prompt_s"],
        regenerate["generation_s"],
        regenerate["cached_prompt_tokens"],
        regenerate["timed_calls"],
    ) == (None, None, None, 0)
    papers = {r["key"]: r for r in data["by_paper"]}
    a, b = papers["a" * 64], papers["b" * 64]
    assert (a["calls"], a["prompt_s"], a["generation_s"], a["timed_calls"]) == (6, 2.25, 5.5, 4)
    assert (b["calls"], b["prompt_s"], b["generation_s"]) == (1, 0.25, 0.5)
    assert a["longest_stage"] in {"critique", "verify"} and b["longest_stage"] == "verify"
    assert a["longest_stage_s"] == max(
        sum(r["time_s"] for r in data_for(app, "a" * 64)["by_stage"] if r["key"] == stage)
        for stage in ("critique", "verify", "regenerate-synthesis")
    )
    assert total["longest_stage"] in stages


def data_for(app, paper):
    return json.loads(CliRunner().invoke(cli, ["stats", "--paper", paper, "--json"]).output)


def cells(line: str) -> list[str]:
    """A table line's cells: they are two or more spaces apart (titles have single spaces)."""
    return re.split(r" {2,}", line.strip())


def test_stats_shows_server_time_per_stage_and_a_table_per_paper(app):
    with LoopbackOpenAI(models=(EMBEDDED_MODEL_NAME,), timings=server_timings) as server:
        record_timed_calls(app.services.db, server)
    result = CliRunner().invoke(cli, ["stats"])
    assert result.exit_code == 0, result.output
    lines = result.output.splitlines()
    assert lines[0] == "7 LLM calls: 1 from the cache, 0 failed"
    assert "160 prompt tokens reused from the server's prompt cache" in lines[1]
    assert "the server reported 2.5 s prompt + 6.0 s generation (5 of 6 calls)" in lines[2]
    header = next(line for line in lines if line.startswith("stage "))
    assert cells(header) == [
        "stage",
        "calls",
        "hits",
        "errors",
        "prompt tok",
        "gen tok",
        "cached tok",
        "prompt s",
        "gen s",
        "wall s",
    ]
    rows = {
        cells(line)[0]: cells(line)
        for line in lines[lines.index(header) + 1 :]
        if line and not line.startswith(" ")
    }
    assert rows["critique"][1:3] == ["2", "1"] and rows["critique"][6:9] == ["0", "1.5", "4.0"]
    assert rows["verify"][1] == "4" and rows["verify"][6:9] == ["160", "1.0", "2.0"]
    assert rows["regenerate-synthesis"][6:9] == ["–", "–", "–"]
    # the role/model name is longer than the room beside the figures: a line of its own
    at = lines.index(f"verifier / {EMBEDDED_MODEL_NAME}")
    assert cells(lines[at + 1])[0] == "4" and cells(lines[at + 1])[6:8] == ["1.0", "2.0"]

    data = json.loads(CliRunner().invoke(cli, ["stats", "--json"]).output)
    papers = {r["key"]: r for r in data["by_paper"]}
    a, b = papers["a" * 64], papers["b" * 64]
    paper_header = next(line for line in lines if line.startswith("paper "))
    assert cells(paper_header) == ["paper", "calls", "tokens", "prompt s", "gen s", "wall s", "longest stage"]
    a_line = next(line for line in lines if line.startswith("aaaaaaaa Attention Is All You Need"))
    share = round(100 * a["longest_stage_s"] / a["time_s"])
    assert cells(a_line) == [
        "aaaaaaaa Attention Is All You Need",
        "6",
        str(a["prompt_tokens"] + a["completion_tokens"]),
        f"{a['prompt_s']:.1f}",
        "5.5",
        f"{a['time_s']:.1f}",
        f"{a['longest_stage']} ({share}%)",
    ]
    b_line = next(line for line in lines if line.startswith("bbbbbbbb 深度学习综述"))
    assert cells(b_line)[0].endswith("…"), "a long title is clipped to keep 100 columns"
    # 11 prompt tokens processed + 40 from the prompt cache, 2 generated
    assert cells(b_line)[1:] == ["1", "53", "0.2", "0.5", f"{b['time_s']:.1f}", "verify (100%)"]
    assert lines[-3:] == [paper_header, a_line, b_line], "the paper table ends the output"
    assert max(width(line) for line in lines) <= 100


def test_stats_for_one_paper_shows_its_stages_with_server_time(app):
    with LoopbackOpenAI(models=(EMBEDDED_MODEL_NAME,), timings=server_timings) as server:
        record_timed_calls(app.services.db, server)
    result = CliRunner().invoke(cli, ["stats", "--paper", "bbbbbb"])
    assert result.exit_code == 0, result.output
    lines = result.output.splitlines()
    assert lines[0] == "1 LLM calls for paper bbbbbbbbbbbb: 0 from the cache, 0 failed"
    stage_rows = lines[lines.index(next(line for line in lines if line.startswith("stage "))) + 1 :]
    assert cells(stage_rows[0])[:-1] == ["verify", "1", "0", "0", "51", "2", "40", "0.2", "0.5"]
    assert stage_rows[1] == "", "one stage for this paper"
    assert cells(lines[-1])[1:5] == ["1", "53", "0.2", "0.5"] and lines[-1].startswith("bbbbbbbb ")


def test_a_backend_without_timings_shows_dashes(app):
    record_calls(app.services.db)  # ScriptedLLM: no timings
    data = json.loads(CliRunner().invoke(cli, ["stats", "--json"]).output)
    assert all(
        r["prompt_s"] is None and r["generation_s"] is None and r["cached_prompt_tokens"] is None
        for r in [data["total"], *data["by_stage"], *data["by_model"], *data["by_paper"]]
    )
    result = CliRunner().invoke(cli, ["stats"])
    lines = result.output.splitlines()
    assert "the backend reported no prompt/generation times (– below)" in lines[2]
    critique = next(line for line in lines if line.startswith("critique "))
    assert critique.split()[6:9] == ["–", "–", "–"]
    paper_a = next(line for line in lines if line.startswith("aaaaaaaa "))
    assert cells(paper_a)[3:5] == ["–", "–"]
    # no call drafted: no drafted/acc column and no line about speculative decoding
    assert "drafted/acc" not in result.output and "speculative decoding" not in result.output


# -- speculative decoding: llama.cpp's draft_n / draft_n_accepted in `reader stats` --


def drafting_timings(prompt):
    """A llama-server with speculative decoding: each critique drafts 40 tokens and 30 are
    accepted; the verify replies drafted nothing, so (as llama.cpp does) they carry no draft_n."""
    timings = server_timings(prompt)
    if prompt.startswith("critique"):
        timings.update(draft_n=40, draft_n_accepted=30)
    return timings


def test_stats_shows_the_tokens_drafted_and_accepted(app):
    with LoopbackOpenAI(models=(EMBEDDED_MODEL_NAME,), timings=drafting_timings) as server:
        record_timed_calls(app.services.db, server)
        gen = LoggedLLM(
            OpenAICompatLLM(LLMSettings(base_url=server.base_url, model=EMBEDDED_MODEL_NAME, api_key="k")),
            "generator",
            CallStore(app.services.db),
        )
        gen.complete(user("critique B"), stage="critique", paper_id="b" * 64)

    data = json.loads(CliRunner().invoke(cli, ["stats", "--json"]).output)
    total = data["total"]
    assert (total["drafted_tokens"], total["accepted_tokens"]) == (80, 60)
    stages = {r["key"]: r for r in data["by_stage"]}
    # the cache hit of critique A drafted nothing: two spent critique calls
    assert (stages["critique"]["drafted_tokens"], stages["critique"]["accepted_tokens"]) == (80, 60)
    for quiet in ("verify", "regenerate-synthesis"):
        assert (stages[quiet]["drafted_tokens"], stages[quiet]["accepted_tokens"]) == (None, None)
    papers = {r["key"]: r for r in data["by_paper"]}
    assert (papers["a" * 64]["drafted_tokens"], papers["b" * 64]["accepted_tokens"]) == (40, 30)

    result = CliRunner().invoke(cli, ["stats"])
    assert result.exit_code == 0, result.output
    lines = result.output.splitlines()
    assert lines[3] == "speculative decoding: 80 tokens drafted, 60 of them accepted (75%)"
    header = next(line for line in lines if line.startswith("stage "))
    assert cells(header)[1:] == [
        "calls",
        "hits",
        "errors",
        "prompt tok",
        "gen tok",
        "cached tok",
        "drafted/acc",
        "prompt s",
        "gen s",
        "wall s",
    ]
    table = lines[lines.index(header) + 1 : lines.index("", lines.index(header))]
    figures = {}  # stage -> its figures, the stage's name on its own line when it does not fit
    for at, line in enumerate(table):
        if not line.startswith(" "):
            figures[cells(line)[0]] = cells(line)[1:] if len(cells(line)) > 1 else cells(table[at + 1])
    assert figures["critique"][5:9] == ["0", "80/60", "3.0", "8.0"]
    assert figures["verify"][5:7] == ["160", "–"]
    assert figures["regenerate-synthesis"][5:7] == ["–", "–"]
    at = lines.index(f"generator / {EMBEDDED_MODEL_NAME}")
    assert cells(lines[at + 1])[6] == "80/60"
    at = lines.index(f"verifier / {EMBEDDED_MODEL_NAME}")
    assert cells(lines[at + 1])[6] == "–"
    # the extra column leaves "role / model" no room beside the figures: a line of its own
    assert cells(lines[lines.index("role / model") + 1])[:2] == ["calls", "hits"]
    assert max(width(line) for line in lines) <= 100
