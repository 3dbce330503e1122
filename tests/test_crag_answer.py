"""The answer step's two guards against a small writer: a reply of nothing but citation markers
is asked for once more, and a "not found" reply with a passage the grader was sure of (its
P(YES) from token log-probabilities) quotes that passage instead of refusing."""

import math

import pytest
from crag_fakes import PAPER_A, TITLES, CragLLM, FakeSearch, always_grounded, passages_of, role_of

from reader.crag.generate import (
    NOT_FOUND,
    disclaims_answer,
    only_markers,
    only_points_elsewhere,
    restates_question,
)
from reader.crag.pipeline import CragConfig, Metered, ask
from reader.llm.base import Completion, supports_logprobs
from reader.llm.scripted import ScriptedLLM

QUESTION = "Which baselines do they compare against?"


def pos(token, yes=None):
    top = (
        {}
        if yes is None
        else {" YES": math.log(yes), " NO": math.log(1 - yes), "YES": math.log(yes), "NO": math.log(1 - yes)}
    )
    return {"token": token, "logprob": top.get(token, math.log(0.5)), "top": top}


class SureGrader(CragLLM):
    """Grades YES/NO by keywords, with log-probabilities: P(YES) = `p_yes` on a YES line."""

    supports_logprobs = True

    def __init__(self, p_yes, single_p_yes=None, **kw):
        self.p_yes = p_yes
        self.single_p_yes = single_p_yes  # P(YES) of a one-passage grade (default: p_yes)
        self.asked_logprobs = []
        super().__init__(**kw)

    def _grade(self, passage):
        return "YES\nReason: names them" if any(w in passage.lower() for w in self.relevant_words) else "NO"

    def complete(self, messages, *, logprobs=0, **kw):
        completion = super().complete(messages, **kw)
        self.asked_logprobs.append((kw.get("stage"), logprobs))
        if logprobs and kw.get("stage") == "crag-grade-batch":
            tokens = []
            for line in completion.text.splitlines():
                number, answer = line[1 : line.index("]")], line.split()[1]
                p = self.p_yes if answer == "YES" else 1 - self.p_yes
                tokens += [pos("["), pos(number), pos("]"), pos(f" {answer}", yes=p), pos(" - why\n")]
            completion.logprobs = tokens
        if logprobs and kw.get("stage") == "crag-grade":  # one passage: "YES\nReason: ..." or "NO"
            answer = completion.text.split()[0]
            p = self.single_p_yes if self.single_p_yes is not None else self.p_yes
            completion.logprobs = [pos(answer, yes=p if answer == "YES" else 1 - p), pos("\n")]
        return completion


def run(llm, config=None):
    return ask(
        QUESTION,
        paper_id=PAPER_A,
        generator=llm,
        verifier=ScriptedLLM(lambda p: "[1] YES"),
        search=FakeSearch(),
        check_grounded=always_grounded,
        titles=TITLES,
        config=config or CragConfig(),
    )


def test_grades_carry_p_yes_when_the_grader_gives_log_probabilities():
    llm = SureGrader(0.97, relevant_words=["baselines"])
    result = run(llm)
    assert ("crag-grade-batch", 5) in llm.asked_logprobs
    grades = result.to_json()["grades"]
    assert [(g["p_yes"], g["score"]) for g in grades] == [
        (0.97, 0.8),
        (0.97, 0.8),
    ]  # the route reads the verdict
    without = run(CragLLM(relevant_words=["baselines"])).to_json()["grades"]
    assert without and all(g["p_yes"] is None for g in without)


def test_a_writer_refusing_with_a_sure_passage_in_hand_quotes_it():
    llm = SureGrader(0.97, relevant_words=["baselines"], answer=NOT_FOUND)
    result = run(llm)
    assert not result.not_found and result.quoted and result.to_json()["answer_quoted"]
    assert "The baselines are LDA and TF-IDF retrieval." in result.answer
    cited = [int(n) for n in __import__("re").findall(r"\[(\d+)\]", result.answer)]
    assert cited and all(1 <= n <= len(result.sources) for n in cited)
    assert "baselines" in result.sources[cited[0] - 1].text  # the marker names a passage that says it
    assert any("quotes it" in note for note in result.notes)
    assert result.trace[-1] == "check"  # a quoted answer is checked like any other


