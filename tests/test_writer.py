"""The writer (reader.deepread.writer): one call per heading with its own material, rewrites per heading,
the writer's sampling controls, and the material chosen by rule (reader.deepread.material)."""

from __future__ import annotations

from dataclasses import dataclass

from reader.deepread.material import (
    ABSTRACT,
    CONCLUSION,
    METHOD,
    OTHER,
    RESULTS,
    critique_facts,
    heading_material,
)
from reader.deepread.tidy import third_person
from reader.deepread.writer import (
    WRITER_SAMPLING,
    Request,
    heading_body,
    headings,
    join_document,
    rewrite_document,
    split_document,
    write_document,
)
from reader.llm.base import Completion
from reader.llm.logged import cache_key
from reader.llm.scripted import ScriptedLLM


@dataclass
class S:
    title: str
    text: str
    priority: int


SECTIONS = [
    S(
        "Abstract",
        "We propose HeadPrune, a method that removes attention heads. It keeps 97% of accuracy.",
        ABSTRACT,
    ),
    S(
        "2 Related Work",
        "Michel et al. (2019) prune heads by importance scores computed on a held-out set. "
        "Earlier work prunes whole layers instead of single heads.",
        OTHER,
    ),
    S(
        "3 Method",
        "The model scores each head by the gradient of the loss with respect to its gate. "
        "Heads with the lowest scores are removed in ten steps.",
        METHOD,
    ),
    S(
        "4 Results",
        "On MNLI the pruned model reaches 83.97 against 84.27 for the full model. "
        "We evaluate on 9,815 sentences of the matched development set.",
        RESULTS,
    ),
    S(
        "5 Conclusion",
        "A limitation is that only BERT-base was tested; future work could test larger models.",
        CONCLUSION,
    ),
]


def request(kind="synthesis", **changes):
    values = dict(
        kind=kind,
        title="HeadPrune",
        language="en",
        context="## 3 Method\nThe model scores each head.",
        left_out=[],
        sections=SECTIONS,
        paper_id="p" * 64,
        words_per_heading=90,
    )
    return Request(**{**values, **changes})


def test_headings_come_from_the_prompts():
    assert headings("synthesis") == [
        "Problem",
        "Contributions",
        "Method",
        "Key results",
        "Relation to prior work",
        "Open questions",
    ]
    assert headings("critique")[0] == "Strengths" and len(headings("critique")) == 6


def test_each_heading_gets_its_own_material():
    used: set[str] = set()
    results = heading_material("Key results", SECTIONS, used, 200)
    assert any("83.97" in s for s in results) and all("gradient" not in s for s in results)
    prior = heading_material("Relation to prior work", SECTIONS, used, 200)
    assert prior and "Michel et al. (2019)" in prior[0]
    method = heading_material("Method", SECTIONS, used, 200)
    assert any("gradient of the loss" in s for s in method)
    questions = heading_material("Open questions", SECTIONS, used, 200)
    assert any("future work" in s for s in questions)
    # within the budget, and a sentence given to an earlier heading is passed over while others are left
    assert heading_material("Key results", SECTIONS, set(), 8) == []
    again = heading_material("Strengths", SECTIONS, used, 60)
    assert len(again) <= 2


def test_critique_facts_are_found_by_rule():
    facts = critique_facts("Quality of the evidence", SECTIONS)
    assert any("9,815 sentences" in f for f in facts)
    # what the paper lacks the tool states itself (reader.deepread.checked), not the writer
    assert not any("standard deviation" in f or "limitations" in f for f in facts)
    assert critique_facts("Problem", SECTIONS) == []
    with_sd = SECTIONS + [S("4.2 Variance", "Scores are averaged over 5 seeds (± 0.3).", RESULTS)]
    assert any(
        f.startswith("Variance or significance is mentioned")
        for f in critique_facts("Quality of the evidence", with_sd)
    )


def test_a_reply_gives_the_text_under_the_heading_asked_for():
    assert heading_body("Plain text.", "Method") == "Plain text."
    reply = "## Problem\nP text.\n## Method\nM text.\n**Key results**\nK."
    assert heading_body(reply, "Method") == "M text."
    assert heading_body(reply, "Key results") == "K."
    assert heading_body("Intro.\n## Other\nX.", "Method") == "Intro."
    # named otherwise by the model: the text under its first heading, not nothing
    assert (
        heading_body("## Results\n\n## Findings\nF1 rose to 0.91.\n## Other\nX.", "Key results")
        == "F1 rose to 0.91."
    )
    assert heading_body("## Strengths\nS.\n## Method\nM.", "Weaknesses") == ""  # another heading's text
    parts = split_document("## A\nOne.\n\n## B\nTwo.")
    assert parts == [("A", "One."), ("B", "Two.")] and join_document(parts) == "## A\nOne.\n\n## B\nTwo."


