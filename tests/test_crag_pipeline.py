import os
import time

import pytest
from controls import record_controls, yes_but_controls
from crag_fakes import PAPER_A, PAPER_B, TITLES, CragLLM, FakeSearch, always_grounded

from reader.crag.external import ExternalHit
from reader.crag.generate import NOT_FOUND, NOT_FOUND_ZH
from reader.crag.pipeline import CragConfig, ask
from reader.llm.scripted import ScriptedLLM


def run(question, llm, *, paper_id=PAPER_A, search=None, check=always_grounded, **kw):
    return ask(
        question,
        paper_id=paper_id,
        generator=llm,
        verifier=ScriptedLLM(lambda p: "[1] YES"),
        search=search or FakeSearch(),
        check_grounded=check,
        titles=TITLES,
        **kw,
    )


def test_correct_route_refines_and_answers_without_correction():
    llm = CragLLM(relevant_words=["baselines"])
    result = run("Which baselines do they compare against?", llm)
    assert result.route == "correct"
    assert result.trace == ["retrieve", "grade", "route", "refine", "generate", "check"]
    assert "crag-rewrite" not in llm.stages()
    assert result.answer == "They compare against LDA and TF-IDF [1]."
    assert result.grounded and not result.not_found
    assert {s.chunk_id for s in result.sources} == {2, 3}
    two = next(s for s in result.sources if s.chunk_id == 2)
    # refine kept the two baseline sentences verbatim and dropped "Training took three days."
    assert two.refined == "We compare against two baselines. The baselines are LDA and TF-IDF retrieval."
    assert result.confidence > 0.5
    assert result.llm_calls == len(llm.history)


def test_ambiguous_route_refines_what_is_there_and_runs_corrective_retrieval():
    # chunk 3 is relevant, chunk 1 gets an unreadable grade, chunk 2 is graded irrelevant
    llm = CragLLM(
        relevant_words=["beats", "english only"],
        ambiguous_words=["topic model"],
        rewrites=["English corpus limitations", "model beats LDA", "scales corpora"],
    )
    result = run("Which baselines does our topic model beat?", llm)
    assert result.route == "ambiguous"
    assert result.trace == ["retrieve", "grade", "route", "correct", "refine", "generate", "check"]
    assert result.corrective_rounds == 1 and llm.stages().count("crag-rewrite") == 1
    assert result.rewrites == ["English corpus limitations", "model beats LDA", "scales corpora"]
    # what was there (3) plus what the correction found (4); the ambiguous and irrelevant are dropped
    assert {s.chunk_id for s in result.sources} == {3, 4}
    assert {s.origin for s in result.sources} == {"retrieval", "rewrite"}
    grades = {g["chunk_id"]: g for g in result.to_json()["grades"]}
    assert grades[1]["ambiguous"] and grades[1]["score"] == 0.4
    assert not result.not_found and not result.fallback_used


def test_incorrect_route_falls_back_to_the_rest_of_the_collection_and_says_so():
    llm = CragLLM(
        relevant_words=["gc-ms"],
        rewrites=["measurement instrument", "metabolite profiles", "x"],
        answer="Metabolites were measured with GC-MS [1].",
    )
    result = run("How were the metabolite profiles measured?", llm)
    assert result.route == "incorrect"
    assert result.trace == [
        "retrieve",
        "grade",
        "route",
        "correct",
        "fallback",
        "refine",
        "generate",
        "check",
    ]
    assert result.fallback_used
    assert [s.chunk_id for s in result.sources] == [6]
    source = result.sources[0]
    assert source.paper_id == PAPER_B and source.origin == "collection"
    assert "another paper" in source.source_label and "Wheat Metabolomics" in source.source_label
    answer_prompt = next(c["prompt"] for c in llm.history if c["stage"] == "crag-answer")
    assert "from another paper in the library" in answer_prompt
    assert "Say which evidence comes from another paper" in answer_prompt
    assert result.to_json()["sources"][0]["paper_id"] == PAPER_B


def test_empty_evidence_makes_no_generator_call_and_says_not_found():
    llm = CragLLM(relevant_words=[])
    calls = []
    result = run(
        "What GPU trained the topic model?",
        llm,
        check=lambda *a: calls.append(a) or (False, "should not run"),
    )
    assert result.answer == NOT_FOUND and result.not_found
    assert "crag-answer" not in llm.stages() and "crag-refine" not in llm.stages()
    assert calls == []  # nothing claimed, nothing to check
    assert result.grounded is True and "not" in result.grounded_reason
    assert result.sources == []
    assert result.to_json()["grades"]  # the grades are still reported