@pytest.mark.parametrize(
    "grader",
    [
        SureGrader(0.7, relevant_words=["baselines"], answer=NOT_FOUND),  # YES, but not sure enough
        CragLLM(relevant_words=["baselines"], answer=NOT_FOUND),  # no log-probabilities at all
    ],
)
def test_without_a_sure_grade_the_refusal_stands(grader):
    result = run(grader)
    assert result.not_found and result.answer == NOT_FOUND and not result.quoted


def test_quoting_can_be_switched_off():
    result = run(
        SureGrader(0.99, relevant_words=["baselines"], answer=NOT_FOUND), CragConfig(quote_threshold=None)
    )
    assert result.not_found


def test_an_answer_of_only_citation_markers_is_asked_for_once_more():
    llm = CragLLM(relevant_words=["baselines"])
    answers = iter(["[1] [2][3]", "They compare against LDA and TF-IDF [1]."])
    llm.answer_for = lambda: next(answers)
    original = llm._respond
    llm.respond = lambda prompt: (
        llm.answer_for() if "Evidence from research papers" in prompt else original(prompt)
    )
    result = run(llm)
    assert result.answer == "They compare against LDA and TF-IDF [1]."
    assert sum(1 for c in llm.history if c["stage"] == "crag-answer") == 2
    assert any("only citation markers" in note for note in result.notes)


def test_markers_twice_is_not_found():
    result = run(CragLLM(relevant_words=["baselines"], answer="[2]."))
    assert result.not_found and result.answer == NOT_FOUND


@pytest.mark.parametrize(
    "text, expected",
    [
        ("[1] [2][3]", True),
        ("[2].", True),
        ("[1-3], [4]", True),
        ("", True),
        ("LDA [1].", False),
        ("未在论文中找到 [1]", False),
    ],
)
def test_only_markers(text, expected):
    assert only_markers(text) is expected


@pytest.mark.parametrize(
    "text, expected",
    [
        ("The evaluation metrics used are detailed in Table 1 of the first passage.", True),
        ("The evaluation method used for the study is described in [1].", True),
        (
            "The specific datasets used for intrinsic evaluation are described in Table 2 of the paper [4].",
            True,
        ),
        ("The metrics are DED and SA, described in Table 2 [1].", False),
        ("The F1 of 91.4 is reported in Table 3 and is 4.1 points above the CRF [2].", False),
        ("They compare against LDA and TF-IDF [1].", False),
    ],
)
def test_an_answer_that_only_says_where_the_answer_is(text, expected):
    assert only_points_elsewhere(text) is expected


def test_an_answer_that_only_restates_its_question():
    question = "What are the evaluation metrics used in the paper?"
    assert restates_question("The evaluation metrics used in the paper are [1] and [2][3].", question)
    assert not restates_question("The evaluation metrics are precision, recall and F1 [2].", question)
    assert restates_question(
        "The matrix considers different tools and their applications when evaluating technologies. [2]",
        "What are the different tools and their applications that the matrix considers when evaluating technologies?",
    )
    assert only_points_elsewhere("The data quality of S2ORC is evaluated in §4 of the paper.")
    assert only_points_elsewhere("The generality of the results is stated in [1].")
    # the acl2007 follow-up: its answer is the paper's title
    title = "Sparse Information Extraction: Unsupervised Language Models to the Rescue, p. 1"
    dataset = "What is the dataset used for the experiments?"
    assert restates_question(
        "The dataset used for the experiments is sparse information extraction. [1]", dataset, title
    )
    assert not restates_question("The dataset is nine million Web pages. [1]", dataset, title)
    assert not restates_question(
        "The paper is called Sparse Information Extraction.", "What is the paper called?", title
    )


def test_an_answer_that_says_its_passages_do_not_answer_and_then_guesses():
    assert disclaims_answer(
        "The evaluation metrics used in the tutorial are not explicitly stated in the given passages. "
        "However, we can infer that they could involve accuracy and user satisfaction."
    )
    assert disclaims_answer("[1] The passages do not mention the GPU. It was probably a V100.")
    assert not disclaims_answer("The paper reports F1 of 91.4 on CoNLL [1]; variance is not stated.")
    assert not disclaims_answer("Variance is not reported in the paper; the F1 is 91.4 [2].")


def test_a_pointer_for_an_answer_is_no_answer():
    result = run(CragLLM(relevant_words=["baselines"], answer="The baselines are listed in Table 2 [1]."))
    assert result.answer != "The baselines are listed in Table 2 [1]."
    assert result.not_found or result.answer_quoted


