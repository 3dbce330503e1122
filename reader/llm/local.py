"""The embedded default model, run in-process with llama.cpp through xllamacpp.

This is the only module that imports xllamacpp. The model is loaded on the
first call that needs it (a fully cached run never loads it), once per process:
both roles share one instance, calls are serialized by a lock, and llama.cpp
uses every core this process may run on. The instance is released at exit.
"""

from __future__ import annotations

import atexit
import os
import threading
import time
from dataclasses import dataclass
from pathlib import Path

from reader.config import EMBEDDED_MODEL_NAME, SPECULATIVE_MODES
from reader.errors import LLMError
from reader.llm.base import SMALL_LOCAL, Completion, Message, server_timings, token_logprobs

DEFAULT_CONTEXT_TOKENS = 16384

# llama.cpp's speculative decoding without a draft model (READER_SPECULATIVE, docs/design/llm.md
# "Speculative decoding"): each mode's xllamacpp type. The drafts come from n-grams of the
# prompt and the reply so far, and the model checks a draft in one batch, so a reply that copies
# from its prompt costs fewer sequential steps; under greedy decoding the reply is the same.
SPECULATIVE_TYPES = {
    "ngram-simple": "COMMON_SPECULATIVE_TYPE_NGRAM_SIMPLE",
    "ngram-map-k": "COMMON_SPECULATIVE_TYPE_NGRAM_MAP_K",
    "ngram-map-k4v": "COMMON_SPECULATIVE_TYPE_NGRAM_MAP_K4V",
    "ngram-mod": "COMMON_SPECULATIVE_TYPE_NGRAM_MOD",
    "ngram-cache": "COMMON_SPECULATIVE_TYPE_NGRAM_CACHE",
}
DRAFT_LOOKUP = 12  # tokens of the n-gram looked up
DRAFT_TOKENS = 48  # the longest draft
assert set(SPECULATIVE_TYPES) == set(SPECULATIVE_MODES) - {"off"}


@dataclass(frozen=True)
class Drafting:
    """How the n-gram modes draft: a lookup n-gram of `lookup` tokens, a draft of at most
    `draft` tokens (llama.cpp's defaults, 12 and 48, are for rewriting code)."""

    mode: str = "off"
    lookup: int = 12
    draft: int = 48
    min_hits: int = 1
    # a draft model's GGUF instead of n-grams (mode "draft"): measured slower on two cores
    # (docs/design/llm.md), so no setting offers it; benchmarks/bench_speculative.py does
    draft_model: str = ""
    p_min: float = 0.6


def drafting_for(mode: str) -> Drafting:
    """The drafting READER_SPECULATIVE's `mode` runs with: the sizes measured best on this
    project's prompts (benchmarks/bench_speculative.py)."""
    if mode != "off" and mode not in SPECULATIVE_TYPES:
        raise ValueError(f"unknown speculative mode {mode!r}: use one of {', '.join(SPECULATIVE_MODES)}")
    return Drafting(mode, lookup=DRAFT_LOOKUP, draft=DRAFT_TOKENS)


_lock = threading.Lock()  # guards _servers and serializes generation
_servers: dict[tuple, object] = {}
_load_seconds: dict[tuple, float] = {}
_atexit_registered = False


def default_threads() -> int:
    try:
        return max(1, len(os.sched_getaffinity(0)))
    except AttributeError:  # not on Linux
        return max(1, os.cpu_count() or 1)


def _release_all() -> None:
    # xllamacpp frees the model when the last reference to its Server goes;
    # doing it here, before interpreter teardown, keeps exit quiet.
    with _lock:
        _servers.clear()


def _set_speculative(params, drafting: Drafting, xllamacpp) -> None:
    """Turn llama.cpp's n-gram drafting on in `params` (a CommonParams) as `drafting` says."""
    if drafting.mode == "off":
        return
    spec = params.speculative
    if drafting.mode == "draft":
        spec.types = [xllamacpp.common_speculative_type.COMMON_SPECULATIVE_TYPE_DRAFT_SIMPLE]
        spec.draft.mparams.path = drafting.draft_model
        spec.draft.n_max, spec.draft.n_min, spec.draft.p_min = drafting.draft, 0, drafting.p_min
        spec.draft.n_gpu_layers = 0
        spec.draft.cpuparams.n_threads = params.cpuparams.n_threads
        spec.draft.cpuparams_batch.n_threads = params.cpuparams_batch.n_threads
        return
    spec.types = [getattr(xllamacpp.common_speculative_type, SPECULATIVE_TYPES[drafting.mode])]
    for name in ("ngram_simple", "ngram_map_k", "ngram_map_k4v"):
        ngram = getattr(spec, name)
        ngram.size_n, ngram.size_m, ngram.min_hits = drafting.lookup, drafting.draft, drafting.min_hits
    spec.ngram_mod.n_match = drafting.lookup
    spec.ngram_mod.n_max = drafting.draft
    spec.ngram_mod.n_min = min(spec.ngram_mod.n_min, drafting.draft)
    spec.draft.n_max = drafting.draft


