"""A verifier reply that answers none of a batch's claims is a failed call (issue 15, item 1).

It is retried once, never cached, and if the retry answers nothing either, the batch's
sentences are *unchecked*: counted and shown as such by `reader read`, `show`, `audit`,
`review` (table and JSON), the Markdown notes and the web page, marked `[待验证]`, never
counted as supported and never as flagged. A partly answered batch is asked once more for its
missing claims (one call, those claims only); a claim left out twice is unchecked too (issue 33,
case 8), where it used to be "unanswered" and counted as supported. Only replies that parse are
cached, and a cached reply that does not parse is not served.

The end-to-end tests run the real CLI with the dry-run generator and the verifier behind
the loopback OpenAI-compatible server, whose answers the test switches from garbage to good.
"""

from __future__ import annotations

import json
import re
from collections import Counter

import pytest
import yaml
from click.testing import CliRunner
from controls import control_numbers, real_claims, record_controls, yes_but_controls
from loopback_openai import LoopbackOpenAI, _last_user
from sqlalchemy import select

from reader.audit.loop import MARK, audit_loop, audit_text
from reader.audit.verify import EvidenceRef, build_messages
from reader.llm.base import Completion
from reader.llm.dryrun import answer_checklist, answer_verify
from reader.llm.logged import LoggedLLM, cache_key
from reader.llm.scripted import ScriptedLLM
from reader.store.calls import CallStore
from reader.store.tables import LLMCacheEntry, SentenceVerdict

GARBAGE = "I am not sure what you are asking. Could you rephrase?"
VERIFIER_MODEL = "verifier-model"
EVIDENCE = [EvidenceRef(7, 3, 3, "LexiRank reaches a recall of 71.4% on CiteBench.")]
CLAIMS = ["LexiRank reaches a recall of 71.4% on CiteBench.", "LexiRank is evaluated on CiteBench."]

PAPER = """# LexiRank: Citation Context for Passage Ranking

## Abstract

LexiRank ranks the passages of scientific papers by the citation context around them. On CiteBench it reaches a recall of 71.4% at ten passages, against 58.9% for BM25.

## 1 Introduction

Readers of a paper search for the passage that supports a claim. LexiRank collects the sentences that cite a paper and scores every passage by its overlap with them. The score is combined with BM25 by a learned weight.

## 2 Experiments

LexiRank is compared against BM25 and a dense retriever on CiteBench, which holds 1,200 queries. Removing the citation context brings recall back to 62.0%, close to BM25. Ranking one query takes about four milliseconds on a laptop processor.

## 3 Conclusion

Citation context is a useful and cheap ranking signal for scientific passages. Future work will test LexiRank on papers written in Chinese.
"""


# The audit's control claims (reader.audit.control): the verifiers here answer them NO, as an
# honest verifier would, so that the batches they answer are trusted.
CONTROLS: set[str] = set()


@pytest.fixture(autouse=True)
def controls(monkeypatch):
    CONTROLS.clear()
    record_controls(monkeypatch, CONTROLS)


def garbage(prompt: str) -> str:
    return GARBAGE


def first_answer_only(prompt: str) -> str:
    """Answers the first claim of every call (and its control claim) and nothing else: a partly
    answered batch."""
    first = min(n for n, _ in real_claims(prompt, CONTROLS))
    return "\n".join(
        line
        for line in answer_verify(prompt).splitlines()
        if int(line[1 : line.index("]")]) in (first, *control_numbers(prompt, CONTROLS))
    )


def first_claim_only(prompt: str, answer: str = "YES") -> str:
    """`answer` to the first claim of the call, NO to its control claim, nothing else."""
    first = min(n for n, _ in real_claims(prompt, CONTROLS))
    return "\n".join([f"[{first}] {answer}"] + [f"[{n}] NO" for n in control_numbers(prompt, CONTROLS)])


# ---------------------------------------------------------------- the audit and the cache