def test_metered_llm_passes_on_log_probability_support():
    class WithLogprobs:
        supports_logprobs = True

        def complete(self, messages, **kw):
            return Completion("YES")

    assert supports_logprobs(Metered(WithLogprobs())) and not supports_logprobs(
        Metered(ScriptedLLM(lambda p: ""))
    )


def test_passages_in_the_grade_prompt_are_the_searched_ones():
    llm = SureGrader(0.97, relevant_words=["baselines"])
    run(llm)
    prompt = next(c["prompt"] for c in llm.history if c["stage"] == "crag-grade-batch")
    assert any("LDA and TF-IDF" in p for p in passages_of(prompt))


# -- confidence-routed CRAG (CragConfig(routing="confidence")) --------------------------------

from reader.crag.evidence import Candidate  # noqa: E402
from reader.crag.grade import Grade  # noqa: E402
from reader.crag.route import retrieval_confidence, route_by_confidence  # noqa: E402


def graded(key, score, p_yes=None, fused=1 / 61):
    c = Candidate(key=f"chunk:{key}", text="x", paper_id="p", chunk_id=key, fused_score=fused)
    c.grade = Grade(c.key, score, False, "why", p_yes=p_yes)
    return c


def test_retrieval_confidence_is_the_best_passage_blended_with_its_rank():
    one_answers = [
        graded(1, 0.2, fused=1 / 61),
        graded(2, 0.8, p_yes=0.95, fused=1 / 62),
        *[graded(k, 0.2, fused=1 / (60 + k)) for k in range(3, 9)],
    ]
    assert retrieval_confidence(one_answers) == pytest.approx(0.8 * 0.95 + 0.2 * 61 / 62, abs=1e-3)
    assert retrieval_confidence([graded(1, 0.8, p_yes=0.1)]) == pytest.approx(0.28)  # P(YES) over the verdict
    assert retrieval_confidence([graded(1, 0.8)]) == pytest.approx(0.84)  # no P(YES): the grade
    assert retrieval_confidence([]) == 0.0


@pytest.mark.parametrize(
    "value, route", [(0.7, "correct"), (0.69, "ambiguous"), (0.3, "ambiguous"), (0.29, "incorrect")]
)
def test_two_thresholds_route(value, route):
    assert route_by_confidence(value, theta_high=0.7, theta_low=0.3) == route


def confident(p_yes, **kw):
    return run(
        SureGrader(p_yes, relevant_words=["baselines"], **kw), CragConfig(routing="confidence", threshold=0.6)
    )


def test_high_confidence_answers_from_the_first_retrieval():
    result = confident(0.97)
    assert result.route == "correct" and result.confidence >= 0.7
    assert "correct" not in result.trace[3:] and not result.rewrites and not result.fallback_used
    assert not result.not_found


def test_medium_confidence_corrects_and_low_confidence_also_asks_the_fallback_sources():
    medium = confident(0.6)  # 0.8 * 0.6 + 0.2 = 0.68: medium; P(YES) 0.6 still passes the 0.6 grade threshold
    assert medium.route == "ambiguous" and medium.corrective_rounds == 1 and not medium.fallback_used
    lowest = run(
        SureGrader(0.05, relevant_words=["baselines"]), CragConfig(routing="confidence", theta_low=0.5)
    )  # best 0.8 * 0.05 + 0.2 = 0.24
    assert lowest.route == "incorrect" and lowest.corrective_rounds == 1 and lowest.fallback_used
    assert lowest.to_json()["route"] == "incorrect" and lowest.to_json()["confidence"] < 0.5


def test_confidence_routing_routes_on_one_by_one_grades_of_the_best_passages():
    # the batch is unsure (P(YES) 0.5: confidence 0.6, medium) but each best passage graded alone
    # is sure (0.97): the route is high, and only the best two are graded again
    llm = SureGrader(0.5, single_p_yes=0.97, relevant_words=["baselines"])
    result = run(llm, CragConfig(routing="confidence", threshold=0.6))
    assert result.route == "correct" and result.confidence >= 0.7
    stages = llm.stages()
    assert stages[:3] == ["crag-grade-batch", "crag-grade", "crag-grade"] and stages.count("crag-grade") == 2
    assert sorted(g["p_yes"] for g in result.to_json()["grades"] if g["p_yes"] is not None)[-2:] == [
        0.97,
        0.97,
    ]
    unsure = SureGrader(0.5, single_p_yes=0.97, relevant_words=["baselines"])
    off = run(unsure, CragConfig(routing="confidence", threshold=0.6, confirm_top=0))
    assert off.route == "ambiguous" and "crag-grade" not in unsure.stages()
    counts = SureGrader(0.5, single_p_yes=0.97, relevant_words=["baselines"])
    run(counts, CragConfig())  # the count rule never re-grades
    assert "crag-grade" not in counts.stages()


