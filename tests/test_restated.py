"""A deep-read sentence that restates one of the paper's in its words is supported without a
verifier call; one fact changed and the verifier decides (reader.audit.restated)."""

from __future__ import annotations

import pytest
from controls import real_claims, record_controls, yes_but_controls

from reader.audit.guards import PaperFacts
from reader.audit.loop import RESTATES, audit_sentences
from reader.audit.restated import restated_source, restates
from reader.audit.verify import EvidenceRef
from reader.llm.dryrun import claims_with_evidence
from reader.llm.scripted import ScriptedLLM

SOURCE = (
    "We show that TableFormer reaches 93.6 TEDS on PubTabNet, which is not the case for "
    "EDD with its single decoder."
)


@pytest.mark.parametrize(
    "claim",
    [
        SOURCE,
        "The authors show that TableFormer reaches 93.6 TEDS on PubTabNet, which is not the case "
        "for EDD with its single decoder.",
        "The authors report that TableFormer reaches 93.6 TEDS on PubTabNet, which is not the case "
        "for EDD with its decoder.",
    ],
)
def test_a_copy_in_the_third_person_or_a_reporting_frame_restates(claim):
    assert restates(claim, SOURCE)


@pytest.mark.parametrize(
    "claim, broken",
    [
        (
            "The authors show that TableFormer reaches 96.3 TEDS on PubTabNet, which is not the case "
            "for EDD with its single decoder.",
            "a changed number",
        ),
        (
            "The authors show that EDD reaches 93.6 TEDS on PubTabNet, which is not the case "
            "for TableFormer with its single decoder.",
            "names swapped",
        ),
        (
            "The authors show that TableFormer reaches 93.6 TEDS on PubTabNet, which is the case "
            "for EDD with its single decoder.",
            "the negation dropped",
        ),
        (
            "The authors show that TableFormer clearly reaches 93.6 TEDS on PubTabNet, which is not "
            "the case for EDD with its single decoder.",
            "a word of the writer's own",
        ),
        ("TableFormer reaches 93.6 TEDS.", "most of the sentence left out"),
    ],
)
def test_one_fact_changed_is_not_a_restatement(claim, broken):
    assert not restates(claim, SOURCE), broken


def test_half_a_sentence_is_not_a_restatement_of_it():
    source = "The model is trained for three days on four machines with a learning rate schedule."
    assert restates("The model is trained for three days on four machines with a rate schedule.", source)
    assert not restates("The model is trained for three days.", source)


def test_a_name_is_kept_whole_and_a_capitalised_article_is_a_name():
    source = "Unlike BERT-Large, SciBERT is pretrained on scientific text from 1.14M papers."
    assert restates("Unlike BERT-Large, SciBERT is pretrained on scientific text from 1.14M papers.", source)
    assert not restates("Unlike BERT, SciBERT is pretrained on scientific text from 1.14M papers.", source)
    assert not restates(
        "We tune TM or AN-AN on the dictionary of 5K words.",
        "We tune TM or SP on the dictionary of 5K words.",
    )


def test_the_source_is_found_among_the_sentences_of_the_evidence():
    text = "TEDS is a tree edit distance. " + SOURCE + " Training takes two days."
    assert restated_source("The authors show that " + SOURCE[len("We show that ") :], [text]) == SOURCE
    assert restated_source("Training of TableFormer takes two days on four GPUs.", [text]) is None


def test_the_audit_passes_a_restatement_without_the_verifier_and_asks_about_the_rest(monkeypatch):
    controls = record_controls(monkeypatch)
    verifier = ScriptedLLM(lambda prompt: "\n".join(f"[{n}] NO" for n, _, _ in claims_with_evidence(prompt)))
    evidence = [EvidenceRef(chunk_id=1, page_start=3, page_end=3, text=SOURCE)]
    copied = "The authors show that " + SOURCE[len("We show that ") :]
    changed = copied.replace("93.6", "96.3")
    kwargs = dict(verifier=verifier, evidence_for=lambda batch: evidence, max_workers=1)

    result = audit_sentences([copied, changed], accept_restatements=True, **kwargs)
    first, second = result.sentences
    assert first.verdict == "supported" and any(r.startswith(RESTATES) for r in first.reasons)
    assert first.evidence and SOURCE in first.evidence[0].text
    assert second.verdict == "unsupported" and verifier.calls == 1
    asked = [claim for _, claim in real_claims(verifier.history[0]["messages"][-1]["content"], controls)]
    assert asked == [changed], "only the changed sentence is asked about"

    without = audit_sentences([copied], **kwargs)  # other audits (answers, outside text) ask
    assert without.sentences[0].verdict == "unsupported" and verifier.calls == 2

    # the deep read's objections are about what the note claims of the paper; a restatement is the
    # paper's own claim (s2orc's "Yet, existing corpora are not without their limitations.")
    objecting = audit_sentences(
        [copied], accept_restatements=True, objections=lambda sentence: ["an objection"], **kwargs
    )
    assert objecting.sentences[0].verdict == "supported"


