"""benchmarks/answer_stage_variants.py's NoRelevance: it cuts what it claims to, or fails loudly."""

import pytest

from benchmarks.answer_stage_variants import NoRelevance
from reader.crag.evidence import Candidate
from reader.crag.generate import generate_answer
from reader.crag.grade import Grade
from reader.llm.scripted import ScriptedLLM


def test_no_relevance_cuts_the_graders_part_of_every_source_line():
    llm = ScriptedLLM(lambda prompt: "They compare against LDA [1].")
    passage = Candidate("chunk:1", "We compare against LDA.", "p", 1, page_start=3, page_end=3)
    passage.grade = Grade("chunk:1", 0.8, False, "names the baselines")
    generate_answer("Which baselines?", [passage], NoRelevance(llm), label=lambda c: "Topic Models, p. 3")
    prompt = llm.history[0]["prompt"]
    assert "[1] Topic Models, p. 3\n" in prompt
    assert "relevance 0.80" not in prompt and "names the baselines" not in prompt


def test_no_relevance_raises_when_the_prompt_has_no_such_line():
    with pytest.raises(ValueError, match="no '— relevance"):
        NoRelevance(ScriptedLLM()).complete(
            [{"role": "user", "content": "no source lines"}], stage="crag-answer"
        )