def test_a_document_is_one_call_per_heading_with_the_writers_sampling():
    def write(prompt):
        heading = prompt.split('the heading "')[-1].split('"')[0]
        return f"## {heading}\nAbout {heading.lower()} of HeadPrune."

    generator = ScriptedLLM(write)
    draft = write_document(generator, request())
    assert [h for h, _ in split_document(draft.text)] == headings("synthesis")
    assert "About key results of HeadPrune." in draft.text and draft.calls == 6
    assert all(h["sampling"] == WRITER_SAMPLING for h in generator.history)
    assert all(h["max_tokens"] == int(90 * 2.2) + 60 for h in generator.history)
    key_results = [h["prompt"] for h in generator.history if 'heading "Key results"' in h["prompt"]][0]
    assert "83.97" in key_results.split("<material>")[1]


def test_a_rewrite_asks_again_only_for_the_headings_with_unsupported_sentences():
    generator = ScriptedLLM(lambda prompt: "HeadPrune removes heads in ten steps.")
    previous = "## Problem\nHeads are many.\n\n## Method\nIt uses magic. It scores heads by gradient."
    out = rewrite_document(generator, request(), previous, ["It uses magic."])
    assert generator.calls == 1 and out.calls == 1
    prompt = generator.history[0]["prompt"]
    assert 'Rewrite the text under the heading "Method"' in prompt
    assert "It scores heads by gradient." in prompt.split("<draft>")[1].split("</draft>")[0]
    assert "It uses magic." not in prompt.split("<draft>")[1].split("</draft>")[0]
    # the tool's quote of the paper's data follows the writer's account (reader.deepread.checked)
    (setup,) = [f.sentence for f in request().checked if f.heading == "Method"]
    assert (
        out.text
        == f"## Problem\nHeads are many.\n\n## Method\nHeadPrune removes heads in ten steps.\n\n{setup}"
    )
    # an empty reply keeps the heading's supported sentences
    empty = rewrite_document(ScriptedLLM(lambda prompt: " "), request(), previous, ["It uses magic."])
    assert empty.text.endswith(f"## Method\nIt scores heads by gradient.\n\n{setup}")


def test_an_llm_without_sampling_controls_is_not_passed_them():
    class OwnLLM:
        model = "own"

        def complete(self, messages, *, temperature=0.0, max_tokens=512, stage="", paper_id=None):
            return Completion(text="Text.")

    assert write_document(OwnLLM(), request()).calls == 6


def test_sampling_controls_reach_the_embedded_model_and_the_endpoint(monkeypatch):
    from reader.llm import local
    from reader.llm.local import LocalLLM

    seen = {}

    class Server:
        def handle_chat_completions(self, request):
            seen.update(request)
            return {"choices": [{"message": {"content": "ok"}}], "usage": {}}

    llm = LocalLLM(model_path="model.gguf")
    monkeypatch.setattr(llm, "load", lambda: 0.0)
    monkeypatch.setitem(local._servers, llm._key(), Server())
    llm.complete([{"role": "user", "content": "x"}], sampling={"repeat_penalty": 1.1, "min_p": 0.05})
    assert seen["repeat_penalty"] == 1.1 and seen["min_p"] == 0.05
    # a different sampling is a different cached reply
    messages = [{"role": "user", "content": "x"}]
    assert cache_key("m", messages, 0.2, 10) != cache_key("m", messages, 0.2, 10, sampling=WRITER_SAMPLING)


def test_an_endpoint_gets_only_the_openai_penalties():
    from loopback_openai import LoopbackOpenAI

    from reader.config import LLMSettings
    from reader.llm.openai_compat import OpenAICompatLLM

    with LoopbackOpenAI(respond=lambda prompt: "ok") as server:
        llm = OpenAICompatLLM(LLMSettings(base_url=server.base_url, model="test-model", api_key="k"))
        llm.complete(
            [{"role": "user", "content": "x"}],
            sampling={"repeat_penalty": 1.1, "frequency_penalty": 0.3, "dry_multiplier": 0.8},
        )
        body = server.chat_requests[-1]["json"]
    assert body["frequency_penalty"] == 0.3
    assert "repeat_penalty" not in body and "dry_multiplier" not in body


def test_the_papers_first_person_becomes_the_authors():
    assert third_person("We propose HeadPrune. Our model beats the US baseline; it lets us win.") == (
        "The authors propose HeadPrune. Their model beats the US baseline; it lets them win."
    )