def good(prompt: str) -> str:
    return yes_but_controls(prompt, CONTROLS)


def audit(verifier, claims=CLAIMS):
    return audit_text(" ".join(claims), paper_id="p1", verifier=verifier, evidence_for=lambda batch: EVIDENCE)


def verifier_cache_entries(db) -> list[LLMCacheEntry]:
    with db() as session:
        return session.scalars(select(LLMCacheEntry).where(LLMCacheEntry.model == "scripted")).all()


def test_garbage_reply_is_retried_once_then_unchecked_and_never_cached(db):
    inner = ScriptedLLM(garbage)
    verifier = LoggedLLM(inner, "verifier", CallStore(db))
    result = audit(verifier)
    assert inner.calls == 2, "one batch: the call and one retry"
    assert [s.verdict for s in result.sentences] == ["unchecked", "unchecked"]
    assert not any(s.flagged for s in result.sentences) and result.flagged_ratio == 0.0
    assert result.n_unchecked == 2 and result.llm_calls == 2
    assert all("could not be read" in " ".join(s.reasons) for s in result.sentences)
    assert verifier_cache_entries(db) == []
    audit(verifier)
    assert inner.calls == 4, "nothing was cached: the next audit asks again"


def test_a_retry_that_answers_is_used_and_cached(db):
    inner = ScriptedLLM(good).enqueue(GARBAGE)
    verifier = LoggedLLM(inner, "verifier", CallStore(db))
    result = audit(verifier)
    assert inner.calls == 2
    assert [s.verdict for s in result.sentences] == ["supported", "supported"]
    assert len(verifier_cache_entries(db)) == 1
    again = audit(verifier)
    assert inner.calls == 2, "the good reply is cached and served"
    assert [s.verdict for s in again.sentences] == ["supported", "supported"]


def test_a_good_reply_is_still_cached_and_served_through_the_check(db):
    inner = ScriptedLLM(good)
    verifier = LoggedLLM(inner, "verifier", CallStore(db))
    checked = []
    messages = build_messages(CLAIMS, [EVIDENCE] * len(CLAIMS))
    first = verifier.complete(messages, accept=lambda c: checked.append(c.text) or True)
    second = verifier.complete(messages, accept=lambda c: checked.append(c.text) or True)
    assert (first.cached, second.cached) == (False, True) and inner.calls == 1
    assert checked == [first.text, first.text], "the check sees the fresh reply and the cached one"
    rejected = verifier.complete(messages, max_tokens=7, accept=lambda c: False)
    assert not rejected.cached and rejected.text == first.text
    verifier.complete(messages, max_tokens=7, accept=lambda c: False)
    assert inner.calls == 3, "a rejected reply is not cached"
    audit(verifier)
    audit(verifier)
    assert inner.calls == 4, "the audit's good reply is cached"


def test_a_garbage_reply_cached_by_an_older_version_is_not_served(db):
    # What the cache held before this fix: the garbage reply under the batch's key.
    probe = ScriptedLLM(good)
    audit(probe)
    sent = probe.history[0]
    key = cache_key("scripted", sent["messages"], 0.0, sent["max_tokens"])
    CallStore(db).remember(
        key,
        {"model": "scripted", "text": GARBAGE, "prompt_tokens": 9, "completion_tokens": 9, "logprobs": None},
    )
    inner = ScriptedLLM(good)
    result = audit(LoggedLLM(inner, "verifier", CallStore(db)))
    assert inner.calls == 1, "the unreadable cached reply is not served: the verifier is asked"
    assert [s.verdict for s in result.sentences] == ["supported", "supported"]
    with db() as session:
        assert session.get(LLMCacheEntry, key).text != GARBAGE, "the good reply replaces it"


class StrictUserLLM:
    """A user's own client: `model` and `complete()` with exactly the documented keywords."""

    model = "users-own"

    def __init__(self, answer):
        self.answer = answer
        self.calls = 0

    def complete(self, messages, *, temperature=0.0, max_tokens=512, stage="", paper_id=None):
        self.calls += 1
        return Completion(text=self.answer(messages[-1]["content"]))


