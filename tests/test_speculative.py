"""Speculative decoding in the embedded model (READER_SPECULATIVE, reader.llm.local): the setting
reaches llama.cpp's parameters, and under greedy decoding the replies are the same with it."""

from __future__ import annotations

import pytest
import xllamacpp

from reader.config import SPECULATIVE_MODES, load_settings
from reader.errors import ConfigError
from reader.llm import local
from reader.llm.base import user
from reader.llm.factory import build_inner_llm

COPYING = (
    "We evaluate on the WMT 2014 English-German dataset, consisting of about 4.5 million sentence "
    "pairs. Our big model achieves 28.4 BLEU, outperforming the best previously reported models by "
    "more than 2.0 BLEU. Training took 3.5 days on 8 P100 GPUs. The base model reaches 27.3 BLEU "
    "after 12 hours on the same hardware, and the learning rate follows a warm-up of 4000 steps."
)


def test_every_mode_names_a_speculative_type_of_the_installed_xllamacpp():
    assert set(local.SPECULATIVE_TYPES) == set(SPECULATIVE_MODES) - {"off"}
    for name in local.SPECULATIVE_TYPES.values():
        assert hasattr(xllamacpp.common_speculative_type, name), name


@pytest.mark.parametrize("mode", [m for m in SPECULATIVE_MODES if m != "off"])
def test_a_mode_sets_llama_cpp_speculative_parameters(mode):
    params = xllamacpp.CommonParams()
    drafting = local.Drafting(mode, lookup=5, draft=9)
    local._set_speculative(params, drafting, xllamacpp)
    spec = params.speculative
    assert spec.types == [getattr(xllamacpp.common_speculative_type, local.SPECULATIVE_TYPES[mode])]
    assert (spec.ngram_simple.size_n, spec.ngram_simple.size_m) == (5, 9)
    assert (spec.ngram_map_k.size_n, spec.ngram_map_k.size_m) == (5, 9)
    assert (spec.ngram_mod.n_match, spec.ngram_mod.n_max) == (5, 9)
    assert spec.ngram_mod.n_min <= 9 and spec.draft.n_max == 9


def test_a_draft_model_sets_llama_cpp_draft_parameters():
    # no setting offers it (slower on two cores); benchmarks/bench_speculative.py measures it
    params = xllamacpp.CommonParams()
    params.cpuparams.n_threads = 2
    drafting = local.Drafting("draft", draft=8, draft_model="/models/draft.gguf", p_min=0.6)
    local._set_speculative(params, drafting, xllamacpp)
    spec = params.speculative
    assert spec.types == [xllamacpp.common_speculative_type.COMMON_SPECULATIVE_TYPE_DRAFT_SIMPLE]
    assert spec.draft.mparams.path == "/models/draft.gguf"
    assert spec.draft.n_max == 8 and spec.draft.p_min == pytest.approx(0.6)
    assert spec.draft.cpuparams.n_threads == 2


def test_off_leaves_llama_cpp_without_speculative_decoding():
    params = xllamacpp.CommonParams()
    local._set_speculative(params, local.drafting_for("off"), xllamacpp)
    assert params.speculative.types == [xllamacpp.common_speculative_type.COMMON_SPECULATIVE_TYPE_NONE]


def test_the_setting_reaches_the_embedded_model(tmp_path):
    for mode in SPECULATIVE_MODES:
        settings = load_settings({"READER_HOME": str(tmp_path), "READER_SPECULATIVE": mode})
        llm = build_inner_llm(settings, "verifier")
        assert llm.drafting == local.drafting_for(mode)
    default = build_inner_llm(load_settings({"READER_HOME": str(tmp_path)}), "generator")
    assert default.drafting.mode == load_settings({"READER_HOME": str(tmp_path)}).speculative
    with pytest.raises(ConfigError, match=r"READER_SPECULATIVE='ngram': use off, ngram-simple"):
        load_settings({"READER_HOME": str(tmp_path), "READER_SPECULATIVE": "ngram"})


def test_each_drafting_loads_its_own_server(tmp_path, monkeypatch):
    loads = []

    class Server:
        def handle_chat_completions(self, request):
            return {"choices": [{"message": {"content": "ok"}}], "usage": {}}

    def load(path, n_threads, n_ctx, drafting):
        loads.append(drafting)
        return Server()

    monkeypatch.setattr(local, "_load_server", load)
    monkeypatch.setattr(local, "_servers", {})
    model = tmp_path / "model.gguf"
    model.write_bytes(b"GGUF")
    plain = local.LocalLLM(model_path=model)
    drafted = local.LocalLLM(model_path=model, speculative="ngram-mod")
    for llm in (plain, drafted, plain):
        llm.complete(user("q"))
    assert [d.mode for d in loads] == ["off", "ngram-mod"]
    drafted.unload()
    drafted.complete(user("q"))
    assert [d.mode for d in loads] == ["off", "ngram-mod", "ngram-mod"]


@pytest.mark.model
def test_greedy_replies_are_the_same_with_drafting(embedded_llm):
    """The same text at temperature 0 with and without drafting, and the drafts were used: the
    copying prompt's reply repeats the evidence, so llama.cpp accepted drafted tokens (a reply
    that drafts nothing, such as a verifier's, cannot tell the two apart)."""
    drafted = local.LocalLLM(
        model_path=embedded_llm.model_path(), n_threads=embedded_llm.n_threads, speculative="ngram-simple"
    )
    prompt = f"Copy this paragraph word for word, then stop.\n\n{COPYING}"
    request = {"messages": user(prompt), "temperature": 0.0, "max_tokens": 100, "seed": 0}
    try:
        plain = embedded_llm.raw_reply(dict(request))
        fast = drafted.raw_reply(dict(request))
        assert fast["choices"][0]["message"]["content"] == plain["choices"][0]["message"]["content"]
        accepted = fast["timings"].get("draft_n_accepted", 0)
        assert accepted > 20, f"llama.cpp accepted only {accepted} drafted tokens"
    finally:
        drafted.unload()