def test_not_found_in_chinese_for_a_chinese_question():
    result = run("他们用了什么GPU？", CragLLM(relevant_words=[]))
    assert result.answer == NOT_FOUND_ZH


def test_generator_refusing_with_the_sentinel_counts_as_not_found():
    llm = CragLLM(relevant_words=["baselines"], answer="Not found in the papers.")
    result = run("Which baselines do they compare against?", llm)
    assert result.not_found and result.answer == NOT_FOUND and result.sources == []


def test_verifier_failure_keeps_the_answer_with_grounded_false():
    def broken(answer, evidence, verifier):
        raise ConnectionError("verifier endpoint refused the connection")

    result = run(
        "Which baselines do they compare against?", CragLLM(relevant_words=["baselines"]), check=broken
    )
    assert result.answer == "They compare against LDA and TF-IDF [1]."
    assert result.grounded is False
    assert "verifier endpoint refused" in result.grounded_reason


def test_verifier_timeout_keeps_the_answer_with_grounded_false():
    def slow(answer, evidence, verifier):
        time.sleep(1.0)
        return True, "late"

    result = run(
        "Which baselines do they compare against?",
        CragLLM(relevant_words=["baselines"]),
        check=slow,
        config=CragConfig(check_timeout_s=0.05),
    )
    assert result.answer.startswith("They compare")
    assert result.grounded is False and "timed out" in result.grounded_reason


def test_check_sees_the_answer_without_citation_marks_and_the_kept_evidence():
    seen = {}

    def check(answer, evidence, verifier):
        seen["answer"], seen["evidence"] = answer, [c.refined for c in evidence]
        return False, "1 of 1 sentences unsupported"

    result = run(
        "Which baselines do they compare against?",
        CragLLM(relevant_words=["baselines"]),
        check=check,
        config=CragConfig(ungrounded="keep"),
    )
    assert seen["answer"] == "They compare against LDA and TF-IDF."
    assert any("LDA and TF-IDF" in e for e in seen["evidence"])
    assert result.grounded is False and result.grounded_reason == "1 of 1 sentences unsupported"


@pytest.mark.parametrize("rounds", [0, 1, 2])
def test_loop_guard_caps_corrective_rounds(rounds):
    llm = CragLLM(relevant_words=[])  # nothing is ever relevant: the worst case for looping
    result = run("What GPU did they train on?", llm, config=CragConfig(max_corrective_rounds=rounds))
    assert llm.stages().count("crag-rewrite") == rounds == result.corrective_rounds
    assert result.trace.count("fallback") == 1
    assert result.trace[-1] == "generate" and result.not_found


def test_rewrites_are_retrieved_concurrently_and_deduplicated():
    search = FakeSearch(delay_s=0.1)
    llm = CragLLM(relevant_words=[], rewrites=["LDA baselines", "LDA comparison", "LDA results"])
    result = run("Which GPU?", llm, search=search, config=CragConfig(collection_fallback=False))
    rewrite_calls = [c for c in search.calls if c[0].startswith("LDA")]
    assert len(rewrite_calls) == 3
    assert search.peak >= 2  # the three rewrite searches overlapped
    graded_ids = [g["chunk_id"] for g in result.to_json()["grades"]]
    assert len(graded_ids) == len(set(graded_ids))  # every chunk graded once
    assert {2, 3} <= set(graded_ids)


def test_collection_question_uses_the_external_source_labelled_as_external():
    class FakeExternal:
        name = "fake-arxiv"

        def __init__(self):
            self.queries = []

        def search(self, query, limit=3):
            self.queries.append(query)
            return [
                ExternalHit(
                    "fake-arxiv",
                    "Quantum Widgets",
                    "https://example.org/1",
                    "Quantum widgets were first described in 1999.",
                )
            ]

    external = FakeExternal()
    llm = CragLLM(relevant_words=["quantum"], answer="They were described in 1999 [1].")
    result = run("When were quantum widgets described?", llm, paper_id=None, external=external)
    assert external.queries == ["When were quantum widgets described?"]
    assert result.sources[0].external is True
    assert result.to_json()["sources"][0]["external"] is True
    assert "external" in result.sources[0].source_label
    answer_prompt = next(c["prompt"] for c in llm.history if c["stage"] == "crag-answer")
    assert "(external source, not in the library)" in answer_prompt