def test_a_users_llm_that_does_not_know_the_check_still_works(db):
    bare = StrictUserLLM(garbage)
    result = audit(bare)  # no LoggedLLM around it: the audit must not pass `accept`
    assert bare.calls == 2 and [s.verdict for s in result.sentences] == ["unchecked", "unchecked"]
    wrapped = StrictUserLLM(good)
    result = audit(LoggedLLM(wrapped, "verifier", CallStore(db)))
    assert wrapped.calls == 1 and [s.verdict for s in result.sentences] == ["supported", "supported"]


def test_unchecked_sentences_are_marked_but_trigger_no_rewrite():
    texts = iter(["LexiRank is fast. LexiRank is cheap. LexiRank is new.", "never asked for"])
    loop = audit_loop(
        lambda flagged, previous: next(texts),
        lambda text, known: audit_text(
            text, verifier=ScriptedLLM(garbage), evidence_for=lambda batch: EVIDENCE
        ),
    )
    assert loop.regenerations == 0, "a broken verifier is no reason to rewrite"
    assert [s.verdict for s in loop.final.sentences] == ["unchecked"] * 3
    assert loop.final_text == f"{MARK}LexiRank is fast. {MARK}LexiRank is cheap. {MARK}LexiRank is new."


def test_a_guard_failure_stays_unsupported_when_the_verifier_is_unreadable():
    from reader.audit.guards import PaperFacts

    facts = PaperFacts.from_texts([EVIDENCE[0].text])
    result = audit_text(
        "LexiRank reaches a recall of 93.5% on CiteBench. LexiRank is evaluated on CiteBench.",
        verifier=ScriptedLLM(garbage),
        facts=facts,
        evidence_for=lambda batch: EVIDENCE,
    )
    assert [s.verdict for s in result.sentences] == ["unsupported", "unchecked"]
    assert result.n_flagged == 1 and result.n_unchecked == 1


def claims_asked(prompt: str) -> list[str]:
    """The claims of a verification prompt, in order, its control claim left out."""
    return [claim for _, claim in real_claims(prompt, CONTROLS)]


EIGHT = [f"LexiRank reaches a recall of 71.4% on CiteBench in setting {n}." for n in range(1, 9)]


def test_a_partly_answered_batch_is_asked_once_more_for_its_missing_claims_only(db):
    def verifier_answer(prompt):  # the first reply per batch answers its first claim only, the follow-up all
        return first_claim_only(prompt) if len(claims_asked(prompt)) == 4 else good(prompt)

    inner = ScriptedLLM(verifier_answer)
    verifier = LoggedLLM(inner, "verifier", CallStore(db))
    result = audit(verifier, EIGHT)
    asked = [claims_asked(call["prompt"]) for call in inner.history]
    assert sorted(asked) == sorted([EIGHT[0:4], EIGHT[1:4], EIGHT[4:8], EIGHT[5:8]]), (
        "one more call per batch, for the claims its reply left out and nothing else"
    )
    assert [s.verdict for s in result.sentences] == ["supported"] * 8
    assert (result.n_unanswered, result.n_unchecked, result.llm_calls) == (0, 0, 4)
    again = audit(verifier, EIGHT)
    assert inner.calls == 4, "both replies are cached: the next audit asks nothing"
    assert [s.verdict for s in again.sentences] == ["supported"] * 8


