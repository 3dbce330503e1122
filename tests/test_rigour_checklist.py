"""The rigour checklist (reader.checklist) end to end, and how each sentence was decided
(reader.audit.decided): built by rule, search and extraction, stored with the deep read, shown in
`reader show --json`, the note and the paper page; the critique's tool findings rest on it; the
flagged ratio counts only the sentences a model or a guard checked."""

from __future__ import annotations

import json

from test_deepread import PAPER_ID, add_paper, controls, fake_search, make_llms  # noqa: F401 (controls: autouse)

from reader.audit.guards import PaperFacts
from reader.audit.loop import audit_sentences
from reader.audit.verify import EvidenceRef
from reader.checklist import build_checklist, stored_checklist
from reader.deepread.read import deep_read
from reader.index.hits import SearchHit
from reader.llm.dryrun import claims_with_evidence
from reader.llm.scripted import ScriptedLLM
from reader.store.db import transaction
from reader.text.rigour import Passage

PASSAGES = [
    Passage(
        "We propose HeadPrune, which removes attention heads by their gradient.", "1 Introduction", 1, 1, 11
    ),
    Passage("On MNLI HeadPrune reaches 83.97 accuracy against 84.27 before pruning.", "4 Results", 4, 4, 12),
    Passage(
        "All runs used one machine. Training ran overnight on the shared GPU server of the department.",
        "4 Results",
        5,
        5,
        13,
    ),
    Passage("Our code lives in the project repository for anyone who asks.", "6 Release", 6, 6, 14),
]


def search(query, paper_id):
    return [
        SearchHit(p.chunk_id, paper_id, p.text, p.section, p.page_start, p.page_end, 1.0 / (n + 1))
        for n, p in enumerate(reversed(PASSAGES))
    ]


def test_an_item_the_rules_miss_is_searched_and_asked_and_kept_only_as_a_span_of_its_passage():
    def reply(prompt, stage):
        if "hardware" in prompt:  # compute: a span copied word for word
            return "“Training ran overnight on the shared GPU server of the department.”"
        if "code, software" in prompt:  # code: a paraphrase, in no passage
            return "The code is available on request."
        return "NONE"

    llm = ScriptedLLM(reply, with_stage=True)
    checklist = build_checklist("p" * 64, "HeadPrune", PASSAGES, search=search, llm=llm)
    items = checklist.by_key
    assert items["metrics"].decided_by == "rule" and items["metrics"].page_start == 4
    assert items["contributions"].quote.startswith("We propose HeadPrune")
    compute = items["compute"]
    assert compute.found and compute.decided_by == "extraction" and compute.chunk_id == 13
    assert (
        compute.quote == "Training ran overnight on the shared GPU server of the department."
        and compute.pages == "p. 5"
    )
    code = items["code"]
    assert not code.found and code.decided_by == "not found"
    assert "the index searched for" in code.searched and "not a span" in code.searched
    variance = items["variance"]  # no passage uses its words: nothing to ask
    assert not variance.found and "no passage found uses the item's words" in variance.searched
    assert "the rules read all" in variance.searched
    assert checklist.llm_calls == len([h for h in llm.history if h["stage"] == "checklist"]) > 0
    assert all(h["stage"] == "checklist" for h in llm.history)
    # without an index or a model the rules alone decide, and say so
    alone = build_checklist("p" * 64, "HeadPrune", PASSAGES).by_key["compute"]
    assert not alone.found and alone.searched == "the rules read all 5 sentences (references aside)"


