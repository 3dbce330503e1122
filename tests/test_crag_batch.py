"""Batched grading and refining (issue 16): one call for the passages of a step instead of one each."""

import re

import pytest
from crag_fakes import PAPER_A, TITLES, CragLLM, FakeSearch, always_grounded

from reader.crag.evidence import Candidate
from reader.crag.grade import (
    AMBIGUOUS_SCORE,
    IRRELEVANT_SCORE,
    RELEVANT_SCORE,
    SKIPPED_REASON,
    batch_ranges,
    grade_in_batches,
    parse_grades,
)
from reader.crag.pipeline import CragConfig, ask
from reader.crag.refine import parse_batch_selection, refine_in_batches
from reader.llm.dryrun import dry_run_answer
from reader.llm.scripted import ScriptedLLM
from reader.prompts import render

NEW = CragConfig()

# Four two-sentence chunks about the baselines: every one passes the grader and needs refining.
BASELINE_CHUNKS = [
    (11, PAPER_A, 2, "We compare against two baselines. LDA was trained for a day."),
    (12, PAPER_A, 3, "The baselines include TF-IDF retrieval. Its index is small."),
    (13, PAPER_A, 4, "The baselines were tuned on the dev set. Tuning took an hour."),
    (14, PAPER_A, 5, "Our model beats both baselines. The margin is four points."),
]


def run(question, llm, config, search=None):
    return ask(
        question,
        paper_id=PAPER_A,
        generator=llm,
        verifier=ScriptedLLM(lambda p: "[1] YES"),
        search=search or FakeSearch(),
        check_grounded=always_grounded,
        titles=TITLES,
        config=config,
    )


def count(llm, stage):
    return sum(1 for call in llm.history if call["stage"] == stage)


# -- the pipeline -------------------------------------------------------------------------


def test_k_passages_cost_one_grade_and_one_refine_call():
    question = "Which baselines do they compare against?"
    search = FakeSearch(chunks=BASELINE_CHUNKS, top_k=4)
    new_llm = CragLLM(relevant_words=["baselines"])
    new = run(question, new_llm, NEW, search)
    k = len(BASELINE_CHUNKS)
    assert len(new.graded) == k and len(new.sources) == k
    assert (count(new_llm, "crag-grade-batch"), count(new_llm, "crag-refine-batch")) == (1, 1)
    assert count(new_llm, "crag-grade") == 0
    assert new.llm_calls == 3  # + the answer (the check is faked here)
    grade_prompt = next(c["prompt"] for c in new_llm.history if c["stage"] == "crag-grade-batch")
    assert re.findall(r'<passage n="(\d+)">', grade_prompt) == ["1", "2", "3", "4"]
    refine_prompt = next(c["prompt"] for c in new_llm.history if c["stage"] == "crag-refine-batch")
    assert "[1.1] We compare against two baselines." in refine_prompt and "[4.2] The margin" in refine_prompt
    assert [s.refined for s in new.sources] == [
        "We compare against two baselines.",
        "The baselines include TF-IDF retrieval.",
        "The baselines were tuned on the dev set.",
        "Our model beats both baselines.",
    ]


def test_a_passage_the_batched_reply_skips_routes_as_an_unreadable_grade():
    """One relevant passage and one skipped by the batched reply (ambiguous): the ambiguous route."""
    question = "Which baselines do they compare against?"
    search = FakeSearch(chunks=BASELINE_CHUNKS[:2], top_k=2)
    batched = CragLLM(relevant_words=["baselines"]).enqueue("[1] YES - names LDA", "q1\nq2\nq3")
    new = run(question, batched, NEW, search)
    assert new.route == "ambiguous"
    assert [g["score"] for g in new.to_json()["grades"]] == [RELEVANT_SCORE, AMBIGUOUS_SCORE]
    assert new.to_json()["grades"][1]["reasoning"] == SKIPPED_REASON
    assert new.trace == ["retrieve", "grade", "route", "correct", "refine", "generate", "check"]


# -- grading ------------------------------------------------------------------------------