def test_claims_left_out_twice_are_unchecked_marked_and_trigger_no_rewrite():
    verifier = ScriptedLLM(first_claim_only)  # answers the first claim of every call only
    text = " ".join(EIGHT)
    loop = audit_loop(
        lambda flagged, previous: text,
        lambda text, known: audit_text(text, verifier=verifier, evidence_for=lambda batch: EVIDENCE),
    )
    result = loop.final
    assert verifier.calls == 4, "each batch: its call and one follow-up"
    # batch 1..4: [1] in the first reply, [2] in the follow-up, [3] and [4] in neither
    assert [s.verdict for s in result.sentences] == ["supported", "supported", "unchecked", "unchecked"] * 2
    assert (result.n_unchecked, result.n_unanswered, result.n_flagged, result.flagged_ratio) == (4, 0, 0, 0.0)
    left_out = [s for s in result.sentences if s.verdict == "unchecked"]
    assert all("left this claim out twice: not checked" in " ".join(s.reasons) for s in left_out)
    assert loop.regenerations == 0, "a verifier that leaves claims out is no reason to rewrite"
    marked = [s for s in EIGHT if f"{MARK}{s}" in loop.final_text]
    assert marked == [EIGHT[2], EIGHT[3], EIGHT[6], EIGHT[7]]


def test_a_follow_up_that_answers_nothing_leaves_the_claims_unchecked_and_is_not_cached(db):
    inner = ScriptedLLM(
        lambda prompt: first_claim_only(prompt, "NO") if len(claims_asked(prompt)) == 2 else GARBAGE
    )
    verifier = LoggedLLM(inner, "verifier", CallStore(db))
    result = audit(verifier)
    assert inner.calls == 2, "the call and one follow-up, no more"
    assert [s.verdict for s in result.sentences] == ["unsupported", "unchecked"]
    assert (result.n_flagged, result.n_unchecked) == (1, 1)
    assert len(verifier_cache_entries(db)) == 1, "the reply that answered is cached, the garbage is not"
    audit(verifier)
    assert inner.calls == 3, "the cached reply is served; the follow-up is asked again"


def test_an_unreadable_check_of_an_answer_is_not_grounded():
    from reader.crag.evidence import Candidate
    from reader.crag.grounded import audit_grounded

    evidence = [
        Candidate(key="chunk:1", text=EVIDENCE[0].text, paper_id="p1", chunk_id=1, page_start=3, page_end=3)
    ]
    grounded, reason, _supported = audit_grounded(
        "LexiRank reaches a recall of 71.4% on CiteBench.", evidence, ScriptedLLM(garbage)
    )
    assert not grounded
    assert "could not be read" in reason and "1 of 1" in reason


# ---------------------------------------------------------------- end to end, through the CLI


@pytest.fixture
def endpoint(reader_env, hashing_index, monkeypatch, tmp_path):
    """The dry-run generator, the verifier behind the loopback server (garbage until the test
    fixes it), the hashing embedder; the response cache on."""
    # the dry-run writer copies its material, which the deep read would pass as restatements
    # (reader.audit.restated) without asking the verifier these tests are about,
    monkeypatch.setattr("reader.audit.loop.restated_source", lambda claim, texts: None)
    # nor the sentences the tool states itself on a rule's finding (reader.deepread.checked)
    monkeypatch.setattr("reader.deepread.writer.checked_facts", lambda checks: [])
    with LoopbackOpenAI(respond=garbage, models=(VERIFIER_MODEL,)) as server:
        monkeypatch.setenv("READER_LLM_BASE_URL", "scripted:")
        monkeypatch.setenv("READER_VERIFIER_BASE_URL", server.base_url)
        monkeypatch.setenv("READER_VERIFIER_MODEL", VERIFIER_MODEL)
        monkeypatch.setenv("READER_VERIFIER_API_KEY", "k")
        yield server


@pytest.fixture
def folder(tmp_path):
    folder = tmp_path / "papers"
    folder.mkdir()
    (folder / "lexirank.md").write_text(PAPER, encoding="utf-8")
    return folder


def run(*args, input=None, stdout_only=False) -> str:
    """The command's output (standard output and error, as a terminal shows them)."""
    from reader.cli import cli

    result = CliRunner().invoke(cli, list(args), input=input, catch_exceptions=False)
    assert result.exit_code == 0, result.output
    return result.stdout if stdout_only else result.output


