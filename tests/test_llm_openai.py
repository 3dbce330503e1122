"""The OpenAI-compatible client against a loopback server that scripts faults."""

import threading
import time

import pytest
from loopback_openai import Fault, LoopbackOpenAI

from reader.config import LLMSettings
from reader.errors import LLMError
from reader.llm.base import server_timings, user
from reader.llm.openai_compat import OpenAICompatLLM, retry_after_s


class RecordingSleep:
    def __init__(self):
        self.waits = []

    def __call__(self, seconds):
        self.waits.append(seconds)


@pytest.fixture
def server():
    with LoopbackOpenAI(respond=lambda prompt: f"echo: {prompt}", models=("test-model", "other")) as s:
        yield s


def make_llm(server, *, timeout=5.0, model="test-model", concurrency=4, api_key="k", sleep=None, **kwargs):
    settings = LLMSettings(
        base_url=server.base_url, model=model, api_key=api_key, timeout_s=timeout, max_concurrency=concurrency
    )
    return OpenAICompatLLM(settings, sleep=sleep or RecordingSleep(), **kwargs)


def test_answer_with_usage_and_latency(server):
    llm = make_llm(server)
    out = llm.complete(user("hello"), temperature=0.3, max_tokens=77)
    assert out.text == "echo: hello"
    assert out.prompt_tokens == 11 and out.completion_tokens == 2
    assert out.latency_s > 0
    sent = server.chat_requests[-1]["json"]
    assert sent["model"] == "test-model"
    assert sent["temperature"] == 0.3 and sent["max_tokens"] == 77
    assert sent["messages"] == [{"role": "user", "content": "hello"}]
    assert server.chat_requests[-1]["headers"]["authorization"] == "Bearer k"


def test_429_honours_retry_after_then_succeeds(server):
    server.enqueue(Fault.status(429, "slow down", headers={"Retry-After": "1"}), Fault.answer("fine"))
    llm = make_llm(server, sleep=time.sleep)
    start = time.monotonic()
    out = llm.complete(user("x"))
    assert out.text == "fine"
    assert len(server.chat_requests) == 2
    gap = server.chat_requests[1]["time"] - server.chat_requests[0]["time"]
    assert gap >= 0.95, "the client must wait as long as Retry-After says"
    assert time.monotonic() - start < 10


def test_500_then_success_uses_exponential_backoff(server):
    server.enqueue(Fault.status(500), Fault.status(503), Fault.answer("third time"))
    sleep = RecordingSleep()
    llm = make_llm(server, sleep=sleep, backoff_base_s=0.5)
    assert llm.complete(user("x")).text == "third time"
    assert len(sleep.waits) == 2
    assert 0.5 <= sleep.waits[0] <= 1.0  # base + jitter in [0, base]
    assert 1.0 <= sleep.waits[1] <= 1.5  # doubled + jitter


def test_persistent_5xx_ends_in_a_clear_error(server):
    server.enqueue(*[Fault.status(502)] * 3)
    llm = make_llm(server)
    with pytest.raises(
        LLMError, match=r"no answer from http://127\.0\.0\.1:\d+/v1 after 3 attempts.*server error \(502\)"
    ):
        llm.complete(user("x"))


def test_hang_past_timeout_is_retried(server):
    server.enqueue(Fault.hang(3.0))
    llm = make_llm(server, timeout=0.5)
    start = time.monotonic()
    assert llm.complete(user("again")).text == "echo: again"
    assert time.monotonic() - start < 3.0


def test_endless_hang_gives_up_with_the_timeout_in_the_message(server):
    server.enqueue(*[Fault.hang(3.0)] * 2)
    llm = make_llm(server, timeout=0.3, max_attempts=2)
    with pytest.raises(LLMError, match=r"after 2 attempts \(timeout 0\.3 s\).*timed out"):
        llm.complete(user("x"))


def test_malformed_json_is_retried(server):
    server.enqueue(Fault.raw(b"{not json at all"), Fault.raw(b'{"unexpected": 1}'), Fault.answer("ok now"))
    assert make_llm(server).complete(user("x")).text == "ok now"


def test_malformed_json_every_time_is_a_clear_error(server):
    server.enqueue(*[Fault.raw(b"<html>proxy error</html>", content_type="text/html")] * 3)
    with pytest.raises(LLMError, match="malformed reply"):
        make_llm(server).complete(user("x"))


def test_empty_content_is_retried_then_reported(server):
    server.enqueue(Fault.answer(""), Fault.answer("non-empty"))
    assert make_llm(server).complete(user("x")).text == "non-empty"
    server.enqueue(*[Fault.answer("   ")] * 3)
    with pytest.raises(LLMError, match="empty answer"):
        make_llm(server).complete(user("x"))


def test_wrong_model_name_lists_available_models(server):
    llm = make_llm(server, model="gpt-nonexistent")
    with pytest.raises(LLMError) as info:
        llm.complete(user("x"))
    message = str(info.value)
    assert "model 'gpt-nonexistent' not found at" in message
    assert "set READER_LLM_MODEL to one of other, test-model" in message
    assert len(server.chat_requests) == 1, "a wrong model name is not retried"