def test_the_flagged_ratio_counts_only_the_sentences_a_model_or_a_guard_checked():
    evidence = [EvidenceRef(1, 2, 2, "Accuracy drops from 84.27 to 83.97 after pruning.")]
    verifier = ScriptedLLM(lambda p: "\n".join(f"[{n}] NO" for n, _, _ in claims_with_evidence(p)))
    restated = "Accuracy drops from 84.27 to 83.97 after pruning."
    stated = "No result of the paper is given with a standard deviation."
    from reader.audit.decided import Stated

    result = audit_sentences(
        [restated, stated, "The method doubles the speed.", "It beats NEXUS."],
        verifier=verifier,
        evidence_for=lambda claims: evidence,
        facts=PaperFacts.from_texts([restated]),
        max_workers=1,
        accept_restatements=True,
        stated={stated: Stated("checklist item variance: not found", "variance")},
        control=False,
    )
    decided = {s.text: s.decided_by for s in result.sentences}
    assert decided == {
        restated: "restated",
        stated: "tool",
        "The method doubles the speed.": "verifier",
        "It beats NEXUS.": "guard",
    }
    assert result.n_flagged == 2 and result.n_checked == 2 and result.flagged_ratio == 1.0  # was 2 of 4
    tool = next(s for s in result.sentences if s.decided_by == "tool")
    assert tool.checklist_item == "variance" and tool.evidence == []  # no search's passage for an absence
    data = tool.to_json()["decided"]
    assert (
        data["kind"] == "tool" and data["item"] == "variance" and data["label"] == "tool's finding: variance"
    )
    said = next(s for s in result.sentences if s.decided_by == "verifier").to_json()["decided"]
    assert said["kind"] == "model" and said["label"].startswith("verifier")


def _read(db):
    add_paper(db)
    generator, verifier = make_llms()
    return deep_read(PAPER_ID, db=db, generator=generator, verifier=verifier, search=fake_search(db))


def test_the_deep_read_stores_the_checklist_and_the_critique_states_it(db):
    result = _read(db)
    assert result.checklist is not None and result.to_json()["checklist"]["items"][0]["item"] == "datasets"
    with transaction(db) as s:
        stored = stored_checklist(s, PAPER_ID)
    items = stored.by_key
    assert (
        items["variance"].found and items["variance"].kind == "spread" and items["variance"].page_start == 4
    )
    assert items["baselines"].found and "Michel" in items["baselines"].quote
    assert not items["ethics"].found and items["ethics"].searched
    critique = {k.kind: k for k in result.analyses}["critique"].loop.final
    tools = [s for s in critique.sentences if s.decided_by == "tool"]
    assert {s.checklist_item for s in tools} >= {"variance", "baselines"}
    variance = next(s for s in tools if s.checklist_item == "variance")
    # tied to its item and page: the item's own sentence and passage is its evidence
    assert variance.evidence[0].page_start == 4 and "± 0.1" in variance.evidence[0].text
    assert variance.evidence[0].chunk_id == items["variance"].chunk_id


def test_show_json_the_note_and_the_paper_page_say_how_each_sentence_was_decided(app, db, tmp_path):
    from fastapi.testclient import TestClient

    from reader.export import export_notes
    from reader.web.app import create_app

    _read(db)
    shown = json.loads(json.dumps(app.paper(PAPER_ID).analyses().to_json()))
    assert shown["checklist"]["stored"] is True and len(shown["checklist"]["items"]) == 13
    critique = next(a for a in shown["analyses"] if a["kind"] == "critique")
    kinds = {s["decided"]["kind"] for s in critique["sentences"]}
    assert {"tool", "model"} <= kinds
    counts = critique["decided"]
    assert counts["checked"] == counts["model"] + counts["guard"] and counts["tool"] >= 2

    (note,) = export_notes(db, [PAPER_ID], tmp_path / "notes").notes
    text = note.read_text(encoding="utf-8")
    assert "## Rigour checklist" in text and "| Variance, CI or significance | yes |" in text
    assert "⟨tool's finding: variance, p. 4⟩" in text
    assert "Every sentence was checked" not in text
    assert "the tool's own findings from the rigour checklist (no model call)" in text

    client = TestClient(create_app(app))
    html = client.get(f"/paper/{PAPER_ID}").text
    assert html.count('class="tool-badge"') >= 2 and "tool's finding · variance" in html
    found = html.split('data-item="variance"', 1)[1].split(">", 1)[0]
    assert 'data-decided="tool"' in html and "data-passage=" in found  # opens the item's passage
    assert 'id="checklist-variance"' in html and 'href="#checklist-' in html
    assert "The tool&#39;s own finding" in html or "The tool's own finding" in html