def test_a_bold_list_label_is_no_part_of_the_claim_and_a_restatement_or_lead_in_is_specific_enough(
    monkeypatch,
):
    """The writer's "**Page Splitting**:" is neither a name to find in the paper nor words that
    keep a restatement from being one; a restated sentence of the paper and a list's lead-in are
    not flagged as saying nothing specific."""
    paper = (
        "A block that crosses the middle of the page splits the page into bands. "
        "Inside a band the left column is read top to bottom before the right one."
    )
    evidence = [EvidenceRef(chunk_id=1, page_start=1, page_end=1, text=paper)]
    controls = record_controls(monkeypatch)
    verifier = ScriptedLLM(lambda prompt: yes_but_controls(prompt, controls))
    labelled = "**Page Splitting**: A block that crosses the middle of the page splits the page into bands."
    plain = "Inside a band, the left column is read top to bottom before the right one."
    lead_in = "The ingest step works as follows:"
    invented = "**Page Splitting**: A block that crosses the middle of the page splits BERT into bands."
    result = audit_sentences(
        [labelled, plain, lead_in, invented],
        verifier=verifier,
        evidence_for=lambda batch: evidence,
        facts=PaperFacts.from_texts([paper]),
        max_workers=1,
        require_specific=True,
        accept_restatements=True,
    )
    verdicts = {s.text: s for s in result.sentences}
    for restatement in (labelled, plain):
        assert verdicts[restatement].verdict == "supported", verdicts[restatement].reasons
        assert any(r.startswith(RESTATES) for r in verdicts[restatement].reasons)
    assert verdicts[lead_in].verdict == "supported", verdicts[lead_in].reasons
    assert verdicts[invented].verdict == "unsupported"
    assert any("'BERT'" in r for r in verdicts[invented].reasons), (
        "the claim after the label is still checked"
    )
    assert not any("Splitting" in r for r in verdicts[invented].reasons)


def test_a_restatement_keeps_the_figure_its_paper_sentence_prints_against_a_reading_of_a_table(monkeypatch):
    """The paper's sentence "improves on BERT by 3.5 points" stands though its table's cells give
    3.2 (an average of per-row gains is not the gain of the average row); the same sentence not
    restated is the table's to judge."""
    from reader.text.grid import Table

    table = Table(
        label="Table 2",
        caption="Table 2: Accuracy on SQA.",
        page=5,
        rect=[0.1, 0.2, 0.6, 0.4],
        rows=[["Model", "SQA"], ["BERT", "81.9"], ["RoBERTa", "84.0"], ["Ours", "85.1"]],
        header_rows=1,
    )
    paper = "On average over its splits, Ours improves on BERT by 3.5 points on SQA."
    evidence = [EvidenceRef(chunk_id=1, page_start=5, page_end=5, text=paper)]
    controls = record_controls(monkeypatch)
    verifier = ScriptedLLM(lambda prompt: yes_but_controls(prompt, controls))
    sentence = "On average over its splits, Ours improves on BERT by 3.5 points on SQA."
    kwargs = dict(
        verifier=verifier,
        evidence_for=lambda batch: evidence,
        facts=PaperFacts.from_texts([], [table]),
        max_workers=1,
    )
    restated = audit_sentences([sentence], accept_restatements=True, **kwargs).sentences[0]
    assert restated.verdict == "supported", restated.reasons
    assert any(r.startswith(RESTATES) for r in restated.reasons)
    checked = audit_sentences([sentence], **kwargs).sentences[0]
    assert checked.verdict == "unsupported"
    assert any("does not follow from the table" in r for r in checked.reasons)