def test_external_search_is_off_by_default_and_collection_questions_search_everything():
    search = FakeSearch()
    result = run(
        "How were the metabolite profiles measured?",
        CragLLM(relevant_words=["gc-ms", "wheat"]),
        paper_id=None,
        search=search,
    )
    assert search.calls[0] == ("How were the metabolite profiles measured?", None)
    assert result.sources and all(not s.external for s in result.sources)


def test_json_shape():
    result = run("Which baselines do they compare against?", CragLLM(relevant_words=["baselines"]))
    data = result.to_json()
    assert {
        "answer",
        "grounded",
        "route",
        "confidence",
        "sources",
        "grades",
        "rewrites",
        "llm_calls",
        "tokens",
    } <= set(data)
    assert {"paper_id", "chunk_id", "pages", "text", "score", "external"} <= set(data["sources"][0])
    assert {"chunk_id", "score", "ambiguous", "reasoning"} <= set(data["grades"][0])
    assert data["sources"][0]["pages"] in {"5", "6"}
    assert data["tokens"] > 0


def test_groundedness_uses_the_audit_machinery_against_the_kept_evidence(monkeypatch):
    from reader.crag.grounded import audit_grounded

    controls = record_controls(monkeypatch)  # the check carries a control claim too: NO to it
    verifier = ScriptedLLM(lambda prompt: yes_but_controls(prompt, controls))
    generator = CragLLM(
        relevant_words=["baselines"],
        answer="They compare against LDA and TF-IDF [1]. LDA is beaten by 4 points [2].",
    )
    result = ask(
        "Which baselines do they compare against?",
        paper_id=PAPER_A,
        generator=generator,
        verifier=verifier,
        search=FakeSearch(),
        check_grounded=audit_grounded,
        titles=TITLES,
    )
    assert result.grounded, result.grounded_reason
    assert "all 2 sentences" in result.grounded_reason
    [call] = verifier.history
    assert call["stage"] == "crag-check"
    assert "The baselines are LDA and TF-IDF retrieval." in call["prompt"]  # the refined evidence
    assert "[1]" not in call["prompt"].split("LDA and TF-IDF", 1)[0][-5:]
    # The check's prompt is the answer's up to the question, so a prompt cache reads the evidence once.
    answer_prompt = next(h["prompt"] for h in generator.history if h["stage"] == "crag-answer")
    shared = os.path.commonprefix([answer_prompt, call["prompt"]])
    assert "The baselines are LDA and TF-IDF retrieval." in shared
    assert call["prompt"][len(shared) :].startswith("Claims:")
    assert len(result.to_json()["grades"]) == 2
    assert result.llm_calls == len(verifier.history) + 1 + 1 + 1  # one grade call, one refine call, answer


def test_groundedness_flags_a_fabricated_number_even_when_the_verifier_says_yes():
    from reader.crag.grounded import audit_grounded

    result = ask(
        "Which baselines do they compare against?",
        paper_id=PAPER_A,
        generator=CragLLM(relevant_words=["baselines"], answer="They beat LDA by 17.5 points [1]."),
        verifier=ScriptedLLM(lambda prompt: "[1] YES"),
        search=FakeSearch(),
        check_grounded=audit_grounded,
        titles=TITLES,
        config=CragConfig(ungrounded="keep"),
    )
    assert result.grounded is False
    assert "17.5" in result.grounded_reason
    assert result.answer == "They beat LDA by 17.5 points [1]."  # the answer is kept


def test_groundedness_when_the_verifier_endpoint_fails():
    from reader.crag.grounded import audit_grounded

    result = ask(
        "Which baselines do they compare against?",
        paper_id=PAPER_A,
        generator=CragLLM(relevant_words=["baselines"]),
        verifier=ScriptedLLM().enqueue(TimeoutError("read timed out")),
        search=FakeSearch(),
        check_grounded=audit_grounded,
        titles=TITLES,
    )
    assert result.grounded is False and "read timed out" in result.grounded_reason
    assert result.answer.startswith("They compare against LDA")


def test_every_grade_failing_is_an_error_not_a_not_found_answer():
    from reader.errors import LLMError

    down = ScriptedLLM(lambda p: (_ for _ in ()).throw(LLMError("no answer from http://127.0.0.1:9/v1")))
    with pytest.raises(LLMError, match="grader could not judge any passage.*127.0.0.1:9"):
        run("Which baselines do they compare against?", down)


