"""Endpoints and search services that answer in ways that break a client: a reply sent a byte at a
time, a reply of hundreds of megabytes, a Retry-After of "nan", log-probabilities out of range.
Each ends in an answer or one clear error, within the timeout."""

import json
import time

import pytest
from loopback_openai import Fault, LoopbackOpenAI
from loopback_scholarly import ScholarlyServer

from reader.audit.loop import audit_text
from reader.audit.verify import EvidenceRef
from reader.config import LLMSettings
from reader.crag.pipeline import ask
from reader.crag.scholarly import Arxiv, ExternalSearchError, OpenAlex, SemanticScholar, scholarly_searches
from reader.errors import LLMError
from reader.http import MAX_REPLY_BYTES
from reader.llm.base import user
from reader.llm.openai_compat import OpenAICompatLLM
from reader.llm.scripted import ScriptedLLM


@pytest.fixture
def endpoint():
    with LoopbackOpenAI(respond=lambda prompt: "fine") as server:
        yield server


def client(server, *, timeout=5.0, sleep=None, **kwargs) -> OpenAICompatLLM:
    settings = LLMSettings(base_url=server.base_url, model="test-model", api_key="k", timeout_s=timeout)
    return OpenAICompatLLM(settings, sleep=sleep or (lambda s: None), **kwargs)


# -- case 4: the timeout is a deadline for the whole call; replies have a size cap -------------


def test_an_endpoint_that_trickles_its_reply_is_cut_off_at_the_timeout(endpoint):
    # each reply takes ~5 s at a byte every 10 ms; every read gets a byte well within the timeout
    endpoint.enqueue(Fault.trickle("too slow", 0.01), Fault.trickle("too slow", 0.01))
    llm = client(endpoint, timeout=0.5, max_attempts=2)
    llm.client()  # imported and made before the clock starts
    start = time.monotonic()
    with pytest.raises(LLMError, match=r"after 2 attempts \(timeout 0\.5 s\).*timed out after 0\.5 s"):
        llm.complete(user("x"))
    assert time.monotonic() - start < 3.0, "two attempts of 0.5 s each, not the ~10 s of two trickles"


def test_a_trickled_attempt_is_retried_and_the_next_answer_used(endpoint):
    endpoint.enqueue(Fault.trickle("too slow", 0.01))
    llm = client(endpoint, timeout=0.5)
    llm.client()
    start = time.monotonic()
    assert llm.complete(user("x")).text == "fine"
    assert time.monotonic() - start < 3.0  # a trickle takes 5 s or more


def padded_completion(size: int) -> bytes:
    body = json.dumps(
        {
            "id": "c",
            "object": "chat.completion",
            "created": 0,
            "model": "test-model",
            "choices": [
                {"index": 0, "finish_reason": "stop", "message": {"role": "assistant", "content": "x"}}
            ],
        }
    ).encode()
    return body[:-1] + b" " * size + b"}"  # well-formed JSON, as large as asked


def test_an_llm_reply_larger_than_the_cap_is_refused_without_reading_it_all(endpoint):
    endpoint.enqueue(Fault.raw(padded_completion(MAX_REPLY_BYTES + 2**20)))
    with pytest.raises(LLMError, match=r"sent a reply too large to read: the reply is larger than 16 MB"):
        client(endpoint).complete(user("x"))
    assert len(endpoint.chat_requests) == 1, "the next attempt would be as large: not retried"
    endpoint.enqueue(Fault.raw(padded_completion(2**20)))
    assert client(endpoint).complete(user("x")).text == "x", "a reply under the cap is read"


@pytest.fixture
def scholarly():
    server = ScholarlyServer()
    yield server
    server.close()


@pytest.mark.parametrize("adapter", [SemanticScholar, Arxiv, OpenAlex])
def test_a_search_service_that_trickles_is_cut_off_at_the_timeout(scholarly, adapter):
    scholarly.mode = dict.fromkeys(scholarly.mode, "trickle")
    service = adapter(base_url=scholarly.url, timeout_s=0.5)
    start = time.monotonic()
    with pytest.raises(ExternalSearchError, match=rf"^{service.name}: no reply within 0\.5 s$"):
        service.search("attention")
    assert time.monotonic() - start < 3.0  # a trickle takes 5 s or more


def test_ask_external_with_trickling_services_takes_no_longer_than_their_timeouts(scholarly):
    scholarly.mode = dict.fromkeys(scholarly.mode, "trickle")
    adapters = scholarly_searches(
        "semantic-scholar,arxiv,openalex",
        base_urls=dict.fromkeys(["semantic-scholar", "arxiv", "openalex"], scholarly.url),
    )
    for adapter in adapters:
        adapter.timeout_s = 0.5
    from crag_fakes import PAPER_A, TITLES, CragLLM, FakeSearch, always_grounded

    start = time.monotonic()
    result = ask(
        "Which attention mechanism does the Transformer use?",
        paper_id=PAPER_A,
        generator=CragLLM(relevant_words=["attention"], answer="Attention alone [1]."),
        verifier=ScriptedLLM(lambda p: "[1] YES"),
        search=FakeSearch(),
        check_grounded=always_grounded,
        titles=TITLES,
        external=adapters,
    )
    assert time.monotonic() - start < 3 * 0.5 + 1.5
    failed = [n for n in result.notes if n.startswith("external search failed: ")]
    assert len(failed) == 3 and all(n.endswith("no reply within 0.5 s") for n in failed)


@pytest.mark.parametrize("adapter", [SemanticScholar, OpenAlex])
def test_a_search_reply_larger_than_the_cap_is_refused(scholarly, adapter):
    scholarly.mode = dict.fromkeys(scholarly.mode, "huge")
    scholarly.huge_bytes = MAX_REPLY_BYTES + 2**20
    service = adapter(base_url=scholarly.url)
    with pytest.raises(ExternalSearchError, match=rf"^{service.name}: the reply is larger than 16 MB$"):
        service.search("attention")
    scholarly.huge_bytes = 2**20
    assert service.search("attention"), "a reply under the cap is read"