def _load_server(model_path: Path, n_threads: int, n_ctx: int, drafting: Drafting = Drafting()):
    global _atexit_registered
    try:
        import xllamacpp
    except ImportError as exc:
        raise LLMError(
            "the embedded model needs the xllamacpp package: pip install -e . "
            "(or set READER_LLM_BASE_URL to use an OpenAI-compatible endpoint)"
        ) from exc
    params = xllamacpp.CommonParams()
    params.model.path = str(model_path)
    params.n_ctx = n_ctx
    params.n_parallel = 1
    params.n_gpu_layers = 0
    params.cpuparams.n_threads = n_threads
    params.cpuparams_batch.n_threads = n_threads
    params.warmup = False
    params.verbosity = -1  # llama.cpp logs nothing unless it fails
    _set_speculative(params, drafting, xllamacpp)
    try:
        server = xllamacpp.Server(params)
    except Exception as exc:
        raise LLMError(f"cannot load the embedded model {model_path}: {exc}") from exc
    if not _atexit_registered:
        atexit.register(_release_all)
        _atexit_registered = True
    return server


class LocalLLM:
    """Qwen2.5-Coder-1.5B-Instruct (Q4_K_M GGUF) answering in-process."""

    def __init__(
        self,
        models_dir: Path | None = None,
        *,
        model_path: Path | None = None,
        n_threads: int | None = None,
        n_ctx: int = DEFAULT_CONTEXT_TOKENS,
        speculative: str | Drafting = "off",
    ):
        if models_dir is None and model_path is None:
            raise ValueError("LocalLLM needs models_dir or model_path")
        self.models_dir = Path(models_dir) if models_dir is not None else None
        self._model_path = Path(model_path) if model_path is not None else None
        self.n_threads = n_threads or default_threads()
        self.n_ctx = n_ctx
        self.drafting = speculative if isinstance(speculative, Drafting) else drafting_for(speculative)
        self.model = EMBEDDED_MODEL_NAME
        self.supports_logprobs = True
        self.supports_sampling = True
        self.capabilities = SMALL_LOCAL

    def model_path(self) -> Path:
        if self._model_path is None:
            from reader.llm.model_file import ensure_model_file

            self._model_path = ensure_model_file(self.models_dir)
        return self._model_path

    def _key(self) -> tuple:
        return (str(self.model_path()), self.n_threads, self.n_ctx, self.drafting)

    def load(self) -> float:
        """Load the model now (if not yet loaded in this process); returns the load time in seconds."""
        key = self._key()
        with _lock:
            if key not in _servers:
                start = time.perf_counter()
                _servers[key] = _load_server(Path(key[0]), self.n_threads, self.n_ctx, self.drafting)
                _load_seconds[key] = time.perf_counter() - start
            return _load_seconds[key]

    def unload(self) -> None:
        """Release this model's server (a benchmark loads one setting after another)."""
        with _lock:
            _servers.pop(self._key(), None)
            _load_seconds.pop(self._key(), None)

    def complete(
        self,
        messages: list[Message],
        *,
        temperature: float = 0.0,
        max_tokens: int = 512,
        stage: str = "",
        paper_id: str | None = None,
        logprobs: int = 0,
        sampling: dict | None = None,
    ) -> Completion:
        request = {
            "messages": messages,
            "temperature": temperature,
            "max_tokens": max_tokens,
            "seed": 0,
            **(sampling or {}),
        }
        if logprobs:
            request.update(logprobs=True, top_logprobs=logprobs)
        start = time.perf_counter()
        reply = self.raw_reply(request)
        return _completion_from(reply, time.perf_counter() - start, self.model)

    def raw_reply(self, request: dict) -> dict:
        """llama.cpp's OpenAI-style reply to a chat request, including its `timings`."""
        self.load()
        key = self._key()
        with _lock:
            server = _servers.get(key)
            if server is None:
                raise LLMError("the embedded model was released (the process is exiting)")
            try:
                return server.handle_chat_completions(request)
            except Exception as exc:  # llama.cpp errors surface as RuntimeError/ValueError
                raise LLMError(f"the embedded model failed: {exc}") from exc


def _completion_from(reply: dict, latency: float, model: str) -> Completion:
    error = reply.get("error") if isinstance(reply, dict) else None
    if error or not isinstance(reply, dict):
        if isinstance(error, dict) and error.get("type") == "exceed_context_size_error":
            raise LLMError(
                f"the prompt ({error.get('n_prompt_tokens')} tokens) is longer than the embedded "
                f"model's context ({error.get('n_ctx')} tokens): shorten the input or use an "
                "OpenAI-compatible endpoint with a longer context (READER_LLM_BASE_URL)"
            )
        message = error.get("message") if isinstance(error, dict) else reply
        raise LLMError(f"the embedded model failed: {message}")
    try:
        text = reply["choices"][0]["message"]["content"] or ""
    except (KeyError, IndexError, TypeError) as exc:
        raise LLMError(f"the embedded model gave a reply without an answer: {str(reply)[:200]}") from exc
    usage = reply.get("usage") or {}
    logprobs = (reply["choices"][0].get("logprobs") or {}).get("content")
    return Completion(
        text=text,
        prompt_tokens=int(usage.get("prompt_tokens") or 0),
        completion_tokens=int(usage.get("completion_tokens") or 0),
        latency_s=latency,
        model=model,
        logprobs=token_logprobs(logprobs) if logprobs else None,
        # llama.cpp's own account: prompt_ms, predicted_ms, cache_n (prompt tokens reused
        # from its prompt cache) and, when READER_SPECULATIVE drafted, draft_n and
        # draft_n_accepted in `timings`
        **server_timings(reply.get("timings")),
    )