# -- the measurement seam: on_step and stop_before ----------------------------------------


def test_on_step_sees_every_step_with_the_state_it_left():
    seen = []

    def observe(step, run_state):
        seen.append((step, len(run_state.graded), len(run_state.refined), run_state.answer is not None))

    result = run(
        "Which baselines do they compare against?", CragLLM(relevant_words=["baselines"]), on_step=observe
    )
    assert [step for step, *_ in seen] == result.trace
    assert seen[1][:2] == ("grade", len(result.graded))  # the grades are there once the grade step ran
    assert seen[result.trace.index("refine")][2] == len(result.sources)
    assert not seen[result.trace.index("refine")][3] and seen[result.trace.index("generate")][3]


def test_stop_before_ends_the_run_at_that_step_without_its_calls():
    llm = CragLLM(relevant_words=["baselines"])
    kept = {}
    result = run(
        "Which baselines do they compare against?",
        llm,
        stop_before="generate",
        on_step=lambda step, state: kept.update(refined=list(state.refined)),
    )
    assert result.trace == ["retrieve", "grade", "route", "refine"]
    assert "crag-answer" not in llm.stages()
    assert result.answer == "" and not result.not_found and not result.sources
    assert result.notes == ["stopped before the generate step"]
    assert {c.chunk_id for c in kept["refined"]} == {2, 3}
    with pytest.raises(ValueError, match="not a step"):
        run("q?", CragLLM(), stop_before="answer")


def test_a_refused_answer_keeps_the_sentences_the_check_found_supported():
    from reader.crag.grounded import Groundedness

    llm = CragLLM(
        relevant_words=["baselines"],
        answer="They compare against LDA and TF-IDF [1]. They beat both by 40 points [1].",
    )
    supported = ("They compare against LDA and TF-IDF.",)
    result = run(
        "Which baselines do they compare against?",
        llm,
        check=lambda *a: Groundedness(False, "1 of 2 sentences unsupported", supported),
    )
    assert result.answer == "They compare against LDA and TF-IDF [1]."
    assert result.grounded and not result.not_found
    assert "the 1 sentence kept of the drafted answer's 2" in result.grounded_reason
    assert any("They beat both by 40 points" in note and "left out" in note for note in result.notes)


def test_a_refused_answer_whose_supported_sentences_only_restate_the_question_is_withheld():
    from reader.crag.grounded import Groundedness

    llm = CragLLM(
        relevant_words=["baselines"], answer="They compare against baselines [1]. They beat BM25 [1]."
    )
    supported = ("They compare against baselines.",)
    result = run(
        "Which baselines do they compare against?",
        llm,
        check=lambda *a: Groundedness(False, "1 of 2 sentences unsupported", supported),
    )
    assert result.not_found and result.answer == NOT_FOUND
    assert any(note.startswith("a drafted answer was withheld") for note in result.notes)


def test_the_writers_bar_is_the_answer_threshold_only_under_the_p_yes_refusal():
    assert CragConfig(refusal="p_yes", answer_p_yes=0.3).writer_bar == 0.3
    assert CragConfig(refusal="writer", answer_p_yes=0.3).writer_bar == 0.0


def test_a_papers_reference_list_is_no_evidence_for_a_question_about_its_content():
    # 2kenize's follow-up "What is the main focus of the paper?" was answered "converting between
    # Japanese, traditional and simplified Chinese" from a reference's title
    from reader.crag.correct import retrieve_all
    from reader.index.hits import SearchHit

    def search(query, paper_id):
        return [
            SearchHit(
                1,
                PAPER_A,
                "Chu et al. 2012. Chinese characters mapping table of Japanese.",
                "References",
                10,
                10,
                0.2,
            ),
            SearchHit(
                2,
                PAPER_A,
                "We convert between simplified and traditional Chinese.",
                "1 Introduction",
                1,
                1,
                0.1,
            ),
            SearchHit(
                3, PAPER_A, "Bradbury et al. 2016. Quasi-recurrent networks.", "7 Bibliography", 11, 11, 0.1
            ),
        ]

    found = retrieve_all(["What scripts are converted?"], search, PAPER_A, origin="retrieval")
    assert [c.chunk_id for c in found] == [2]
