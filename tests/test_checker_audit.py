"""The claim checker's part in the audit, with a scripted scorer and the scripted verifier."""

import random
import re

import pytest

from reader.audit.checking import CheckerBand, readable
from reader.audit.evidence import excerpts
from reader.audit.guards import PaperFacts, check_sentence
from reader.audit.loop import audit_text
from reader.audit.verify import EvidenceRef
from reader.checker.model import Scored
from reader.config import load_settings
from reader.errors import ConfigError
from reader.index.hits import SearchHit
from reader.llm.scripted import ScriptedLLM
from scripts.training import rewrites as rw

CLAIM = re.compile(r"^\[(\d+)\] (.*)$", re.M)


class WordScorer:
    """P(supported) by a word in the claim: 'sure' 0.97, 'false' 0.02, else 0.5; records calls."""

    name = "word scorer"

    def __init__(self):
        self.calls = []

    def score(self, claims, evidence):
        self.calls.append((list(claims), [list(e) for e in evidence]))
        out = []
        for claim, texts in zip(claims, evidence):
            p = 0.97 if "sure" in claim else 0.02 if "false" in claim else 0.5
            best = max(range(len(texts)), key=lambda i: ("deciding" in texts[i], -i)) if texts else None
            out.append(Scored(p, best))
        return out


def claims_of(prompt):
    return [m.group(2) for m in CLAIM.finditer(prompt.rpartition("Claims:")[2])]


def verifier_saying(answer):
    return ScriptedLLM(
        lambda prompt: "\n".join(f"[{i}] {answer}" for i, _ in enumerate(claims_of(prompt), 1))
    )


def search(query, paper_id):
    return [
        SearchHit(1, "p1", "Some filler about the setup. More filler here.", "Intro", 1, 1, 0.9),
        SearchHit(2, "p1", "The deciding sentence about the result. Its neighbour.", "Results", 5, 5, 0.8),
    ]


SENTENCES = [
    "A sure claim one.",
    "A sure claim two.",
    "A false claim three.",
    "An undecided claim four.",
    "An undecided claim five.",
    "这是一个中文句子。",
]


def test_the_checker_decides_what_it_is_sure_of_and_the_verifier_the_rest():
    scorer, verifier = WordScorer(), verifier_saying("YES")
    result = audit_text(
        " ".join(SENTENCES),
        paper_id="p1",
        verifier=verifier,
        search=search,
        checker=CheckerBand(scorer, 0.1, 0.9),
    )
    verdicts = {s.text: s for s in result.sentences}
    # one verifier call for the three it was not sure of (two unsure, one it cannot read)
    assert verifier.calls == 1 and result.llm_calls == 1
    assert claims_of(verifier.history[0]["prompt"]) == [
        "An undecided claim four.",
        "An undecided claim five.",
        "这是一个中文句子。",
    ]
    assert scorer.calls[0][0] == SENTENCES[:5]  # the Chinese sentence is not scored
    assert verdicts["A sure claim one."].verdict == "supported"
    assert verdicts["A sure claim one."].reasons == ["claim checker: supported (P 0.97 ≥ 0.90)"]
    assert verdicts["A sure claim one."].llm_answer == ""
    assert verdicts["A false claim three."].verdict == "unsupported"
    assert verdicts["A false claim three."].reasons == ["claim checker: not supported (P 0.02 ≤ 0.10)"]
    four = verdicts["An undecided claim four."]
    assert four.verdict == "supported" and four.p_checker == 0.5
    assert four.reasons[0].startswith("claim checker unsure (P 0.50")
    assert four.reasons[1] == "verifier: YES"
    chinese = verdicts["这是一个中文句子。"]
    assert chinese.p_checker is None and "reads English only" in chinese.reasons[0]


def test_each_sentence_keeps_its_own_excerpts_the_deciding_one_first():
    result = audit_text(
        "A sure claim one.",
        paper_id="p1",
        verifier=verifier_saying("YES"),
        search=search,
        checker=CheckerBand(WordScorer(), 0.1, 0.9),
    )
    evidence = result.sentences[0].evidence
    assert [e.chunk_id for e in evidence] == [2, 1]  # the deciding excerpt first
    assert evidence[0].page_start == 5 and "deciding sentence" in evidence[0].text