@pytest.mark.parametrize(
    "reply, expected",
    [
        (
            "[1] YES - names the baselines\n[2] NO - about wheat\n[3] NO",
            [
                (RELEVANT_SCORE, False, "names the baselines"),
                (IRRELEVANT_SCORE, False, "about wheat"),
                (IRRELEVANT_SCORE, False, "NO"),
            ],
        ),
        (
            "**[1]** YES\nThe passage names them.\n[3] Score: 0.7",  # a reason on its own line; [2] skipped
            [(RELEVANT_SCORE, False, "The passage names them"), None, (0.7, False, "")],
        ),
        (
            "1. NO\n2. yes, relevant\n3) hmm",
            [
                (IRRELEVANT_SCORE, False, "NO"),
                (RELEVANT_SCORE, False, "relevant"),
                (AMBIGUOUS_SCORE, True, "hmm"),
            ],
        ),
        (
            "Passage 1: NO\nPassage 3: YES - lists them",
            [(IRRELEVANT_SCORE, False, "NO"), None, (RELEVANT_SCORE, False, "lists them")],
        ),
        (
            "[1] YES [2] NO [3] YES",
            [(RELEVANT_SCORE, False, "YES"), (IRRELEVANT_SCORE, False, "NO"), (RELEVANT_SCORE, False, "YES")],
        ),
        ("[2] maybe\n[2] YES - second try\n[7] YES", [None, (RELEVANT_SCORE, False, "second try"), None]),
        (
            "YES\nNO",
            [(RELEVANT_SCORE, False, "YES"), (IRRELEVANT_SCORE, False, "NO"), None],
        ),  # no numbers: in order
        ("I cannot judge these passages.", [None, None, None]),
    ],
)
def test_a_batched_reply_is_read_line_by_numbered_line(reply, expected):
    assert parse_grades(reply, 3) == expected


def test_one_passage_may_be_graded_without_a_number():
    assert parse_grades("YES\nIt lists the baselines.", 1) == [
        (RELEVANT_SCORE, False, "It lists the baselines")
    ]


def test_passages_missing_from_the_reply_are_ambiguous_below_the_threshold():
    llm = ScriptedLLM().enqueue("[1] YES - names LDA\n[3] NO - about wheat")
    passages = [(f"chunk:{i}", f"passage {i}", "p") for i in (1, 2, 3)]
    grades = grade_in_batches("Which baselines?", passages, llm)
    assert llm.calls == 1 and llm.history[0]["stage"] == "crag-grade-batch"
    assert [g.chunk_key for g in grades] == ["chunk:1", "chunk:2", "chunk:3"]
    assert [g.score for g in grades] == [RELEVANT_SCORE, AMBIGUOUS_SCORE, IRRELEVANT_SCORE]
    assert grades[1].ambiguous and grades[1].reasoning == SKIPPED_REASON and grades[1].score < NEW.threshold
    assert grades[0].reasoning == "names LDA" and not grades[0].error


def test_a_failed_batch_call_leaves_its_passages_ambiguous_with_the_error():
    llm = ScriptedLLM().enqueue(ConnectionError("refused"))
    grades = grade_in_batches("q?", [("chunk:1", "a", "p"), ("chunk:2", "b", "p")], llm)
    assert all(g.ambiguous and g.score == AMBIGUOUS_SCORE and "refused" in g.error for g in grades)


def test_many_passages_are_graded_in_chunks_of_at_most_n_numbered_from_one():
    def respond(prompt):
        texts = re.findall(r'<passage n="\d+">\n(.*?)\n</passage>', prompt, re.S)
        return "\n".join(f"[{n}] {'YES' if 'odd' in t else 'NO'} - {t}" for n, t in enumerate(texts, 1))

    llm = ScriptedLLM(respond)
    passages = [(f"chunk:{i}", f"passage {i} {'odd' if i % 2 else 'even'}", "p") for i in range(10)]
    grades = grade_in_batches("q?", passages, llm, max_passages=4)
    sizes = [len(re.findall(r'<passage n="', call["prompt"])) for call in llm.history]
    assert sorted(sizes) == [2, 4, 4]
    assert all(re.findall(r'<passage n="(\d+)"', call["prompt"])[0] == "1" for call in llm.history)
    assert [g.chunk_key for g in grades] == [key for key, _, _ in passages]
    assert [g.score for g in grades] == [RELEVANT_SCORE if i % 2 else IRRELEVANT_SCORE for i in range(10)]
    assert [g.reasoning for g in grades] == [text for _, text, _ in passages]


def test_the_token_budget_also_splits_a_batch():
    assert batch_ranges([1000, 1000, 1000, 1000], max_items=8, budget=3000) == [range(0, 3), range(3, 4)]
    assert batch_ranges([5000, 10, 10], max_items=8, budget=3000) == [range(0, 1), range(1, 3)]  # alone
    assert batch_ranges([1] * 9, max_items=8, budget=3000) == [range(0, 8), range(8, 9)]
    assert batch_ranges([], max_items=8, budget=3000) == []
    llm = ScriptedLLM(lambda prompt: "[1] NO")
    grade_in_batches("q?", [(f"chunk:{i}", "word " * 2000, "p") for i in range(3)], llm)  # ~2,500 tokens each
    assert llm.calls == 3


# -- refining -----------------------------------------------------------------------------


def candidates(*texts):
    return [Candidate(f"chunk:{i}", text, "p", i) for i, text in enumerate(texts, 1)]