def test_key_results_give_the_abstracts_figures_the_writer_left_out():
    abstract = S(
        "Abstract",
        "We propose HeadPrune, a method that removes attention heads. "
        "Pruning 40% of the heads keeps 97.3% of the accuracy on MNLI. "
        "It was first described in 2019 by the same group of authors.",
        ABSTRACT,
    )
    generator = ScriptedLLM(lambda prompt: "The pruned model is almost as accurate as the full one.")
    draft = write_document(generator, request(sections=[abstract, *SECTIONS[1:]]))
    key_results = dict(split_document(draft.text))["Key results"]
    assert key_results == (
        "The pruned model is almost as accurate as the full one. "
        "Pruning 40% of the heads keeps 97.3% of the accuracy on MNLI."
    )
    # a writer that gave the figures gets nothing added; a year is no headline figure
    generator = ScriptedLLM(lambda prompt: "Pruning 40% of heads keeps 97.3% of the accuracy.")
    key_results = dict(split_document(write_document(generator, request(sections=[abstract])).text))[
        "Key results"
    ]
    assert key_results == "Pruning 40% of heads keeps 97.3% of the accuracy."
    # written in another language than the paper's: nothing of the abstract is added
    other = request(sections=[abstract], output_language="zh")
    assert "MNLI" not in dict(split_document(write_document(generator, other).text))["Key results"]


def test_a_sentence_the_length_limit_cut_off_is_dropped():
    def write(prompt):
        if 'heading "Open questions"' in prompt:
            return "1. Only BERT-base was tested. 2. Larger models are left to future work. 3. The authors"
        return "HeadPrune removes heads in ten steps. It keeps 97% of the accuracy"

    parts = dict(split_document(write_document(ScriptedLLM(write), request()).text))
    assert (
        parts["Open questions"] == "1. Only BERT-base was tested. 2. Larger models are left to future work."
    )
    (setup,) = [f.sentence for f in request().checked if f.heading == "Method"]
    assert parts["Method"] == f"HeadPrune removes heads in ten steps.\n\n{setup}"
    # one sentence, cut or not, is kept: the heading would otherwise be empty
    one = dict(
        split_document(write_document(ScriptedLLM(lambda p: "HeadPrune removes heads in"), request()).text)
    )
    assert one["Problem"] == "HeadPrune removes heads in"  # (Method also gets the tool's quote of the data)


def test_material_spans_the_sections_rather_than_one():
    rich = S(
        "3.1 Model",
        "The model has an encoder layer and a decoder layer. The model is trained with a step schedule. "
        "The model input is a feature vector per word. The model output is a label per layer step.",
        METHOD,
    )
    other = S("3.2 Training data", "Training uses the method of distant supervision on news.", METHOD)
    material = heading_material("Method", [rich, other], set(), 45)
    assert other.text in material, "the second section gives its sentence though the first scores higher"
    assert len(material) >= 2 and material[-1] == other.text  # in the paper's order


def test_list_numbers_and_footnote_marks_are_no_headline_figures():
    abstract = S(
        "Abstract",
        "We ask three questions: (1) How can agreement be raised? (2) How can the workload fall? "
        "A survey of 162 papers finds that 73% do no human evaluation. "
        "Finer units cut the standard deviation from 18.5 to 6.8. "
        "Partial annotation correlates at 0.89 with full annotation. We release our data.1",
        ABSTRACT,
    )
    generator = ScriptedLLM(lambda prompt: "Finer units make the judgements agree more.")
    key_results = dict(split_document(write_document(generator, request(sections=[abstract])).text))[
        "Key results"
    ]
    for figure in ("162", "73%", "18.5", "6.8", "0.89"):
        assert figure in key_results
    assert "(2)" not in key_results and "release" not in key_results


def test_the_synthesis_is_shown_the_papers_sentences_and_the_critique_only_the_checks_facts():
    generator = ScriptedLLM(lambda prompt: "HeadPrune removes heads in ten steps.")
    write_document(generator, request(kind="synthesis"))
    write_document(generator, request(kind="critique"))
    synthesis, critique = generator.history[:6], generator.history[6:]
    assert all("at most 18 words each" in h["prompt"] for h in synthesis)
    assert sum("<material>" in h["prompt"] for h in synthesis) >= 4
    assert not any("<material>" in h["prompt"] or "at most 18 words" in h["prompt"] for h in critique)
    weaknesses = next(h["prompt"] for h in critique if 'heading "Weaknesses"' in h["prompt"])
    assert "9,815 sentences" in weaknesses.split("<facts>")[1]