def test_a_guard_overrules_a_sure_checker():
    facts = PaperFacts.from_texts(["The model reaches 80.0 F1 on the test set."])
    result = audit_text(
        "A sure claim reaches 91.3 F1.",
        paper_id="p1",
        verifier=verifier_saying("YES"),
        search=search,
        facts=facts,
        checker=CheckerBand(WordScorer(), 0.1, 0.9),
    )
    s = result.sentences[0]
    assert s.verdict == "unsupported" and "91.3" in s.reasons[0]
    assert s.reasons[-1].startswith("claim checker: supported")


def test_without_a_checker_every_sentence_goes_to_the_verifier():
    verifier = verifier_saying("NO")
    result = audit_text(" ".join(SENTENCES[:5]), paper_id="p1", verifier=verifier, search=search)
    assert verifier.calls == 2 and all(s.verdict == "unsupported" for s in result.sentences)
    assert all(s.p_checker is None for s in result.sentences)
    assert result.sentences[0].reasons == ["verifier: NO"]


def test_the_reason_never_calls_a_no_a_yes_and_a_no_needs_a_second_signal():
    from reader.audit.loop import NO_WITHOUT_SECOND, Judgement, verifier_verdict

    # the checker off: the threshold decides, and the reason says the word was NO
    verdict, reasons = verifier_verdict(Judgement("NO", 0.20), [], True, 0.17)
    assert verdict == "supported"
    assert reasons == ["verifier answered NO, but P(YES) 0.20 ≥ threshold 0.17: accepted"]
    # the checker on: a second signal must agree with a NO's P(YES)
    doubt = ("unsupported", "claim checker decided instead: not supported (P 0.10 < 0.50, its band's middle)")
    verdict, reasons = verifier_verdict(Judgement("NO", 0.20), [], True, 0.17, checker_says=doubt)
    assert verdict == "unsupported"
    assert reasons == ["verifier answered NO, but P(YES) 0.20 ≥ threshold 0.17", NO_WITHOUT_SECOND]
    agreed = "extraction: the passage gives “0.91” for the blank, as the sentence does"
    verdict, reasons = verifier_verdict(
        Judgement("NO", 0.20), [], True, 0.17, checker_says=doubt, confirmed=agreed
    )
    assert verdict == "supported" and reasons[-1] == agreed
    checker = ("supported", "claim checker decided instead: supported (P 0.80 ≥ 0.50, its band's middle)")
    verdict, reasons = verifier_verdict(Judgement("NO", 0.20), [], True, 0.17, checker_says=checker)
    assert verdict == "supported" and reasons[-1].startswith("claim checker agrees")
    verdict, reasons = verifier_verdict(Judgement("NO", 0.10), [], True, 0.17)
    assert verdict == "unsupported" and reasons == ["verifier: NO (P(YES) 0.10 < threshold 0.17)"]


def test_excerpts_give_each_passage_its_best_sentences_with_neighbours():
    filler = " ".join(f"Filler sentence {i} on layout." for i in range(10))
    passages = [
        EvidenceRef(7, 3, 3, f"{filler} SPECTER reaches 80.0 on average. It is then ablated. {filler}"),
        EvidenceRef(8, 4, 4, "Nothing in common here. None at all."),
    ]
    out = excerpts("SPECTER reaches 80.0 on average over tasks.", passages)
    assert [e.chunk_id for e in out] == [7, 8]
    assert "SPECTER reaches 80.0 on average." in out[0].text and "It is then ablated." in out[0].text
    assert out[0].text.count("Filler") <= 3
    assert all(len(e.text) <= 900 for e in out)


def test_readable_is_english_only():
    assert readable("The model reaches 80.0 F1.") and not readable("模型达到了 80.0 F1。")


