"""Call log and response cache (LoggedLLM) and the factory that builds the roles."""

import threading

import pytest
from loopback_openai import Fault, LoopbackOpenAI
from sqlalchemy import select

from reader.config import LLMSettings
from reader.errors import ConfigError, LLMError
from reader.llm.base import user
from reader.llm.factory import build_llm
from reader.llm.local import LocalLLM
from reader.llm.logged import LoggedLLM, cache_key
from reader.llm.openai_compat import OpenAICompatLLM
from reader.llm.scripted import ScriptedLLM
from reader.store.calls import CallStore
from reader.store.tables import LLMCacheEntry, LLMCall


def calls(db):
    with db() as session:
        return session.scalars(select(LLMCall).order_by(LLMCall.id)).all()


def test_cache_miss_then_hit(db):
    inner = ScriptedLLM(lambda prompt: f"answer to {prompt}")
    llm = LoggedLLM(inner, "generator", CallStore(db))
    first = llm.complete(user("q1"), stage="critique", paper_id="p1")
    second = llm.complete(user("q1"), stage="critique", paper_id="p1")
    assert first.text == second.text == "answer to q1"
    assert (first.cached, second.cached) == (False, True)
    assert inner.calls == 1, "a cache hit must not reach the model"
    rows = calls(db)
    assert [(r.stage, r.role, r.paper_id, r.cached) for r in rows] == [
        ("critique", "generator", "p1", False),
        ("critique", "generator", "p1", True),
    ]
    assert rows[0].prompt_tokens > 0 and rows[0].completion_tokens > 0
    assert rows[0].model == "scripted"


def test_server_timings_are_logged_and_cache_hits_log_none(db):
    timings = {
        "cache_n": 5,
        "prompt_n": 6,
        "prompt_ms": 200.0,
        "predicted_n": 2,
        "predicted_ms": 500.0,
        "draft_n": 8,
        "draft_n_accepted": 6,
    }
    with LoopbackOpenAI(models=("m",), timings=timings) as server:
        inner = OpenAICompatLLM(LLMSettings(base_url=server.base_url, model="m", api_key="k"))
        llm = LoggedLLM(inner, "verifier", CallStore(db))
        llm.complete(user("q"), stage="verify", paper_id="p1")
        llm.complete(user("q"), stage="verify", paper_id="p1")  # from the cache
    rows = calls(db)
    assert [
        (r.cached, r.prompt_ms, r.generation_ms, r.cached_prompt_tokens, r.drafted_tokens, r.accepted_tokens)
        for r in rows
    ] == [
        (False, 200.0, 500.0, 5, 8, 6),
        (True, None, None, None, None, None),
    ]
    assert len(server.chat_requests) == 1


def test_cache_key_covers_model_prompt_and_parameters(db):
    inner = ScriptedLLM(lambda prompt: "x")
    llm = LoggedLLM(inner, "verifier", CallStore(db))
    llm.complete(user("q"))
    llm.complete(user("q"), temperature=0.7)
    llm.complete(user("q"), max_tokens=10)
    llm.complete(user("q "))
    llm.complete([{"role": "system", "content": "be terse"}, *user("q")])
    assert inner.calls == 5
    other_model = LoggedLLM(ScriptedLLM(lambda p: "y", model="other"), "verifier", CallStore(db))
    assert other_model.complete(user("q")).text == "y"
    keys = {cache_key("m", user("q"), 0.0, 512), cache_key("m", user("q"), 0, 512)}
    assert len(keys) == 1, "0 and 0.0 are the same temperature"


def test_no_cache_bypasses_lookup_but_refreshes_the_entry(db):
    answers = iter(["old", "new"])
    inner = ScriptedLLM(lambda prompt: next(answers))
    LoggedLLM(inner, "generator", CallStore(db)).complete(user("q"))
    fresh = LoggedLLM(inner, "generator", CallStore(db), use_cache=False).complete(user("q"))
    assert fresh.text == "new" and not fresh.cached
    again = LoggedLLM(inner, "generator", CallStore(db)).complete(user("q"))
    assert again.text == "new" and again.cached
    assert inner.calls == 2


def test_errors_are_logged_and_reraised(db):
    inner = ScriptedLLM().enqueue(LLMError("endpoint down"))
    llm = LoggedLLM(inner, "verifier", CallStore(db))
    with pytest.raises(LLMError, match="endpoint down"):
        llm.complete(user("q"), stage="verify", paper_id="p9")
    (row,) = calls(db)
    assert row.error == "LLMError: endpoint down"
    assert row.stage == "verify" and row.paper_id == "p9" and not row.cached
    with db() as session:
        assert session.scalars(select(LLMCacheEntry)).all() == []


def test_empty_answers_are_not_cached(db):
    inner = ScriptedLLM().enqueue("", "real")
    llm = LoggedLLM(inner, "generator", CallStore(db))
    assert llm.complete(user("q")).text == ""
    assert llm.complete(user("q")).text == "real"
    assert llm.complete(user("q")).cached