def run_json(*args, input=None):
    return json.loads(run(*args, "--json", input=input, stdout_only=True))


def review_json(folder, *extra) -> dict:
    (row,) = run_json("review", str(folder), "--quiet", *extra)["papers"]
    return row


def stored_verdicts(paper_id) -> Counter:
    from reader.facade import Reader

    with Reader().services.db() as session:
        return Counter(session.scalars(select(SentenceVerdict.verdict)).all())


def verifier_requests(server) -> Counter:
    """How often each distinct verification conversation was sent."""
    return Counter(json.dumps(r["json"]["messages"]) for r in server.chat_requests)


def front_matter(note: str) -> dict:
    return yaml.safe_load(note.split("---\n", 2)[1])


def web(path: str) -> str:
    from fastapi.testclient import TestClient

    from reader.facade import Reader
    from reader.web.app import create_app

    with TestClient(create_app(Reader())) as client:
        response = client.get(path)
        assert response.status_code == 200
        return response.text


def test_garbage_verifier_leaves_sentences_unchecked_everywhere(endpoint, folder, tmp_path):
    table = run("review", str(folder), "--quiet")
    # the checklist's one-question extractions are no verify batches (asked once, their reply unread)
    sent = {c: n for c, n in verifier_requests(endpoint).items() if "Answer with the copied span" not in c}
    # every batch was asked twice (critique and synthesis may share one: four times)
    assert sent and all(n in (2, 4) for n in sent.values())
    from reader.facade import Reader
    from reader.store.tables import LLMCall

    with Reader().services.db() as session:
        logged = session.scalars(
            select(LLMCall.error).where(LLMCall.role == "verifier", LLMCall.stage != "checklist")
        ).all()
    assert len(logged) == sum(sent.values()) and all("rejected" in e for e in logged)

    row = review_json(folder)  # skipped now: its figures come from the stored review
    assert row["status"] == "skipped"
    unchecked, flagged = row["unchecked"], row["flagged"]
    # the rest are the tool's findings from the checklist (and restatements), decided by rule
    assert unchecked > 0 and unchecked + flagged <= row["sentences"] and row["unanswered"] == 0
    assert "Unchecked" in table and "Unanswered" not in table and f"{unchecked} sentences unchecked" in table
    paper_id = row["paper_id"]
    verdicts = stored_verdicts(paper_id)
    assert verdicts["unchecked"] == unchecked
    with Reader().services.db() as session:
        supported = session.scalars(
            select(SentenceVerdict).where(SentenceVerdict.verdict == "supported")
        ).all()
    assert all(v.decided_by == "tool" for v in supported), (
        "only the tool's own sentences pass without a verifier"
    )

    with Reader().services.db() as session:
        cached = session.scalars(select(LLMCacheEntry.model)).all()
    assert VERIFIER_MODEL not in cached and cached, "the generator's replies are cached, the garbage is not"

    shown = run("show", paper_id[:12], "--verdicts")
    assert re.search(r"unchecked [1-9]", shown) and " unchecked " in shown

    read = run("read", paper_id[:12], "--quiet")
    assert re.search(r"unchecked [1-9]\d* · unanswered 0", read)
    assert "could not be read" in read

    audited = run_json(
        "audit", "--paper", paper_id[:12], input="LexiRank ranks passages by their citation context."
    )
    assert audited["n_unchecked"] == 1 and audited["n_flagged"] == 0
    assert audited["marked_text"].startswith(MARK)
    text = run("audit", "--paper", paper_id[:12], input="LexiRank ranks passages by their citation context.")
    assert "1 unchecked" in text

    run("export", "--all", "--out", str(tmp_path / "notes"))
    (note_path,) = [p for p in (tmp_path / "notes").glob("*.md") if p.name != "index.md"]
    note = note_path.read_text(encoding="utf-8")
    meta = front_matter(note)
    assert meta["unchecked"] == unchecked and meta["flagged"] == flagged
    assert "reader/has-unchecked" in meta["tags"]
    assert "> [!warning] 待验证 · not checked" in note
    index = (tmp_path / "notes" / "index.md").read_text(encoding="utf-8")
    assert front_matter(index)["unchecked"] == unchecked

    page = web(f"/paper/{paper_id}")
    assert page.count('data-verdict="unchecked"') > 0 and "verdict-unchecked" in page
    assert "Not checked" in page and re.search(r"[1-9]\d* unchecked", page)
    library = web("/library")
    assert f'<td class="num unchecked warn">{unchecked}</td>' in library


