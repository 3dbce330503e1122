"""The verifier's P(YES) read from token log-probabilities."""

import math

import pytest

from reader.audit.confidence import claim_probabilities, yes_probability
from reader.llm.base import Completion
from reader.store.calls import CallStore


def pos(token, **top):
    top = {k.replace("_", " "): math.log(v) for k, v in top.items()}
    return {"token": token, "logprob": top.get(token, math.log(0.5)), "top": top}


def reply(*lines):
    """Tokens as llama.cpp gives them for "[1] YES\\n[2] NO": '[', '1', ']', ' YES', '\\n' …"""
    tokens = []
    for number, answer in lines:
        tokens += [pos("["), pos(str(number)), pos("]"), answer, pos("\n")]
    return tokens


def test_probability_of_yes_per_numbered_claim():
    tokens = reply((1, pos(" YES", _YES=0.59, _NO=0.41)), (2, pos(" NO", _NO=0.7, _YES=0.3)))
    p = claim_probabilities(tokens, 2)
    assert p == [pytest.approx(0.59), pytest.approx(0.3)]


def test_the_placeholder_copied_literally_answers_the_claims_in_order():
    tokens = [
        pos("[n"),
        pos("]"),
        pos(" YES", _YES=0.8, _NO=0.2),
        pos("\n"),
        pos("["),
        pos("n"),
        pos("]"),
        pos(" NO", _NO=0.6, _YES=0.4),
    ]
    assert claim_probabilities(tokens, 2) == [pytest.approx(0.8), pytest.approx(0.4)]


def test_bare_answers_count_in_order_only_when_nothing_is_numbered():
    bare = [pos("NO", NO=0.7, YES=0.3), pos("\n"), pos("YES", YES=0.9, NO=0.1)]
    assert claim_probabilities(bare, 2) == [pytest.approx(0.3), pytest.approx(0.9)]
    mixed = [pos("YES", YES=0.9, NO=0.1), pos("\n")] + reply((2, pos(" NO", _NO=0.8, _YES=0.2)))
    assert claim_probabilities(mixed, 2) == [None, pytest.approx(0.2)]


def test_an_answer_in_brackets_counts_in_order():
    tokens = [
        pos("["),
        pos("YES", YES=0.8, NO=0.2),
        pos("]\n"),
        pos("["),
        pos("NO", NO=0.9, YES=0.1),
        pos("]"),
    ]
    assert claim_probabilities(tokens, 2) == [pytest.approx(0.8), pytest.approx(0.1)]


def test_mass_of_yes_variants_is_summed_and_other_tokens_ignored():
    p = yes_probability(pos(" YES", _YES=0.5, Yes=0.1, _NO=0.2, _Maybe=0.2))
    assert p == pytest.approx(0.6 / 0.8)


def test_claims_without_an_answer_token_or_without_logprobs_have_none():
    tokens = reply((2, pos(" NO", _NO=0.9, _YES=0.1)))
    assert claim_probabilities(tokens, 3) == [None, pytest.approx(0.1), None]
    assert claim_probabilities(None, 2) == [None, None]
    assert claim_probabilities(reply((7, pos(" YES", _YES=1.0))), 2) == [None, None]  # not asked


def test_logged_llm_caches_logprobs_and_keys_on_them(db):
    from reader.llm.logged import LoggedLLM

    class WithLogprobs:
        model, supports_logprobs, calls = "m", True, []

        def complete(self, messages, *, logprobs=0, **kw):
            self.calls.append(logprobs)
            lp = [{"token": " YES", "logprob": -0.1, "top": {" YES": -0.1}}] if logprobs else None
            return Completion("[1] YES", 5, 3, logprobs=lp)

    inner = WithLogprobs()
    llm = LoggedLLM(inner, "verifier", CallStore(db))
    msgs = [{"role": "user", "content": "check"}]
    first = llm.complete(msgs, logprobs=5)
    again = llm.complete(msgs, logprobs=5)
    plain = llm.complete(msgs)
    assert inner.calls == [5, 0]  # the second call came from the cache; without logprobs: another key
    assert again.cached and again.logprobs == first.logprobs and plain.logprobs is None


def test_an_llm_without_logprobs_support_is_not_asked_for_them(db):
    from reader.audit.loop import audit_text
    from reader.llm.scripted import ScriptedLLM

    verifier = ScriptedLLM(lambda prompt: "[1] YES")  # complete() takes no logprobs argument
    result = audit_text("It holds.", verifier=verifier, fallback_text="It holds, says the paper.")
    assert result.sentences[0].verdict == "supported" and result.sentences[0].p_yes is None


class _Unsure:
    """A verifier that answers YES with P(YES) 0.6 to every claim, with log-probabilities."""

    model, supports_logprobs = "unsure", True

    def complete(self, messages, *, logprobs=0, **kw):
        tokens = []
        for n in (1, 2, 3, 4):
            tokens += [pos("["), pos(str(n)), pos("]"), pos(" YES", _YES=0.6, _NO=0.4), pos("\n")]
        return Completion("\n".join(f"[{n}] YES" for n in (1, 2, 3, 4)), logprobs=tokens)


def test_the_threshold_on_p_yes_decides_and_is_a_setting(monkeypatch, tmp_path):
    from reader.audit.loop import audit_text
    from reader.config import load_settings
    from reader.errors import ConfigError

    def verdict(threshold):
        result = audit_text(
            "It holds.", verifier=_Unsure(), fallback_text="It holds.", yes_threshold=threshold
        )
        return result.sentences[0].verdict, result.sentences[0].reasons

    assert verdict(0.5)[0] == "supported"
    flagged, reasons = verdict(0.7)
    assert (
        flagged == "unsupported"
        and "verifier answered YES, but P(YES) 0.60 < threshold 0.70: not accepted" in reasons
    )

    monkeypatch.setenv("READER_HOME", str(tmp_path))
    monkeypatch.setenv("READER_VERIFY_THRESHOLD", "0.7")
    assert load_settings().verify_threshold == 0.7
    monkeypatch.setenv("READER_VERIFY_THRESHOLD", "70")
    with pytest.raises(ConfigError, match="READER_VERIFY_THRESHOLD=70.0 must lie between 0 and 1"):
        load_settings()


def test_an_answer_token_without_a_usable_logprob_has_no_probability():
    """A YES whose own log-probability is unusable (NaN) beside a usable NO alternative: the
    answer word decides, never P(YES) 0.00."""
    position = {"token": " YES", "logprob": float("nan"), "top": {" YES": float("nan"), " NO": -3.0}}
    assert yes_probability(position) is None
    assert claim_probabilities(reply((1, position)), 1) == [None]
    # a usable YES among the alternatives still counts
    assert yes_probability({"token": " YES", "logprob": None, "top": {" YES": -0.1, " NO": -3.0}}) > 0.9
