"""Deep read with the scripted LLM: context budget, generation, audit loop, storage."""

import re

import pytest
from controls import record_controls
from sqlalchemy import func, select

from reader.audit.decided import STATED
from reader.audit.loop import MARK, AuditResult, Iteration, LoopResult, SentenceResult
from reader.audit.record import analysis_json, load_analyses
from reader.config import EMBEDDED_MODEL_NAME, LLMSettings
from reader.deepread.context import build_context, load_material
from reader.deepread.read import DeepReadResult, KindResult, deep_read
from reader.index.hits import SearchHit
from reader.llm.base import ENDPOINT, SMALL_LOCAL, capabilities_of
from reader.llm.dryrun import claims_with_evidence
from reader.llm.scripted import ScriptedLLM
from reader.store.db import transaction
from reader.store.tables import (
    Analysis,
    AnalysisIteration,
    Caption,
    Chunk,
    Paper,
    Reference,
    SentenceVerdict,
    VerdictEvidence,
)

PAPER_ID = "a" * 64
SECTIONS = [
    ("1 Introduction", "Pruning attention heads makes BERT-large smaller. " * 30),
    ("2 Related Work", "Earlier work pruned weights rather than heads. " * 30),
    ("3 Method", "We score each head by its gradient and remove the lowest. " * 30),
    (
        "4 Experiments",
        "On MNLI accuracy drops from 84.27 to 83.97 after pruning 40% of heads. " * 30
        + "Scores are the mean of three seeds (± 0.1). "
        + "We compare with the magnitude baseline of Michel et al. [1]. "
        + "Removing the gradient score results in lower accuracy.",
    ),
    ("5 Conclusion and limitations", "Head pruning is cheap and keeps accuracy. " * 20),
    ("References", "[1] Michel, P. 2019. Are sixteen heads really better than one?"),
]


def add_paper(db, paper_id=PAPER_ID, sections=SECTIONS):
    with transaction(db) as s:
        paper = Paper(
            id=paper_id,
            title="Pruning Heads in BERT",
            source_path="/tmp/p.pdf",
            source_kind="pdf",
            language="en",
            pages=8,
            abstract="We prune 40% of attention heads in BERT-large with a 0.3 point loss.",
        )
        ordinal = 0
        for page, (title, text) in enumerate(sections, 1):
            for piece in re.findall(r".{1,600}(?:\s|$)", text, re.S):
                paper.chunks.append(
                    Chunk(
                        ordinal=ordinal,
                        section=title,
                        page_start=page,
                        page_end=page,
                        text=piece.strip(),
                        n_tokens=150,
                    )
                )
                ordinal += 1
        paper.captions.append(
            Caption(
                ordinal=0,
                kind="table",
                label="Table 1",
                page=4,
                text="Table 1: MNLI accuracy before and after pruning.",
            )
        )
        paper.references.append(
            Reference(
                ordinal=0,
                marker="[1]",
                page=8,
                text="Michel, P. 2019. Are sixteen heads really better than one?",
            )
        )
        s.add(paper)


def test_whole_paper_fits(db):
    add_paper(db)
    with transaction(db) as s:
        material = load_material(s, PAPER_ID)
    assert [sec.title for sec in material.sections][:2] == ["Abstract", "1 Introduction"]
    assert "References" not in [sec.title for sec in material.sections]
    ctx = build_context(material, 100_000)
    assert ctx.left_out == []
    assert "## 4 Experiments" in ctx.text and "## Figure and table captions" in ctx.text


def test_budget_chooses_sections_and_names_what_is_left_out(db):
    add_paper(db)
    with transaction(db) as s:
        material = load_material(s, PAPER_ID)
    ctx = build_context(material, 600)
    assert ctx.tokens <= 620
    assert ctx.included[0] == "Abstract"
    for wanted in ("1 Introduction", "5 Conclusion and limitations", "4 Experiments"):
        assert wanted in ctx.included
    # every section is heard from, the lowest priority least: its best sentence or so
    assert "2 Related Work (partly)" in ctx.left_out and "2 Related Work" in ctx.included
    related = ctx.text.split("## 2 Related Work\n", 1)[1].split("\n## ", 1)[0]
    method = ctx.text.split("## 3 Method\n", 1)[1].split("\n## ", 1)[0]
    assert len(related) < len(method)
    assert any(x.endswith("(partly)") for x in ctx.left_out)
    # sections stay in paper order
    positions = [ctx.text.index(f"## {t}") for t in ctx.included]
    assert positions == sorted(positions)