def test_a_reference_lookup_that_trickles_or_floods_fails_that_entry_within_its_timeout(scholarly):
    from reader.export.lookup import ReferenceLookup

    entry = "Vaswani A, et al. Attention is all you need. NeurIPS 2017."
    scholarly.mode["openalex"] = "trickle"
    start = time.monotonic()
    assert ReferenceLookup("openalex", base_url=scholarly.url, timeout_s=0.5)(entry) == (
        "OpenAlex: lookup failed (timeout)"
    )
    assert time.monotonic() - start < 3.0  # a trickle takes 5 s or more
    scholarly.mode["openalex"], scholarly.huge_bytes = "huge", MAX_REPLY_BYTES + 2**20
    assert ReferenceLookup("openalex", base_url=scholarly.url)(entry) == (
        "OpenAlex: lookup failed (the reply is larger than 16 MB)"
    )


# -- case 5: a Retry-After that is no number ---------------------------------------------------


@pytest.mark.parametrize(
    "headers",
    [{"Retry-After": "nan"}, {"Retry-After": "inf"}, {"retry-after-ms": "nan", "Retry-After": "-inf"}],
)
def test_a_429_whose_retry_after_is_no_number_is_retried_with_the_default_backoff(endpoint, headers):
    endpoint.enqueue(Fault.status(429, "slow down", headers=headers))
    waits = []

    def sleep(seconds):
        waits.append(seconds)
        time.sleep(seconds)  # the real sleep: it refuses NaN

    llm = client(endpoint, sleep=sleep, backoff_base_s=0.05)
    assert llm.complete(user("x")).text == "fine"
    assert len(endpoint.chat_requests) == 2
    assert len(waits) == 1 and 0.05 <= waits[0] <= 0.1, "base + jitter, as for any 429 without a wait"


@pytest.mark.parametrize("value", ["nan", "inf", "-inf"])
def test_a_search_429_whose_retry_after_is_no_number_is_reported_not_waited_for(scholarly, value):
    scholarly.mode["openalex"], scholarly.retry_after, scholarly.throttle = "429", value, 5
    service = OpenAlex(base_url=scholarly.url)
    service.sleep = lambda s: pytest.fail(f"waited {s} s for Retry-After: {value}")
    with pytest.raises(ExternalSearchError, match=r"^openalex: rate limited \(HTTP 429\)$"):
        service.search("attention")


# -- case 6: log-probabilities out of range -----------------------------------------------------

EVIDENCE = [EvidenceRef(1, 2, 2, "LexiRank ranks passages by their citation context. It is fast.")]
CLAIMS = "LexiRank ranks passages by their citation context. LexiRank is slow."


def answer_tokens(first_yes: object) -> list[dict]:
    """`[1] YES` / `[2] NO` token by token; the YES of claim 1 and its alternatives carry
    `first_yes` as log-probability, claim 2's are well-formed."""

    def plain(token):
        return {"token": token, "logprob": -0.01, "top_logprobs": [{"token": token, "logprob": -0.01}]}

    yes = {
        "token": " YES",
        "logprob": first_yes,
        "top_logprobs": [{"token": " YES", "logprob": first_yes}, {"token": " NO", "logprob": first_yes}],
    }
    no = {
        "token": " NO",
        "logprob": -0.1,
        "top_logprobs": [{"token": " NO", "logprob": -0.1}, {"token": " YES", "logprob": -2.5}],
    }
    return [plain("["), plain("1"), plain("]"), yes, plain("\n"), plain("["), plain("2"), plain("]"), no]


@pytest.mark.parametrize("bad", [1000, "abc", None, float("nan"), 1e308, True, [1]])
def test_an_unusable_logprob_falls_back_to_the_answer_word(endpoint, bad):
    endpoint.enqueue(Fault.answer("[1] YES\n[2] NO", logprobs=answer_tokens(bad)))
    result = audit_text(CLAIMS, verifier=client(endpoint), evidence_for=lambda batch: EVIDENCE)
    assert endpoint.chat_requests[-1]["json"]["logprobs"] is True
    first, second = result.sentences
    assert (first.verdict, first.llm_answer, first.p_yes) == ("supported", "YES", None)
    assert "verifier: YES" in first.reasons
    assert second.verdict == "unsupported" and second.p_yes == pytest.approx(0.083, abs=0.01), (
        "a usable log-probability in the same reply still counts"
    )


@pytest.mark.parametrize("bad", [1000, "abc", None, float("nan"), 1e308, True, [1]])
def test_an_unusable_yes_beside_a_usable_no_falls_back_to_the_answer_word(endpoint, bad):
    """Only the YES of claim 1 is unusable; its NO alternative is well-formed. That is no
    P(YES) of 0.00 (which flagged a claim the verifier answered YES): the answer word decides."""
    tokens = answer_tokens(bad)
    tokens[3]["top_logprobs"][1]["logprob"] = -3.0  # the NO alternative of claim 1's YES
    endpoint.enqueue(Fault.answer("[1] YES\n[2] NO", logprobs=tokens))
    result = audit_text(CLAIMS, verifier=client(endpoint), evidence_for=lambda batch: EVIDENCE)
    first, second = result.sentences
    assert (first.verdict, first.llm_answer, first.p_yes) == ("supported", "YES", None)
    assert "verifier: YES" in first.reasons and not any("0.00" in r for r in first.reasons)
    assert second.verdict == "unsupported" and second.p_yes == pytest.approx(0.083, abs=0.01)