def test_a_low_route_consults_the_fallback_sources_even_with_evidence_kept():
    result = run(
        SureGrader(0.65, relevant_words=["baselines"]),
        CragConfig(routing="confidence", theta_high=0.95, theta_low=0.9),
    )  # 0.72: low
    assert result.route == "incorrect" and result.fallback_used and not result.not_found
    counts = run(SureGrader(0.65, relevant_words=["baselines"]))  # the default rule: two kept, correct
    assert counts.route == "correct" and not counts.fallback_used


def test_a_quote_takes_the_sentences_closest_to_the_question_in_text_order():
    from reader.crag.generate import closest_sentences

    text = (
        "We thank the reviewers. The corpus was built in 2019. "
        "The model was trained on a Titan V GPU for three days. Training used a GPU with 12 GB."
    )
    assert closest_sentences("Which GPU was the model trained on?", text, 2) == [
        "The model was trained on a Titan V GPU for three days.",
        "Training used a GPU with 12 GB.",
    ]
    assert closest_sentences("Unrelated words entirely?", text, 1) == ["We thank the reviewers."]


class OffersRefusalWriter(CragLLM):
    """A small writer that takes the "not found" reply whenever the prompt offers it."""

    def _respond(self, prompt):
        if role_of(prompt) == "answer" and "reply exactly:" in prompt:
            return NOT_FOUND
        return super()._respond(prompt)


def test_with_the_grader_refusing_a_correct_route_asks_the_writer_for_the_answer():
    writer_may = run(OffersRefusalWriter(relevant_words=["baselines"]), CragConfig(quote_threshold=None))
    assert writer_may.route == "correct" and writer_may.not_found
    grader = run(
        OffersRefusalWriter(relevant_words=["baselines"]), CragConfig(quote_threshold=None, refusal="grader")
    )
    assert grader.route == "correct" and not grader.not_found
    assert grader.answer == "They compare against LDA and TF-IDF [1]."
    # on a route that is not correct the prompt still offers the refusal
    none_relevant = run(
        OffersRefusalWriter(relevant_words=[]), CragConfig(quote_threshold=None, refusal="grader")
    )
    assert none_relevant.route != "correct" and none_relevant.not_found


def test_an_unsupported_answer_is_withheld_when_asked_and_kept_marked_otherwise():
    def unsupported(answer, evidence, verifier):
        return False, "1 of 1 sentences unsupported: 'by 10%' is not in the evidence"

    def timed_out(answer, evidence, verifier):
        raise TimeoutError("read timed out")

    def ask_with(check, **settings):
        return ask(
            QUESTION,
            paper_id=PAPER_A,
            generator=CragLLM(relevant_words=["baselines"]),
            verifier=ScriptedLLM(lambda p: "[1] YES"),
            search=FakeSearch(),
            check_grounded=check,
            titles=TITLES,
            config=CragConfig(**settings),
        )

    kept = ask_with(unsupported, ungrounded="keep")
    assert not kept.not_found and not kept.grounded and "10%" in kept.grounded_reason
    withheld = ask_with(unsupported, ungrounded="refuse")
    # the passages the draft was written from are kept (issue 47, item 11)
    assert withheld.not_found and withheld.answer == NOT_FOUND and withheld.sources
    assert any("withheld" in n and "They compare against LDA" in n and "10%" in n for n in withheld.notes)
    # a check that could not run says nothing about the answer: it is kept, marked unchecked
    failed = ask_with(timed_out, ungrounded="refuse")
    assert not failed.not_found and not failed.grounded and "check failed" in failed.grounded_reason


class SureRefusingWriter(SureGrader, OffersRefusalWriter):
    """Grades with log-probabilities, and its writer refuses whenever the prompt offers it."""


def answer_prompt(llm) -> str:
    return next(c["prompt"] for c in llm.history if c["stage"] == "crag-answer")