def test_review_force_after_fixing_the_endpoint_checks_for_real(endpoint, folder):
    run("review", str(folder), "--quiet")
    before = len(endpoint.chat_requests)
    # the endpoint is fixed: it verifies, and answers the checklist's questions with a span or NONE
    endpoint.respond = lambda p: answer_checklist(p) if "copied span" in p else answer_verify(p)
    row = review_json(folder, "--force")
    assert len(endpoint.chat_requests) > before, "the unreadable replies were not cached: asked again"
    assert row["status"] == "reviewed" and row["unchecked"] == 0 and row["unanswered"] == 0
    verdicts = stored_verdicts(row["paper_id"])
    assert verdicts["unchecked"] == 0 and verdicts["supported"] > 0

    requests = len(endpoint.chat_requests)
    review_json(folder, "--force")
    assert len(endpoint.chat_requests) == requests, "the good replies are cached"


def test_claims_left_out_twice_are_unchecked_in_every_summary(endpoint, folder, tmp_path):
    endpoint.respond = first_answer_only
    run("review", str(folder), "--quiet")
    sizes = [len(claims_asked(_last_user(r["json"]))) for r in endpoint.chat_requests]
    follow_ups = [n for before, n in zip(sizes, sizes[1:]) if 0 < n < before]
    assert follow_ups, "a partly answered batch is asked once more, for its missing claims only"
    row = review_json(folder)
    unchecked = row["unchecked"]
    assert unchecked > 0 and row["unanswered"] == 0, "left out twice: unchecked, not counted as supported"
    paper_id = row["paper_id"]
    verdicts = stored_verdicts(paper_id)
    assert verdicts["unchecked"] == unchecked and verdicts["unanswered"] == 0

    shown = run("show", paper_id[:12], "--verdicts")
    assert re.search(r"unchecked [1-9]", shown) and "the verifier left this claim out twice" in shown
    read = run("read", paper_id[:12], "--quiet")
    assert re.search(r"unchecked [1-9]\d* · unanswered 0", read) and "left them out" in read
    sentences = [
        "LexiRank ranks passages by their citation context.",
        "LexiRank is compared against BM25 on CiteBench.",
        "LexiRank takes about four milliseconds per query.",
    ]
    audited = run_json("audit", "--paper", paper_id[:12], input=" ".join(sentences))
    assert (audited["n_unchecked"], audited["n_unanswered"], audited["n_flagged"]) == (1, 0, 0)
    assert f"{MARK}{sentences[2]}" in audited["marked_text"]
    assert "1 unchecked" in run("audit", "--paper", paper_id[:12], input=" ".join(sentences))

    run("export", "--all", "--out", str(tmp_path / "notes"))
    (note_path,) = [p for p in (tmp_path / "notes").glob("*.md") if p.name != "index.md"]
    note = note_path.read_text(encoding="utf-8")
    meta = front_matter(note)
    assert (meta["unchecked"], meta["unanswered"]) == (unchecked, 0)
    assert "reader/has-unchecked" in meta["tags"] and "> [!warning] 待验证 · not checked" in note

    assert re.search(r"[1-9]\d* unchecked", web(f"/paper/{paper_id}"))
    assert f'<td class="num unchecked warn">{unchecked}</td>' in web("/library")