def test_rewrites_have_labels_by_construction():
    rng = random.Random(3)
    sentence = "Our model outperforms BERT by 2.3 points on SQuAD, reaching 84.7% accuracy."
    facts = PaperFacts.from_texts([sentence])
    swapped = rw.swapped_number(sentence, ["81.2", "84.7", "2.3", "12"], rng)
    assert swapped == sentence.replace("84.7", "81.2") or swapped == sentence.replace("2.3", "81.2")
    assert rw.reversed_relation(sentence, rng) == sentence.replace("outperforms", "underperforms")
    assert rw.moved_relation(sentence, ["BERT", "SQuAD", "GLUE"], rng) in {
        sentence.replace("BERT", "GLUE"),
        sentence.replace("SQuAD", "GLUE"),
    }  # another name of the paper
    assert (
        rw.negation("The effect was significant in both groups.", rng)
        == "The effect was not significant in both groups."
    )
    assert rw.negation("The effect was not significant.", rng) == "The effect was significant."
    changed = rw.changed_number(sentence, rng)
    assert changed != sentence and check_sentence(changed, facts)  # a guard can see it
    assert rw.third_person(sentence, rng).startswith("Their model")
    for kind in (
        "reformatted",
        "rounded",
        "synonyms",
        "paraphrased",
        "reported",
    ):  # supported: the guards agree
        made = getattr(rw, kind)(sentence, rng)
        assert made is None or check_sentence(made, facts) == [], (kind, made)
    assert rw.invented_claim(["BERT", "SQuAD"], [], None, rng)


def test_the_checker_settings_are_validated_and_described():
    from reader.config import describe

    assert not load_settings({"READER_HOME": "/tmp/x"}).checker  # off unless asked for
    settings = load_settings(
        {
            "READER_HOME": "/tmp/x",
            "READER_CHECKER": "on",
            "READER_CHECKER_LOW": "0.2",
            "READER_CHECKER_HIGH": "0.8",
        }
    )
    assert settings.checker and (settings.checker_low, settings.checker_high) == (0.2, 0.8)
    assert dict(describe(settings))["READER_CHECKER"] == "on (sure at P ≤ 0.2 or ≥ 0.8; 0 and 1: never)"
    assert not load_settings({"READER_HOME": "/tmp/x", "READER_CHECKER": "off"}).checker
    with pytest.raises(ConfigError, match="READER_CHECKER_LOW=0.9 must not exceed READER_CHECKER_HIGH=0.5"):
        load_settings({"READER_HOME": "/tmp/x", "READER_CHECKER_LOW": "0.9", "READER_CHECKER_HIGH": "0.5"})
    with pytest.raises(ConfigError, match="READER_CHECKER='maybe'"):
        load_settings({"READER_HOME": "/tmp/x", "READER_CHECKER": "maybe"})


def test_the_groundedness_check_uses_the_checker_too():
    from reader.crag.evidence import Candidate
    from reader.crag.grounded import audit_grounded

    evidence = [Candidate("chunk:1", "The deciding sentence about the result. Its neighbour.", "p1", 1, 5, 5)]
    verifier = verifier_saying("YES")
    grounded, reason, _supported = audit_grounded(
        "A sure claim one. A false claim three.",
        evidence,
        verifier,
        checker=CheckerBand(WordScorer(), 0.1, 0.9),
    )
    assert verifier.calls == 0  # the checker was sure of both
    assert (
        not grounded and "1 of 2 sentences unsupported" in reason and "claim checker: not supported" in reason
    )
    grounded, reason, _supported = audit_grounded(
        "A sure claim one.", evidence, verifier, checker=CheckerBand(WordScorer(), 0.1, 0.9)
    )
    assert grounded and verifier.calls == 0


def test_the_default_band_scores_and_records_but_decides_nothing():
    settings = load_settings({"READER_HOME": "/tmp/x"})
    band = CheckerBand(WordScorer(), settings.checker_low, settings.checker_high)
    verifier = verifier_saying("YES")
    result = audit_text(
        "A sure claim one. A false claim three.",
        paper_id="p1",
        verifier=verifier,
        search=search,
        checker=band,
    )
    assert verifier.calls == 1 and [s.p_checker for s in result.sentences] == [0.97, 0.02]
    assert all(s.verdict == "supported" and s.reasons[-1] == "verifier: YES" for s in result.sentences)
    assert result.sentences[0].evidence[0].chunk_id == 2  # its own best excerpt first all the same