def test_many_threads_share_the_log_and_cache(db):
    inner = ScriptedLLM(lambda prompt: prompt.upper(), latency_s=0.01)
    llm = LoggedLLM(inner, "verifier", CallStore(db))
    errors = []

    def work(i):
        try:
            for j in range(5):
                assert llm.complete(user(f"claim {j}"), stage="verify").text == f"CLAIM {j}"
        except Exception as exc:  # surfaced below
            errors.append(exc)

    threads = [threading.Thread(target=work, args=(i,)) for i in range(8)]
    for t in threads:
        t.start()
    for t in threads:
        t.join(timeout=30)
    assert errors == []
    rows = calls(db)
    assert len(rows) == 40
    assert sum(not r.cached for r in rows) == inner.calls
    with db() as session:
        assert len(session.scalars(select(LLMCacheEntry)).all()) == 5


def test_factory_defaults_to_the_embedded_model_for_both_roles(app):
    generator = build_llm(app.settings, "generator", CallStore(app.services.db))
    verifier = build_llm(app.settings, "verifier", CallStore(app.services.db))
    assert isinstance(generator, LoggedLLM) and isinstance(generator.inner, LocalLLM)
    assert isinstance(verifier.inner, LocalLLM)
    assert generator.model == verifier.model == "qwen2.5-coder-1.5b-instruct-q4_k_m (embedded)"
    assert generator.inner.models_dir == app.settings.models_dir
    with pytest.raises(ConfigError, match="unknown LLM role 'judge'"):
        build_llm(app.settings, "judge", CallStore(app.services.db))


def test_factory_gives_roles_separate_endpoints(reader_env, monkeypatch):
    with (
        LoopbackOpenAI(respond=lambda p: "from generator", models=("gen",)) as gen_server,
        LoopbackOpenAI(respond=lambda p: "from verifier", models=("ver",)) as ver_server,
    ):
        monkeypatch.setenv("READER_LLM_BASE_URL", gen_server.base_url)
        monkeypatch.setenv("READER_LLM_MODEL", "gen")
        monkeypatch.setenv("READER_VERIFIER_BASE_URL", ver_server.base_url)
        monkeypatch.setenv("READER_VERIFIER_MODEL", "ver")
        from reader.facade import Reader

        app = Reader(use_cache=False)
        assert isinstance(app.services.generator.inner, OpenAICompatLLM)
        assert app.services.generator.complete(user("q"), stage="critique").text == "from generator"
        assert app.services.verifier.complete(user("q"), stage="verify").text == "from verifier"
        assert [(r.role, r.model) for r in calls(app.services.db)] == [
            ("generator", "gen"),
            ("verifier", "ver"),
        ]


def test_rerun_costs_no_calls_through_the_app(reader_env, monkeypatch):
    with LoopbackOpenAI(respond=lambda p: "same", models=("m",)) as server:
        monkeypatch.setenv("READER_LLM_BASE_URL", server.base_url)
        monkeypatch.setenv("READER_LLM_MODEL", "m")
        from reader.facade import Reader

        for _ in range(2):
            Reader().services.generator.complete(user("q"), stage="synthesis")
        assert len(server.chat_requests) == 1
        Reader(use_cache=False).services.generator.complete(user("q"), stage="synthesis")
        assert len(server.chat_requests) == 2


def test_failed_remote_call_is_logged_with_its_message(reader_env, monkeypatch):
    with LoopbackOpenAI(models=("m",)) as server:
        server.enqueue(*[Fault.status(500)] * 3)
        monkeypatch.setenv("READER_LLM_BASE_URL", server.base_url)
        monkeypatch.setenv("READER_LLM_MODEL", "m")
        monkeypatch.setenv("READER_LLM_TIMEOUT", "2")
        from reader.facade import Reader

        app = Reader()
        app.services.generator.inner._sleep = lambda s: None
        with pytest.raises(LLMError):
            app.services.generator.complete(user("q"), stage="critique", paper_id="abc")
        (row,) = calls(app.services.db)
        assert "no answer from" in row.error and row.paper_id == "abc"


def test_the_wrapper_keeps_what_the_model_can_do(db):
    """A deep read sizes its context from the generator's capabilities, through the call log too."""
    from reader.llm.base import ENDPOINT, SMALL_LOCAL, capabilities_of

    small = LoggedLLM(ScriptedLLM(lambda p: "x", capabilities=SMALL_LOCAL), "generator", CallStore(db))
    assert capabilities_of(small) == SMALL_LOCAL
    assert capabilities_of(LoggedLLM(ScriptedLLM(lambda p: "x"), "generator", CallStore(db))) == ENDPOINT


def test_stored_only_answers_from_the_cache_and_never_asks_or_logs(db):
    """What a GET serves (the extraction table's page): stored answers, even with the cache off
    for reading; a missing one is NotStored, and neither asks the model nor writes a row."""
    from reader.errors import NotStored

    inner = ScriptedLLM(lambda prompt: f"answer to {prompt}")
    llm = LoggedLLM(inner, "verifier", CallStore(db), use_cache=False)
    llm.complete(user("q1"), stage="audit")
    logged = len(calls(db))
    stored = llm.stored_only()
    assert stored.complete(user("q1"), stage="audit").text == "answer to q1"
    with pytest.raises(NotStored, match="no stored answer for this audit"):
        stored.complete(user("q2"), stage="audit")
    with pytest.raises(NotStored):  # a stored answer the caller's check rejects is no answer
        stored.complete(user("q1"), stage="audit", accept=lambda completion: False)
    assert inner.calls == 1 and len(calls(db)) == logged