# The audit's control claims (reader.audit.control): the scripted verifier answers them NO.
CONTROLS: set[str] = set()


@pytest.fixture(autouse=True)
def controls(monkeypatch):
    CONTROLS.clear()
    record_controls(monkeypatch, CONTROLS)


CRITIQUE_1 = (
    "## Strengths\nPruning 40% of heads keeps MNLI accuracy near 84.27.\n"
    "## Weaknesses\nIt trails NEXUS, which loses only 1.2%. "
    "It also ignores speed. Heads were scored by gradient."
)
CRITIQUE_2 = (
    "## Strengths\nPruning 40% of heads keeps MNLI accuracy near 84.27.\n"
    "## Weaknesses\nThe paper does not report speed. Heads were scored by gradient."
)
SYNTHESIS = (
    "## Problem\nBERT-large is large. ## Key results\nAccuracy drops from 84.27 to 83.97 on MNLI. "
    "The method prunes 40% of heads."
)


def as_written(document):
    """A scripted document as reader.deepread.writer joins its headings: a blank line between them."""
    return document.replace("\n## ", "\n\n## ")


def asked_heading(prompt):
    return re.search(r'the heading "(.+?)" of the (critique|synthesis)', prompt).group(1, 2)


def make_llms(critiques=(CRITIQUE_1, CRITIQUE_2)):
    """The writer answers each heading's call with a whole document (critiques[k] for the k-th
    rewrite of that heading); reader.deepread.writer takes the text under the heading asked for."""
    rewrites = {}

    def write(prompt):
        heading, kind = asked_heading(prompt)
        if kind == "synthesis":
            return SYNTHESIS
        if "Rewrite the text under" in prompt:
            rewrites[heading] = rewrites.get(heading, 0) + 1
        return critiques[min(rewrites.get(heading, 0), len(critiques) - 1)]

    generator = ScriptedLLM(write, model="gen")

    def check(prompt):
        return "\n".join(
            f"[{n}] {'NO' if 'ignores' in c or c in CONTROLS else 'YES'}"
            for n, c, _ in claims_with_evidence(prompt)
        )

    verifier = ScriptedLLM(check, model="ver")
    return generator, verifier


def fake_search(db):
    def search(query, paper_id):
        with transaction(db) as s:
            chunks = s.scalars(select(Chunk).where(Chunk.paper_id == paper_id).limit(4)).all()
            return [
                SearchHit(c.id, paper_id, c.text, c.section, c.page_start, c.page_end, 1.0 / (i + 1))
                for i, c in enumerate(chunks)
            ]

    return search