def test_with_the_p_yes_rule_the_writer_reads_every_likely_passage_whole_and_must_answer():
    # The verdict says YES to the passage naming TF-IDF and NO to the other one about baselines;
    # that NO line still carries P(YES) 0.35, above the evidence threshold 0.3, but a passage a
    # grader rejected never reaches the writer.
    llm = SureRefusingWriter(0.65, relevant_words=["tf-idf"])
    result = run(llm, CragConfig(refusal="p_yes", quote_threshold=None))
    assert "crag-refine-batch" not in llm.stages() and "crag-refine" not in llm.stages()
    assert not result.not_found and result.answer == "They compare against LDA and TF-IDF [1]."
    assert "reply exactly:" not in answer_prompt(llm)  # not offered "not found"
    rejected = [c for c in result.graded if c.grade.score < 0.6]
    assert rejected and rejected[0].grade.p_yes >= 0.3  # likely enough by P(YES), but a NO verdict
    assert {c.key for c in result.sources} == {c.key for c in result.graded} - {c.key for c in rejected}
    assert rejected[0].text not in answer_prompt(llm)
    assert result.sources[0].grade.p_yes == 0.65  # best first, whole
    assert "Training took three days." in result.sources[0].text
    # the writer rule refines, offers the refusal, and this writer takes it
    writer_rule = CragConfig(quote_threshold=None, refusal="writer")
    assert run(SureRefusingWriter(0.65, relevant_words=["tf-idf"]), writer_rule).not_found


def test_with_the_p_yes_rule_an_unlikely_best_passage_means_not_found_without_the_writer():
    llm = SureGrader(0.55, relevant_words=["baselines"])
    result = run(llm, CragConfig(refusal="p_yes", answer_p_yes=0.6))
    assert result.not_found and result.answer == NOT_FOUND and result.sources == []
    assert "crag-answer" not in llm.stages()
    assert any("best P(YES) 0.55 < 0.60" in note for note in result.notes)
    lower = run(SureGrader(0.55, relevant_words=["baselines"]), CragConfig(refusal="p_yes", answer_p_yes=0.5))
    assert not lower.not_found


def test_the_p_yes_rule_without_log_probabilities_is_the_writer_rule():
    llm = CragLLM(relevant_words=["baselines"])
    result = run(llm, CragConfig(refusal="p_yes"))
    assert not result.not_found and "crag-refine-batch" in llm.stages()
    assert "reply exactly:" in answer_prompt(llm)


def test_lines_that_copy_the_source_list_are_not_part_of_the_answer():
    from reader.crag.generate import without_source_lines

    labels = ["SPECTER: Document-level Representation Learning, p. 6", "The S2ORC dataset, p. 2"]
    copied = (
        "[1] SPECTER: Document-level Representation Learning, p. 6 — relevance 0.80: YES\n"
        "SPECTER reaches 86.4 F1 on MeSH [1]."
    )
    assert without_source_lines(copied, labels) == "SPECTER reaches 86.4 F1 on MeSH [1]."
    assert without_source_lines("[2] The S2ORC dataset, p. 2.", labels) == ""
    kept = "The S2ORC dataset has 81.1M papers [2].\nOf them 28.9M have a PDF [2]."
    assert without_source_lines(kept, labels) == kept


def test_an_answer_that_only_copies_a_source_line_is_not_found():
    llm = CragLLM(
        relevant_words=["baselines"], answer="[1] Citation Topic Models, p. 2 — relevance 0.80: YES"
    )
    result = run(llm)
    assert "crag-answer" in llm.stages()
    assert result.not_found and result.answer == NOT_FOUND


def test_an_answer_sentence_sharing_no_word_with_its_passages_is_not_grounded():
    from reader.crag.grounded import unfounded_sentences

    # SPECTER's follow-up, answered from "Figure 1: Overview of SPECTER." alone
    made_up = (
        "The main conclusion about SPECTER's performance across domains is that it is accurate. "
        "It achieves high accuracy in various medical imaging tasks, including brain imaging and lung imaging."
    )
    question = (
        "What is the main conclusion of the paper about SPECTER's performance across different domains?"
    )
    assert unfounded_sentences(made_up, question, ["Figure 1: Overview of SPECTER."]) == [
        "It achieves high accuracy in various medical imaging tasks, including brain imaging and lung imaging."
    ]
    # one word of the passages beyond the question's is enough; a short sentence is left alone
    assert (
        unfounded_sentences("They compare against LDA and TF-IDF [1].", QUESTION, ["We compare with LDA."])
        == []
    )
    assert unfounded_sentences("Yes, it does.", QUESTION, ["Nothing."]) == []

    # in the pipeline: the check said grounded, the answer is not, and it is withheld
    llm = CragLLM(relevant_words=["baselines"], answer="Quantum annealers fold proteins for hospitals.")
    result = run(llm, CragConfig(ungrounded="refuse"))
    assert result.not_found and "share no word with the passages" in " ".join(result.notes)