@pytest.mark.parametrize(
    "reply, sizes, expected",
    [
        ("1.2, 1.3, 2.1", [3, 2], {1: [2, 3], 2: [1]}),
        ("1.2-1.3, 2.1-2", [3, 2], {1: [2, 3], 2: [1, 2]}),
        ("[1.2] We compare against LDA.", [3, 2], {1: [2]}),  # the sentence echoed with its number
        ("[1] 2, 3\n[2] none", [3, 2], {1: [2, 3]}),
        ("Passage 2: 1", [3, 2], {2: [1]}),
        ("1.9, 3.1", [3, 2], None),  # out of range only
        ("none", [3, 2], {}),
        ("no idea", [3, 2], None),
        ("2, 3", [3, 2], None),  # plain numbers are ambiguous across passages ...
        ("2, 3", [3], {1: [2, 3]}),  # ... but not for one passage
        ("It reaches 85.3% accuracy; 1.2", [3, 2], {1: [2]}),
    ],
)
def test_parse_batch_selection(reply, sizes, expected):
    assert parse_batch_selection(reply, sizes) == expected


def test_one_refine_call_for_all_kept_passages_copying_sentences_verbatim():
    llm = ScriptedLLM().enqueue("1.1, 2.2")
    kept = refine_in_batches(
        "Which baselines?",
        candidates(
            "LDA is a baseline. Training took a day.",
            "Our model is new. TF-IDF is a baseline.",
            "One sentence only.",
        ),
        llm,
    )
    assert llm.calls == 1 and llm.history[0]["stage"] == "crag-refine-batch"
    assert "One sentence only" not in llm.history[0]["prompt"]  # kept whole without asking
    assert [c.refined for c in kept] == ["LDA is a baseline.", "TF-IDF is a baseline.", "One sentence only."]
    assert kept[2].refine_note == "single sentence, kept whole"


def test_single_sentence_passages_need_no_refine_call():
    llm = ScriptedLLM()
    kept = refine_in_batches("q?", candidates("Only one.", "Just this."), llm)
    assert llm.calls == 0 and [c.refined for c in kept] == ["Only one.", "Just this."]


@pytest.mark.parametrize("reply, note", [("no idea", "unreadable"), (RuntimeError("down"), "failed")])
def test_an_unreadable_reply_or_a_failed_call_keeps_every_passage_whole(reply, note):
    texts = ("LDA is a baseline. Training took a day.", "Our model is new. TF-IDF is a baseline.")
    kept = refine_in_batches("Which baselines?", candidates(*texts), ScriptedLLM().enqueue(reply))
    assert [c.refined for c in kept] == list(texts)
    assert all(note in c.refine_note for c in kept)


def test_a_passage_the_reply_picks_nothing_from_is_a_none_for_it():
    texts = (
        "LDA is a baseline. Training took a day.",
        "Section 5 has the setup. Compute was cheap.",
        "The weather was fine. SIF and Citeomatic are the baselines here.",
    )
    kept = refine_in_batches("Which baselines are used?", candidates(*texts), ScriptedLLM().enqueue("1.1"))
    # passage 2 shares no question term: dropped; passage 3 falls back to the sentence sharing one
    assert [c.chunk_id for c in kept] == [1, 3]
    assert kept[1].refined == "SIF and Citeomatic are the baselines here."
    assert kept[1].refine_note.startswith("refiner said none")


def test_refining_many_passages_is_chunked_too():
    llm = ScriptedLLM(lambda prompt: "none")
    refine_in_batches(
        "q?", candidates(*[f"Sentence {i}a. Sentence {i}b." for i in range(5)]), llm, max_passages=2
    )
    assert sorted(len(re.findall(r'<passage n="', call["prompt"])) for call in llm.history) == [1, 2, 2]


# -- the dry-run LLM ----------------------------------------------------------------------


def test_the_dry_run_answers_the_batched_prompts_as_it_answers_one_passage():
    question = "Which baselines does SPECTER compare against?"
    passages = ["SPECTER is compared against SciBERT and SIF baselines.", "Wheat was grown in a greenhouse."]
    one = [dry_run_answer(render("grade", question=question, passage=p), "crag-grade") for p in passages]
    batched = dry_run_answer(
        render("grade_batch", question=question, passages=passages, n=2), "crag-grade-batch"
    )
    assert [g[:2] for g in parse_grades(batched, 2)] == [(RELEVANT_SCORE, False), (IRRELEVANT_SCORE, False)]
    assert [line.split(" - ")[1] for line in batched.splitlines()] == [o.split("\n")[1] for o in one]
    sentences = [
        ["Wheat was grown.", "SPECTER is compared against SciBERT."],
        ["SIF is one of the baselines of SPECTER."],
    ]
    chosen = dry_run_answer(
        render("refine_batch", question=question, passages=sentences), "crag-refine-batch"
    )
    assert chosen == "1.2, 2.1"