@pytest.mark.parametrize(
    "name, capabilities, words, left_out",
    [
        ("a-tiny-model", SMALL_LOCAL, SMALL_LOCAL.target_words, True),
        (EMBEDDED_MODEL_NAME, ENDPOINT, ENDPOINT.target_words, False),  # the name decides nothing
    ],
)
def test_sizes_follow_the_generators_capabilities(db, name, capabilities, words, left_out):
    long_sections = [
        (title, " ".join(f"In trial {i} of {title} the score was {i}.{n}." for i in range(150)))
        for n, (title, _) in enumerate(SECTIONS[:5])
    ]
    add_paper(db, sections=long_sections)  # more than SMALL_LOCAL's context, less than ENDPOINT's
    _, verifier = make_llms()
    generator = ScriptedLLM(lambda prompt: SYNTHESIS, model=name, capabilities=capabilities)
    events = []
    deep_read(
        PAPER_ID,
        db=db,
        generator=generator,
        verifier=verifier,
        search=fake_search(db),
        on_progress=events.append,
        kinds=("synthesis",),
    )
    # one call per heading, each asked for its share of the words
    assert [h["stage"] for h in generator.history[:6]] == ["synthesis"] * 6
    first = generator.history[0]
    assert f"About {words // 6} words" in first["prompt"]
    assert first["max_tokens"] == int(words // 6 * 2.2) + 60
    [context] = [e for e in events if e.startswith("context: ")]
    assert ("left out" in context) is left_out, context


def test_each_llm_says_what_it_can_do():
    from reader.llm.local import LocalLLM
    from reader.llm.openai_compat import OpenAICompatLLM

    assert capabilities_of(LocalLLM(model_path="model.gguf")) == SMALL_LOCAL  # not loaded
    assert capabilities_of(OpenAICompatLLM(LLMSettings("http://127.0.0.1:9/v1", None, None))) == ENDPOINT
    assert capabilities_of(ScriptedLLM()) == ENDPOINT
    assert capabilities_of(ScriptedLLM(capabilities=SMALL_LOCAL)) == SMALL_LOCAL

    class OwnLLM:  # an LLM of the user's own need not say
        model = EMBEDDED_MODEL_NAME

    assert capabilities_of(OwnLLM()) == ENDPOINT


def test_deep_read_end_to_end(db):
    add_paper(db)
    generator, verifier = make_llms()
    events = []
    result = deep_read(
        PAPER_ID,
        db=db,
        generator=generator,
        verifier=verifier,
        search=fake_search(db),
        on_progress=events.append,
        context_tokens=600,
    )
    by_kind = {k.kind: k for k in result.analyses}
    critique = by_kind["critique"]
    # iteration 0: NEXUS sentence (guards) + "ignores speed" (verifier NO) of 4 -> 0.5 > 0.3
    assert [it.audit.n_flagged for it in critique.loop.iterations] == [2, 0]
    assert critique.loop.regenerations == 1
    regen_prompt = [h for h in generator.history if h["stage"] == "regenerate-critique"][0]["prompt"]
    assert "It trails NEXUS, which loses only 1.2%." in regen_prompt
    assert "It also ignores speed." in regen_prompt
    # unchanged sentences were not verified again: only "The paper does not report speed."
    second = critique.loop.iterations[1].audit
    assert second.llm_calls == 1 and sum(not s.reused for s in second.sentences) == 1
    assert by_kind["synthesis"].loop.regenerations == 0
    assert {h["stage"] for h in generator.history} == {"critique", "synthesis", "regenerate-critique"}
    assert any("left out" in e for e in events) and any("iteration 0" in e for e in events)

    data = result.to_json()
    assert set(data) >= {"paper_id", "analyses", "llm_calls", "tokens"}
    assert data["llm_calls"] == generator.calls + verifier.calls
    assert data["tokens"] > 0
    sentence = data["analyses"][0]["sentences"][0]
    assert set(sentence) == {"text", "verdict", "p_yes", "p_checker", "reasons", "evidence", "decided"}
    assert set(sentence["decided"]) == {"kind", "by", "score", "page", "item", "label"}
    assert set(sentence["evidence"][0]) == {"chunk_id", "pages", "text"}

    with transaction(db) as s:
        stored = {a.kind: a for a in load_analyses(s, PAPER_ID)}
        c = stored["critique"]
        assert c.regenerations == 1 and c.generator_model == "gen" and c.verifier_model == "ver"
        # the writer's text, then what the rigour checklist found, stated by the tool under its headings
        written = [it.text.split("\n\n## Quality of the evidence")[0] for it in c.iterations]
        assert written == [as_written(CRITIQUE_1), as_written(CRITIQUE_2)]
        assert "given as “Scores are the mean of three seeds (± 0.1)”." in c.iterations[0].text
        assert "The comparison is stated as “We compare with the magnitude baseline" in c.iterations[0].text
        assert "2 Related Work (partly)" in c.left_out_sections
        first = c.iterations[0]
        nexus = [v for v in first.verdicts if "NEXUS" in v.text][0]
        # a guard decided it: the verifier was not asked (nor was its P(YES) needed)
        assert nexus.verdict == "unsupported" and nexus.llm_answer == "" and nexus.decided_by == "guard"
        assert "name 'NEXUS' not found in the paper" in nexus.reasons
        assert nexus.evidence and nexus.evidence[0].chunk_id is not None
        assert [v.reused for v in c.iterations[1].verdicts] == [True, False, True, True, True]
        assert analysis_json(c)["sentences"][1]["verdict"] == "supported"
        assert MARK not in c.final_text


def test_marks_after_cap_and_rereading_replaces(db):
    add_paper(db)
    bad = "## Weaknesses\nIt ignores speed. It ignores memory. Heads were scored by gradient."
    generator, verifier = make_llms(critiques=(bad, bad, bad, bad, bad, bad))
    deep_read(PAPER_ID, db=db, generator=generator, verifier=verifier, search=fake_search(db))
    deep_read(PAPER_ID, db=db, generator=generator, verifier=verifier, search=fake_search(db))
    with transaction(db) as s:
        analyses = load_analyses(s, PAPER_ID)
        assert sorted(a.kind for a in analyses) == ["critique", "synthesis"]  # replaced, not duplicated
        critique = [a for a in analyses if a.kind == "critique"][0]
        assert critique.regenerations == 2
        assert critique.final_text.startswith(  # then what the checklist found, under its headings
            f"## Weaknesses\n{MARK}It ignores speed. {MARK}It ignores memory. Heads were scored by gradient.\n\n"
        )


def test_interrupted_read_stores_nothing(db):
    add_paper(db)
    generator, verifier = make_llms()
    verifier.enqueue(RuntimeError("killed"))
    with pytest.raises(RuntimeError):
        deep_read(PAPER_ID, db=db, generator=generator, verifier=verifier, search=fake_search(db))
    with transaction(db) as s:
        for table in (Analysis, AnalysisIteration, SentenceVerdict, VerdictEvidence):
            assert s.scalar(select(func.count()).select_from(table)) == 0


def test_unknown_paper_is_a_clear_error(db):
    from reader.errors import PaperNotFound

    generator, verifier = make_llms()
    with pytest.raises(PaperNotFound, match="no paper with id"):
        deep_read("f" * 64, db=db, generator=generator, verifier=verifier, search=None)


def test_section_priorities_follow_parents_and_skip_appendices():
    from reader.deepread.context import section_priorities

    titles = [
        "1 Introduction",
        "2 Our Method",
        "2.1 System Overview",
        "3 Experiments",
        "3.1 Setup",
        "4 Related Work",
        "5 Conclusion",
        "A Proofs",
        "B.1 More results",
    ]
    assert section_priorities(titles) == [1, 4, 4, 3, 3, 6, 2, 7, 7]


def test_caption_chunks_are_not_repeated_as_sections(db):
    sections = SECTIONS[:2] + [("Figure 1 caption", "Figure 1: the pruning pipeline.")] + SECTIONS[2:]
    add_paper(db, sections=sections)
    with transaction(db) as s:
        material = load_material(s, PAPER_ID)
    titles = [sec.title for sec in material.sections]
    assert "Figure 1 caption" not in titles and titles[-1] == "Figure and table captions"


def test_rewrite_prompt_shows_the_draft_without_unsupported_sentences(db):
    from reader.deepread.writer import remove_sentences

    assert (
        remove_sentences("## W\nBad one. Good one. Bad two.\nThird.", ["Bad one.", "Bad two."])
        == "## W\nGood one.\nThird."
    )
    add_paper(db)
    generator, verifier = make_llms()
    deep_read(PAPER_ID, db=db, generator=generator, verifier=verifier, search=fake_search(db))
    rewrites = [h["prompt"] for h in generator.history if h["stage"] == "regenerate-critique"]
    # only the heading that held the unsupported sentences is written again
    assert [asked_heading(p)[0] for p in rewrites] == ["Weaknesses"]
    draft = rewrites[0].split("without the sentences that had no support in the paper:")[1]
    draft = draft.split("</draft>")[0]
    assert "It also ignores speed." not in draft and "Heads were scored by gradient." in draft
    assert "- It also ignores speed." in rewrites[0]  # still listed as unsupported


def read_sample(db, generator, verifier, events):
    return deep_read(
        PAPER_ID,
        db=db,
        generator=generator,
        verifier=verifier,
        search=fake_search(db),
        on_progress=events.append,
        context_tokens=600,
    )


def test_a_draft_is_tidied_before_its_audit_and_storing(db):
    """A draft that repeats a sentence under another heading and leaves empty bullets is
    audited and stored without them; the progress says what was removed."""
    add_paper(db)
    repetitive = (
        "## Strengths\n- Pruning 40% of heads keeps MNLI accuracy near 84.27.\n"
        "## Weaknesses\n- Pruning 40% of heads keeps MNLI accuracy near 84.27.\n-\n"
        "## Threats to validity\n\\-\n- Heads were scored by gradient."
    )
    generator, verifier = make_llms(critiques=(repetitive,))
    events = []
    result = read_sample(db, generator, verifier, events)
    critique = {k.kind: k for k in result.analyses}["critique"]
    audited = [s.text for s in critique.loop.iterations[0].audit.sentences if s.decided_by != "tool"]
    assert audited == [
        "Pruning 40% of heads keeps MNLI accuracy near 84.27.",
        "Heads were scored by gradient.",
    ]
    # the writer's reply to each heading was this whole draft: the three headings it lacks come back empty
    assert any(e.startswith("critique: removed 1 repeated sentence, 3 empty bullets, ") for e in events)
    with transaction(db) as s:
        stored = {a.kind: a for a in load_analyses(s, PAPER_ID)}["critique"]
        assert "Weaknesses" not in stored.final_text and "\\-" not in stored.final_text
        assert stored.final_text.count("84.27") == 1


def test_a_heading_whose_rewrite_comes_back_empty_keeps_its_supported_sentences(db):
    add_paper(db)
    generator, verifier = make_llms(critiques=(CRITIQUE_1, "## Strengths\n-\n## Weaknesses\n"))
    events = []
    read_sample(db, generator, verifier, events)
    with transaction(db) as s:
        stored = {a.kind: a for a in load_analyses(s, PAPER_ID)}["critique"]
        assert stored.regenerations == 1
        assert stored.iterations[0].text.startswith(as_written(CRITIQUE_1) + "\n\n## Quality of the evidence")
        assert stored.final_text.startswith(  # then what the checklist found, stated by the tool
            "## Strengths\nPruning 40% of heads keeps MNLI accuracy near 84.27.\n\n"
            "## Weaknesses\nHeads were scored by gradient.\n\n## Quality of the evidence\n"
        )


def test_what_the_paper_lacks_is_stated_by_the_tool_and_passed_on_the_checks_finding(db):
    """No variance and no limitations section: the critique says so in the tool's own
    sentences, which the verifier is never asked about and which are stored as supported with
    the rule's finding."""
    bare = [
        (title, text.replace("Scores are the mean of three seeds (± 0.1).", "")) for title, text in SECTIONS
    ]
    bare = [("5 Conclusion" if title.startswith("5 ") else title, text) for title, text in bare]
    add_paper(db, sections=bare)
    generator, verifier = make_llms(critiques=(CRITIQUE_1, CRITIQUE_1))
    result = read_sample(db, generator, verifier, [])
    critique = {k.kind: k for k in result.analyses}["critique"]
    sentences = {s.text: s for s in critique.loop.iterations[-1].audit.sentences}
    stated = [s for text, s in sentences.items() if any(r.startswith(STATED) for r in s.reasons)]
    assert {s.text[:30] for s in stated} == {
        "The abstract's figures (40% an",
        "No section or sentence of the ",
        "The comparison is stated as “W",  # what the checklist found, quoted
    }
    assert {s.checklist_item for s in stated} == {"variance", "limitations", "baselines"}
    assert all(s.decided_by == "tool" for s in stated)
    absent = next(s for s in stated if s.checklist_item == "variance")
    assert absent.evidence == [], "an absence has no passage: its reason says what was searched"
    quoted = next(s for s in stated if s.checklist_item == "baselines")
    assert quoted.evidence[0].text.startswith("We compare with the magnitude baseline")
    assert quoted.evidence[0].page_start == 4 and quoted.evidence[0].chunk_id is not None
    assert all(s.verdict == "supported" for s in stated)
    asked = " ".join(h["prompt"] for h in verifier.history)
    assert "abstract's figures" not in asked and "No section of the paper" not in asked
    with transaction(db) as s:
        final = {a.kind: a for a in load_analyses(s, PAPER_ID)}["critique"].final_text
    assert "## Weaknesses\nThe abstract's figures (40% and 0.3) are given without" in final


def critique_verdicts(db, *sentences: str) -> tuple[dict, str]:
    """The sample paper read with a critique of these sentences under Weaknesses: each sentence's
    first verdict, and every prompt the verifier was sent."""
    add_paper(db)
    generator, verifier = make_llms(critiques=("## Weaknesses\n" + " ".join(sentences),))
    result = read_sample(db, generator, verifier, [])
    critique = {k.kind: k for k in result.analyses}["critique"]
    verdicts = {s.text: s for s in critique.loop.iterations[0].audit.sentences}
    return verdicts, " ".join(h["prompt"] for h in verifier.history)


def test_the_tool_findings_are_the_final_sentences_the_tool_stated_in_either_document():
    def kind(name, *drafts):
        iterations = [
            Iteration(
                "", AuditResult([SentenceResult(text, "supported", "", decided_by=by) for text, by in draft])
            )
            for draft in drafts
        ]
        return KindResult(name, LoopResult(iterations, ""), [])

    result = DeepReadResult(
        PAPER_ID,
        [
            kind(
                "critique",
                [("Dropped on rewrite.", "tool")],
                [("No ablation.", "tool"), ("Heads.", "verifier")],
            ),
            kind("synthesis", [("No variance.", "tool"), ("Pruning.", "guard")]),
        ],
    )
    assert result.tool_findings() == {"No ablation.", "No variance."}


def test_a_critique_claiming_what_the_paper_has_is_missing_is_flagged_without_asking_the_verifier(db):
    # the paper's conclusion is titled "… and limitations", its experiments give "± 0.1"
    claim = "The paper does not discuss any limitations of head pruning."
    verdicts, asked = critique_verdicts(db, claim)
    verdict = verdicts[claim]
    assert verdict.verdict == "unsupported" and verdict.decided_by == "guard" and verdict.llm_answer == ""
    assert claim not in asked
    assert any(r.startswith("the paper does discuss limitations") for r in verdict.reasons)


def test_a_citation_for_what_neither_the_entry_nor_its_citing_sentences_say_is_flagged(db):
    # [1] is Michel et al.'s magnitude baseline
    claim = "The method for extracting text from PDF files follows [1]."
    faithful = "The magnitude baseline comes from Michel et al. [1]."
    verdicts, asked = critique_verdicts(db, claim, faithful)
    assert verdicts[claim].verdict == "unsupported" and verdicts[claim].decided_by == "guard"
    assert claim not in asked
    assert any(r.startswith("citation [1]: the claim shares no word") for r in verdicts[claim].reasons)
    assert not any(r.startswith("citation [1]") for r in verdicts[faithful].reasons)


def test_a_critique_saying_the_paper_lacks_what_one_of_its_sentences_states_is_flagged(db):
    # the method scores each head by its gradient
    claim = "The authors do not explain how each head is scored by its gradient."
    vague = "The paper does not report speed."  # one content word: too vague to look for
    verdicts, asked = critique_verdicts(db, claim, vague)
    assert verdicts[claim].verdict == "unsupported" and verdicts[claim].decided_by == "guard"
    assert claim not in asked
    reason = next(r for r in verdicts[claim].reasons if r.startswith("the paper does say it"))
    assert "We score each head by its gradient and remove the lowest" in reason
    assert not any(r.startswith("the paper does say it") for r in verdicts[vague].reasons)


def test_a_follow_on_of_a_flagged_claim_is_flagged_with_it(db):
    claim = "The authors do not explain how each head is scored by its gradient."
    follow_on = "This makes the pruning hard to reproduce."
    verdicts, _ = critique_verdicts(db, claim, follow_on)
    assert verdicts[claim].verdict == "unsupported"
    assert verdicts[follow_on].verdict == "unsupported" and verdicts[follow_on].decided_by == "guard"
    assert any(
        r.startswith("draws a consequence from the sentence before it") for r in verdicts[follow_on].reasons
    )