def test_wrong_api_key_is_a_clear_error_without_retry():
    with LoopbackOpenAI(api_key="right") as server:
        llm = make_llm(server, api_key="wrong", env_prefix="READER_VERIFIER")
        with pytest.raises(LLMError, match=r"rejected the API key \(401\): set READER_VERIFIER_API_KEY"):
            llm.complete(user("x"))
        assert len(server.chat_requests) == 1


def test_connection_refused_is_a_clear_error():
    with LoopbackOpenAI() as server:
        url = server.base_url
    llm = OpenAICompatLLM(
        LLMSettings(base_url=url, model="m", api_key="k", timeout_s=1.0), sleep=RecordingSleep()
    )
    with pytest.raises(LLMError, match="cannot connect"):
        llm.complete(user("x"))


def test_concurrency_is_bounded(server):
    server.delay_s = 0.15
    llm = make_llm(server, concurrency=2)
    results = []
    threads = [
        threading.Thread(target=lambda i=i: results.append(llm.complete(user(f"q{i}")).text))
        for i in range(6)
    ]
    for t in threads:
        t.start()
    for t in threads:
        t.join(timeout=10)
    assert sorted(results) == sorted(f"echo: q{i}" for i in range(6))
    assert server.max_in_flight == 2


def test_no_model_name_lets_the_endpoint_choose():
    with LoopbackOpenAI(models=("default",)) as server:
        llm = make_llm(server, model=None)
        assert llm.complete(user("x")).text == "ok"
        assert server.chat_requests[-1]["json"]["model"] == "default"
        assert llm.model == f"default@{server.base_url}"


class _Response:
    def __init__(self, headers):
        self.headers = headers


def test_retry_after_parsing():
    assert retry_after_s(_Response({"retry-after": "3"})) == 3.0
    assert retry_after_s(_Response({"retry-after-ms": "250"})) == 0.25
    assert retry_after_s(_Response({})) is None
    assert retry_after_s(_Response({"retry-after": "soon"})) is None
    future = retry_after_s(_Response({"retry-after": "Wed, 21 Oct 2099 07:28:00 GMT"}))
    assert future > 1e8


LLAMA_TIMINGS = {
    "cache_n": 9,
    "prompt_n": 2,
    "prompt_ms": 125.0,
    "prompt_per_token_ms": 62.5,
    "prompt_per_second": 16.0,
    "predicted_n": 3,
    "predicted_ms": 750.0,
    "predicted_per_token_ms": 250.0,
    "predicted_per_second": 4.0,
}


def test_llama_server_timings_reach_the_completion():
    with LoopbackOpenAI(models=("test-model",), timings=LLAMA_TIMINGS) as server:
        out = make_llm(server).complete(user("hello"))
    assert (out.prompt_s, out.generation_s, out.cached_prompt_tokens) == (0.125, 0.75, 9)


def test_a_server_without_timings_reports_none(server):
    out = make_llm(server).complete(user("hello"))
    assert (out.prompt_s, out.generation_s, out.cached_prompt_tokens) == (None, None, None)
    assert (out.drafted_tokens, out.accepted_tokens) == (None, None)


def test_speculative_drafts_in_the_timings_reach_the_completion():
    """llama.cpp adds draft_n and draft_n_accepted only when speculative decoding drafted
    something; the reply without them (LLAMA_TIMINGS) says nothing of drafts."""
    drafting = {**LLAMA_TIMINGS, "draft_n": 48, "draft_n_accepted": 31}
    with LoopbackOpenAI(models=("test-model",), timings=drafting) as server:
        out = make_llm(server).complete(user("hello"))
    assert (out.drafted_tokens, out.accepted_tokens) == (48, 31)
    with LoopbackOpenAI(models=("test-model",), timings=LLAMA_TIMINGS) as server:
        out = make_llm(server).complete(user("hello"))
    assert (out.drafted_tokens, out.accepted_tokens) == (None, None)


@pytest.mark.parametrize("bad", [-1, "12", True, None, float("nan"), float("inf")])
def test_server_timings_reads_the_draft_counts_and_drops_unusable_ones(bad):
    assert server_timings({"draft_n": 12.0, "draft_n_accepted": 0}) == {
        "prompt_s": None,
        "generation_s": None,
        "cached_prompt_tokens": None,
        "drafted_tokens": 12,
        "accepted_tokens": 0,
    }
    found = server_timings({"draft_n": bad, "draft_n_accepted": bad, "cache_n": 3})
    assert (found["drafted_tokens"], found["accepted_tokens"]) == (None, None)
    assert found["cached_prompt_tokens"] == 3
    assert server_timings(None)["drafted_tokens"] is None


def test_openai_prompt_cache_tokens_count_when_there_are_no_timings():
    with LoopbackOpenAI(models=("test-model",), cached_tokens=7) as server:
        out = make_llm(server).complete(user("hello"))
    assert (out.prompt_s, out.generation_s, out.cached_prompt_tokens) == (None, None, 7)
