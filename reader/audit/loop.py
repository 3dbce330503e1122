"""The Self-RAG audit: verify every sentence, regenerate while too much is unsupported, mark the rest.

`audit_text` is one audit pass over a text:

1. split into sentences (reader.text.split); sentences already verified
   (`known`, keyed by sentence text) keep their verdicts, and a sentence that
   appears twice is verified once;
2. each remaining sentence is searched on its own (top 3 hits); with a claim
   checker (reader.audit.checking), the trained cross-encoder scores it against
   each of its passages' excerpts, keeps the best, and decides the sentences it
   is sure of (no verifier call); each sentence keeps its own excerpts as its
   evidence, the deciding one first; a sentence that restates one sentence of its
   excerpts in the paper's words (reader.audit.restated) is supported without a
   verifier call too, in the deep read's own text, and so is a sentence the tool stated
   itself from a rule over the paper (`stated`: its finding is the reason);
   the others go to the verifier in batches of 4, each sentence with its own
   excerpts right under it (reader.audit.evidence), and one control claim false
   by construction (reader.audit.control). Fallback: the best excerpt of the
   first 3,000 characters of the paper, also when the search fails; with no text
   at all there is no call and the claim is unsupported;
3. batches are verified concurrently, at most `max_workers` at a time, so a
   pass takes about as long as its slowest batch;
4. the verdict: where the verifier gives token log-probabilities, a claim is
   accepted when its P(YES) reaches `yes_threshold` (reader.audit.confidence),
   else by its first word; the deterministic guards (reader.audit.guards) run on
   every sentence: a number, name or citation missing from the paper makes it
   unsupported even when the verifier said YES. A reply that accepts the control
   claim, or leaves it out, is not trusted: its YES answers count for nothing (the
   checker's score decides where there is one, else the sentence is UNCHECKED).
   The reasons are stored with the verdict;
5. a reply that answers none of its batch's claims is a failed call: it is
   asked again (VERIFY_ATTEMPTS in all), and a verifier wrapped in the call log
   (reader.llm.logged, `accept=`) neither caches it nor serves such a reply from
   the cache. When no attempt answers anything, the batch's sentences are
   UNCHECKED (unless a guard makes them unsupported): neither supported nor
   flagged. A reply that answers some claims stands, and the claims it leaves out
   are asked about once more (one call, those claims only); a claim left out of
   that reply too is UNCHECKED as well. (UNANSWERED, "left out, counted as
   supported", is what earlier versions recorded; it is still read and shown.)

Evidence comes from one of two places:
- `search(query, paper_id) -> list[SearchHit]`, the paper's own index; or
- `evidence_for(sentences) -> list[EvidenceRef]`, an override for auditing
  against a fixed set of passages (e.g. an answer against the passages it was
  generated from). `paper_id` is then only a label for the call log.

`audit_loop` wraps a generator: flagged_ratio > 0.3 triggers a regeneration
that is told which sentences had no support, at most twice (unchecked sentences
are not flagged: a broken verifier is no reason to rewrite, and they are asked
about again in the next pass); then every sentence still unsupported, and every
unchecked one, gets the prefix `[待验证] ` (first occurrence only).
"""

from __future__ import annotations

import dataclasses
import re
import time
from collections.abc import Callable, Mapping
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, field

from reader.audit.checking import CheckerBand, CheckerView, check_sentences
from reader.audit.confidence import claim_probabilities
from reader.audit.control import Control, control_claim, control_position
from reader.audit.decided import (
    CHECKED,
    CHECKER,
    GUARD,
    RESTATED,
    STATED,
    TOOL,
    VERIFIER,
    decision_of,
    settle,
)
from reader.audit.decided import EXTRACTION as BY_EXTRACTION
from reader.audit.evidence import claim_evidence, excerpts
from reader.audit.extraction import agreement, check_clozes, cloze_for, finding
from reader.audit.guards import PaperFacts, check_sentence
from reader.audit.restated import restated_source
from reader.audit.specific import NOTHING_SPECIFIC, says_nothing_specific
from reader.audit.verify import NO_EVIDENCE_CHARS, EvidenceRef, build_messages, parse_answers
from reader.config.settings import VERIFY_THRESHOLD
from reader.errors import ReaderError
from reader.llm.base import Completion, Message, capabilities_of, supports_accept, supports_logprobs
from reader.text.split import sentence_spans, split_sentences, without_label

BATCH_SIZE = 4
EVIDENCE_PER_BATCH = 3
FLAG_THRESHOLD = 0.3
MAX_REGENERATIONS = 2
MARK = "[待验证] "
TOP_LOGPROBS = 5  # alternatives per answer token, enough to find both YES and NO
# Calls per batch while the reply answers none of its claims: the call and one retry.
VERIFY_ATTEMPTS = 2

# unsupported: flagged (counts in the flagged ratio, gets [待验证]);
# unchecked: no reply in VERIFY_ATTEMPTS answered any claim of its batch, or the reply and the
# follow-up for the claims it left out both left this one out (neither supported nor flagged;
# gets [待验证]);
# unanswered: recorded by earlier versions for a claim left out of a reply that answered others
# (counted as supported); no longer given, still read and shown.
SUPPORTED, UNSUPPORTED, UNANSWERED, UNCHECKED = "supported", "unsupported", "unanswered", "unchecked"
UNREADABLE = f"the verifier's reply could not be read ({VERIFY_ATTEMPTS} attempts): not checked"
LEFT_OUT = "the verifier left this claim out twice: not checked"
NO_PASSAGE = "no passage matched; checked against the paper's opening text"
RESTATES = "restates a sentence of the paper in its words (no verifier call)"
_QUOTED = re.compile(r"“[^”]*”")
NO_WITHOUT_SECOND = (
    "an explicit NO is not overruled without a second signal (claim checker or extraction) agreeing"
)

Search = Callable[[str, str | None], list]
EvidenceFor = Callable[[list[str]], list[EvidenceRef]]
PromptFor = Callable[[list[str], list[EvidenceRef]], list[Message]]

__all__ = [
    "AuditRequest",
    "AuditResult",
    "EvidenceRef",
    "LoopResult",
    "SentenceResult",
    "audit_loop",
    "audit_text",
    "audit_sentences",
    "run_audit",
    "mark_unsupported",
    "MARK",
    "SUPPORTED",
    "UNSUPPORTED",
    "UNANSWERED",
    "UNCHECKED",
]


@dataclass
class SentenceResult:
    text: str
    verdict: str  # supported | unsupported | unanswered | unchecked
    llm_answer: str  # "YES" | "NO" | "" (the verifier did not answer)
    reasons: list[str] = field(default_factory=list)
    evidence: list[EvidenceRef] = field(default_factory=list)
    reused: bool = False  # carried over from an earlier pass, no call made
    judgement: Judgement | None = None  # everything the verifier said
    decided_by: str = ""  # who decided (reader.audit.decided): verifier, checker, guard, restated, tool …
    checklist_item: str = ""  # the checklist item a tool's finding states
    # unsupported because the sentence before it is (reader.deepread.follow_on): a verdict that
    # depends on that sentence, which a rewrite may change, so it is decided again, not reused
    follow_on: bool = False

    @property
    def p_yes(self) -> float | None:
        """The verifier's probability of YES, when it gave log-probabilities."""
        return self.judgement.p_yes if self.judgement else None

    @property
    def p_checker(self) -> float | None:
        """The claim checker's P(supported), when it scored this sentence."""
        return self.judgement.p_checker if self.judgement else None

    @property
    def flagged(self) -> bool:
        return self.verdict == UNSUPPORTED

    def to_json(self) -> dict:
        return {
            "text": self.text,
            "verdict": self.verdict,
            "p_yes": self.p_yes,
            "p_checker": self.p_checker,
            "reasons": list(self.reasons),
            "evidence": [e.to_json() for e in self.evidence],
            "decided": decision_of(self),
        }


@dataclass
class AuditResult:
    sentences: list[SentenceResult]
    llm_calls: int = 0
    prompt_tokens: int = 0
    completion_tokens: int = 0
    seconds: float = 0.0

    @property
    def n_flagged(self) -> int:
        return sum(1 for s in self.sentences if s.flagged)

    @property
    def n_checked(self) -> int:
        """The sentences a model or a guard checked: the flagged ratio's denominator (restated
        sentences and the tool's findings are passed by rule and counted apart)."""
        return sum(1 for s in self.sentences if s.decided_by in CHECKED or not s.decided_by)

    @property
    def flagged_ratio(self) -> float:
        return self.n_flagged / self.n_checked if self.n_checked else 0.0

    @property
    def flagged(self) -> list[str]:
        """Distinct unsupported sentences, in order of first appearance."""
        return list(dict.fromkeys(s.text for s in self.sentences if s.flagged))

    @property
    def n_unanswered(self) -> int:
        return sum(1 for s in self.sentences if s.verdict == UNANSWERED)

    @property
    def n_unchecked(self) -> int:
        return sum(1 for s in self.sentences if s.verdict == UNCHECKED)

    @property
    def unchecked(self) -> list[str]:
        """Distinct unchecked sentences, in order of first appearance."""
        return list(dict.fromkeys(s.text for s in self.sentences if s.verdict == UNCHECKED))

    @property
    def to_mark(self) -> list[str]:
        """Distinct sentences that get the [待验证] mark: unsupported or unchecked."""
        return list(dict.fromkeys(s.text for s in self.sentences if s.verdict in (UNSUPPORTED, UNCHECKED)))


def hits_to_evidence(hits: list) -> list[EvidenceRef]:
    """A search's best hits (EVIDENCE_PER_BATCH of them) as evidence, the best first."""
    ranked = sorted(hits, key=lambda h: h.score, reverse=True)[:EVIDENCE_PER_BATCH]
    return [EvidenceRef(h.chunk_id, h.page_start, h.page_end, h.text) for h in ranked]


def _own_passages(claim, paper_id, search, evidence_for) -> tuple[list[EvidenceRef], str]:
    """The claim's own passages (its top 3 hits, or the fixed passages) and, when the search
    failed, why."""
    try:
        if evidence_for is not None:
            return list(evidence_for([claim])), ""
        if search is not None:
            return hits_to_evidence(search(claim, paper_id)), ""
        return [], ""
    except Exception as exc:  # a broken index must not lose the read: check against the opening text
        return [], f"search failed ({type(exc).__name__}: {exc}); checked against the paper's opening text"


def _fallback(text: str) -> EvidenceRef:
    return EvidenceRef(None, 1, 1, text[:NO_EVIDENCE_CHARS])


@dataclass
class _BatchOutcome:
    judgements: list[Judgement]
    distrust: list[str]  # per claim: why the reply that answered it was not trusted, or ""
    calls: int = 0
    prompt_tokens: int = 0
    completion_tokens: int = 0
    readable: bool = True  # False: no attempt answered any of the batch's claims


@dataclass
class Judgement:
    """What the verifier said about one claim."""

    answer: str | None  # "YES" | "NO" | None (not answered)
    p_yes: float | None = None
    p_checker: float | None = None  # the claim checker's P(supported), when it scored the claim

    def accepted(self, threshold: float | None) -> bool | None:
        return _accepted(self.answer, self.p_yes, threshold)

    @classmethod
    def from_dict(cls, item: dict) -> Judgement:
        """From a dict with the fields' names (as the benchmarks save them)."""
        return cls(item["answer"], item["p_yes"])


def _accepted(answer, p_yes, threshold) -> bool | None:
    if threshold is not None and p_yes is not None:
        return p_yes >= threshold
    return None if answer is None else answer == "YES"


def _read_reply(completion: Completion, n_claims: int) -> tuple[list[str | None], list[float | None]]:
    """Each claim's answer (YES/NO/None) and P(YES) (None without log-probabilities)."""
    return parse_answers(completion.text, n_claims), claim_probabilities(completion.logprobs, n_claims)


def _any_answered(answers: list[str | None], p_values: list[float | None], n_claims: int) -> bool:
    return any(a is not None or p is not None for a, p in zip(answers[:n_claims], p_values[:n_claims]))


def answers_any(completion: Completion, n_claims: int, control_at: int | None = None) -> bool:
    """Does the reply answer at least one of its `n_claims` claims (by a word or a P(YES)), the
    control claim at `control_at` left aside? A reply that does not is a failed call: retried,
    never cached."""
    answers, p_values = _read_reply(completion, n_claims)
    if control_at is not None:
        del answers[control_at], p_values[control_at]
    return _any_answered(answers, p_values, len(answers))


def _distrust(control: Control | None, said: Judgement | None, threshold: float | None) -> str:
    """Why a reply is not trusted, or "" when it rejected the batch's control claim (or the batch
    has none). Its answer word decides where it gave one: a 1.5B verifier's P(YES) for a false
    claim often reaches the low threshold real claims are accepted at (195 of 203 development
    sentences sat in batches whose control reached it), while an obedient verifier writes YES."""
    if control is None or said is None:
        return ""
    rejected = said.answer == "NO" if said.answer is not None else said.accepted(threshold) is False
    if rejected:
        return ""
    how = "answered YES to" if said.answer == "YES" or said.accepted(threshold) else "did not answer"
    shown = control.claim if len(control.claim) <= 160 else control.claim[:157].rstrip() + "…"
    return (
        f"the verifier {how} a control claim that is false by construction: its answers were not "
        f"trusted (control, {control.kind}: “{shown}”)"
    )


def _verify_batch(batch: list[str], shown: list[list[EvidenceRef]], request: AuditRequest) -> _BatchOutcome:
    """Ask the verifier about a batch: each claim with its own evidence (`shown`), and a control
    claim false by construction (reader.audit.control) among them. A claim with no evidence is NO
    without a call. A reply that answers nothing is asked again (VERIFY_ATTEMPTS in all); the
    claims a readable reply left out are asked once more, those only."""
    outcome = _BatchOutcome([Judgement("NO") for _ in batch], [""] * len(batch))
    todo = [i for i, own in enumerate(shown) if own]
    if not todo:  # nothing to check against: unsupported by definition, no call needed
        return outcome
    claims, evidence = [batch[i] for i in todo], [shown[i] for i in todo]
    control = control_claim(claims, evidence) if request.with_control else None

    def ask(which: list[int]) -> tuple[list[str | None], list[float | None], str]:
        return _ask_verifier(
            [claims[i] for i in which], [evidence[i] for i in which], control, request, outcome
        )

    everything = list(range(len(claims)))
    for _attempt in range(VERIFY_ATTEMPTS):
        answers, p_values, distrust = ask(everything)
        outcome.readable = _any_answered(answers, p_values, len(claims))
        if outcome.readable:
            break
    distrusts = [distrust] * len(claims)
    missing = [i for i, (a, p) in enumerate(zip(answers, p_values)) if a is None and p is None]
    if outcome.readable and missing:
        *again, distrust = ask(missing)
        for i, answer, p_yes in zip(missing, *again):
            answers[i], p_values[i], distrusts[i] = answer, p_yes, distrust
    for k, i in enumerate(todo):
        outcome.judgements[i] = Judgement(answers[k], p_values[k])
        outcome.distrust[i] = distrusts[k]
    return outcome


def _ask_verifier(
    claims: list[str],
    evidence: list[list[EvidenceRef]],
    control: Control | None,
    request: AuditRequest,
    outcome: _BatchOutcome,
) -> tuple[list[str | None], list[float | None], str]:
    """One verify call: each claim's answer and P(YES), and why the reply is not trusted ("" when
    it rejected the control claim placed among the claims). The call is counted in `outcome`."""
    asked, asked_evidence, at = list(claims), list(evidence), None
    if control is not None:
        at = control_position(asked)
        asked.insert(at, control.claim)
        asked_evidence.insert(at, [control.evidence])
    verifier = request.verifier
    extra: dict = {"logprobs": TOP_LOGPROBS} if supports_logprobs(verifier) else {}
    if supports_accept(verifier):  # the call log and cache: keep unusable replies out of the cache
        extra["accept"] = lambda completion: answers_any(completion, len(asked), at)
    completion = verifier.complete(
        request.prompt_for(asked, asked_evidence),
        temperature=0.0,
        max_tokens=8 * len(asked) + 16,
        stage=request.stage,
        paper_id=request.paper_id,
        **extra,
    )
    outcome.calls += 1
    outcome.prompt_tokens += completion.prompt_tokens
    outcome.completion_tokens += completion.completion_tokens
    answers, p_values = _read_reply(completion, len(asked))
    if at is None:
        return answers, p_values, ""
    said = Judgement(answers.pop(at), p_values.pop(at))
    return answers, p_values, _distrust(control, said, request.threshold)


def _verifier_said(j: Judgement, threshold: float | None) -> str:
    """What the verifier answered, in words that never call a NO a YES."""
    accepted = j.accepted(threshold)
    if accepted is None:
        return "verifier did not answer"
    if j.p_yes is None:
        return f"verifier: {j.answer}"
    p, t = f"{j.p_yes:.2f}", f"{threshold:.2f}"
    if accepted and j.answer == "YES":
        return f"verifier: YES (P(YES) {p} ≥ threshold {t})"
    if not accepted and j.answer == "NO":
        return f"verifier: NO (P(YES) {p} < threshold {t})"
    said = f"answered {j.answer}" if j.answer else "gave no answer word"
    return (
        f"verifier {said}, but P(YES) {p} ≥ threshold {t}: accepted"
        if accepted
        else f"verifier {said}, but P(YES) {p} < threshold {t}: not accepted"
    )


def verifier_verdict(
    j: Judgement,
    guard_reasons: list[str],
    has_evidence: bool,
    threshold: float | None,
    readable: bool = True,
    distrust: str = "",
    checker_says: tuple[str, str] | None = None,
    confirmed: str = "",
) -> tuple[str, list[str]]:
    """`distrust`: why the reply that answered this claim is not trusted (it passed the control
    claim), or ""; then a YES counts for nothing, and `checker_says` (verdict, reason), the claim
    checker's call, decides when there is one, else the claim is unchecked. With the checker on
    (`checker_says` given), an explicit NO whose P(YES) reaches the threshold is accepted only
    with a second signal agreeing: the checker's call, or `confirmed` (an extraction that gave
    the sentence's own number or side). With it off, the threshold decides as before: refusing
    every such NO flagged 30 of 104 faithful development sentences (docs/measurements/audit.md)."""
    reasons = list(guard_reasons)
    if not has_evidence:
        reasons.append("no evidence found in the paper")
    if not readable:  # a guard's finding stands; otherwise nothing was checked
        return (UNSUPPORTED if guard_reasons else UNCHECKED), reasons + [UNREADABLE]
    accepted = j.accepted(threshold)
    said = _verifier_said(j, threshold)
    if accepted is False:
        return UNSUPPORTED, reasons + [said]
    if guard_reasons:
        return UNSUPPORTED, reasons + [said] + ([distrust] if distrust else [])
    if accepted is None:  # left out of the reply and of the follow-up for the claims it left out
        return UNCHECKED, reasons + [LEFT_OUT]
    if distrust:
        if checker_says is None:
            return UNCHECKED, reasons + [said, distrust]
        verdict, why = checker_says
        return verdict, reasons + [said, distrust, why]
    if j.answer == "NO" and checker_says is not None:  # accepted on its P(YES) against its word:
        said = said.removesuffix(": accepted")  # with the checker on, a second signal must agree
        if confirmed:
            return SUPPORTED, reasons + [said, confirmed]
        if checker_says is not None and checker_says[0] == SUPPORTED:
            return SUPPORTED, reasons + [said, checker_says[1].replace("decided instead", "agrees")]
        return UNSUPPORTED, reasons + [said, NO_WITHOUT_SECOND]
    return SUPPORTED, reasons + [said] + ([confirmed] if confirmed else [])


def _checker_says(view: CheckerView, band: CheckerBand | None) -> tuple[str, str] | None:
    """The claim checker's call on a sentence it was unsure of, at the middle of its band: what
    decides a YES the verifier gave in a reply that was not trusted. None: no score."""
    if band is None or view.p_supported is None:
        return None
    p, middle = view.p_supported, (band.low + band.high) / 2
    verdict, said = (
        (SUPPORTED, "supported (P {:.2f} ≥") if p >= middle else (UNSUPPORTED, "not supported (P {:.2f} <")
    )
    return verdict, f"claim checker decided instead: {said.format(p)} {middle:.2f}, its band's middle)"


def _extraction_checks(sentences, views, guard, verifier, paper_id) -> tuple[dict[str, str], set[str], int]:
    """Each sentence's number or comparison asked of the verifier as a blank to fill from its best
    excerpt (reader.audit.extraction): a contradiction is added to its guard reasons; returns
    the confirmations (sentence: reason), the contradicted sentences and the calls made."""
    clozes = [(s, c) for s in sentences if (c := cloze_for(without_label(s), views[s].evidence[0].text))]
    results, calls = check_clozes([c for _, c in clozes], verifier, paper_id=paper_id)
    confirmed, contradicted = {}, set()
    for (sentence, cloze), (outcome, answer) in zip(clozes, results):
        if outcome == "disagree":
            guard[sentence].append(finding(cloze, answer))
            contradicted.add(sentence)
        elif outcome == "agree":
            confirmed[sentence] = agreement(cloze, answer)
    return confirmed, contradicted, calls


def _checker_verdict(view: CheckerView, guard_reasons: list[str], band: CheckerBand) -> tuple[str, list[str]]:
    """The verdict of a sentence the claim checker was sure of (no verifier call)."""
    reasons = list(guard_reasons) + [view.reason(band)]
    if view.decided == "unsupported" or guard_reasons:
        return UNSUPPORTED, reasons
    return SUPPORTED, reasons


def _restated_verdict(source: str, guard_reasons: list[str]) -> tuple[str, list[str]]:
    """The verdict of a sentence that restates one of the paper's (no verifier call)."""
    quoted = source if len(source) <= 160 else source[:157].rstrip() + "…"
    reasons = list(guard_reasons) + [f"{RESTATES}: “{quoted}”"]
    return (UNSUPPORTED if guard_reasons else SUPPORTED), reasons


@dataclass(frozen=True)
class AuditRequest:
    """How one audit pass checks its sentences (`audit_sentences` has the whole story).

    Evidence: each sentence is searched on its own (`search`, top 3 passages), or its passages
    come from `evidence_for(sentences)`; without a passage it is checked against the first
    characters of `fallback_text`. `paper_id` scopes the search and labels the calls.
    The verifier: batches of 4 under `stage`, each written by `prompt_for(claims, evidence)`
    (prompts/verify.j2), at most `max_workers` at once, with one control claim false by
    construction when `control` (and the checker band's `control`) says so; a claim is accepted
    when its P(YES) reaches `yes_threshold` (None: the declared default, READER_VERIFY_THRESHOLD).
    `checker`: the claim checker's band and the extraction checks (reader.audit.checking).
    The guards: `facts`, the paper's numbers, names and citations (reader.audit.guards), and
    `objections(sentence)`, more guard reasons. The deep read's own text: `require_specific`,
    `accept_restatements` and `stated` (sentence: the rule's finding it was written from).
    `known`: verdicts of an earlier pass, kept without a call."""

    verifier: object
    paper_id: str | None = None
    search: Search | None = None
    evidence_for: EvidenceFor | None = None
    fallback_text: str = ""
    stage: str = "verify"
    yes_threshold: float | None = None
    prompt_for: PromptFor = build_messages
    control: bool = True
    max_workers: int = 4
    checker: CheckerBand | None = None
    facts: PaperFacts | None = None
    objections: Callable[[str], list[str]] | None = None
    require_specific: bool = False
    accept_restatements: bool = False
    stated: Mapping[str, str] | None = None
    known: Mapping[str, SentenceResult] | None = None

    @property
    def threshold(self) -> float:
        return VERIFY_THRESHOLD if self.yes_threshold is None else self.yes_threshold

    @property
    def with_control(self) -> bool:
        return self.control and (self.checker is None or self.checker.control)


@dataclass
class _Pass:
    """What a pass knows of its new sentences before the verifier is asked."""

    todo: list[str]  # the sentences to check, each once
    passages: dict[str, list[EvidenceRef]]  # each sentence's own passages (none: the fallback)
    fallback: list[EvidenceRef]
    notes: dict[str, str]  # a note for the reasons: the search failed, or no passage matched
    views: dict[str, CheckerView]  # what the claim checker made of each, its excerpts best first
    stated: dict[str, object] = field(default_factory=dict)  # written by the tool from a finding
    restated: dict[str, str] = field(default_factory=dict)  # sentence: the paper's sentence
    guard: dict[str, list[str]] = field(default_factory=dict)  # the guards' reasons
    confirmed: dict[str, str] = field(default_factory=dict)  # an extraction agreed: its reason
    contradicted: set[str] = field(default_factory=set)  # an extraction disagreed
    extraction_calls: int = 0

    def evidence(self, sentence: str) -> list[EvidenceRef]:
        return self.views[sentence].evidence if self.passages[sentence] else self.fallback

    def decided_without_verifier(self, sentence: str) -> bool:
        return (
            self.views[sentence].decided is not None
            or sentence in self.restated
            or sentence in self.stated
            or sentence in self.contradicted
            or bool(self.guard.get(sentence))  # unsupported whatever the verifier would say
        )


def audit_text(text: str, **request) -> AuditResult:
    """One audit pass over `text` (see the module docstring); keyword arguments as `AuditRequest`."""
    return audit_sentences(split_sentences(text), **request)


def audit_sentences(sentences: list[str], **request) -> AuditResult:
    """Verify already split sentences; keyword arguments as `AuditRequest`. Each sentence is
    searched on its own (top 3 passages); with a `checker` (reader.audit.checking), the trained
    claim checker scores it against each of its passages' excerpts and decides where it is sure;
    the rest go to the verifier in batches of 4, in this order. The verifier sees each claim with
    its own best excerpts under it (reader.audit.evidence), and with `control` one more claim,
    false by construction (reader.audit.control): a reply that does not reject it is not trusted,
    its YES answers decided by the checker's score where there is one, else unchecked. With
    log-probabilities, the verifier accepts a claim when its P(YES) reaches the threshold;
    otherwise its first word decides.
    Each sentence keeps its own evidence, the excerpt that decided first. With
    `require_specific` (the deep read's own text), a sentence that names nothing of the paper
    is unsupported (reader.audit.specific; a restatement and a list's lead-in ending in a colon
    excepted); with `accept_restatements` (the deep read's own text),
    a sentence restating one sentence of its excerpts in the paper's words is supported without a
    verifier call (reader.audit.restated). A sentence in `stated` (sentence: what a rule found,
    reader.deepread.checked) was written by the tool from that finding: supported, the finding its
    reason, unless a guard objects. `objections(sentence)` gives more guard reasons (the deep
    read's: a claimed absence the paper's text contradicts, reader.deepread.checked)."""
    return run_audit(sentences, AuditRequest(**request))


def run_audit(sentences: list[str], request: AuditRequest) -> AuditResult:
    """`audit_sentences` with its request made."""
    start = time.perf_counter()
    known = request.known or {}
    todo = [s for s in dict.fromkeys(sentences) if s not in known]
    checks = _first_checks(todo, request)
    asked = [s for s in todo if not checks.decided_without_verifier(s)]
    batches = [asked[i : i + BATCH_SIZE] for i in range(0, len(asked), BATCH_SIZE)]
    outcomes = _verify_batches(batches, checks, request)
    result = AuditResult(sentences=[], llm_calls=checks.extraction_calls)
    fresh = {s: _decided(s, checks, request.checker) for s in todo if s not in asked}
    for batch, outcome in zip(batches, outcomes):
        result.llm_calls += outcome.calls
        result.prompt_tokens += outcome.prompt_tokens
        result.completion_tokens += outcome.completion_tokens
        for sentence, j, distrust in zip(batch, outcome.judgements, outcome.distrust):
            fresh[sentence] = _verified(sentence, j, distrust, outcome.readable, checks, request)
    result.sentences = [fresh[s] if s in fresh else _reused(known[s]) for s in sentences]
    result.seconds = time.perf_counter() - start
    return result


def _first_checks(todo: list[str], request: AuditRequest) -> _Pass:
    """Each sentence's passages and the checker's view of them, then what is decided before the
    verifier: the tool's own sentences, restatements, the guards and the extraction checks."""
    found = [_own_passages(s, request.paper_id, request.search, request.evidence_for) for s in todo]
    text = request.fallback_text
    fallback = [_fallback(text)] if text and text.strip() else []
    passages = {s: p for s, (p, _) in zip(todo, found)}
    notes = {s: note or (NO_PASSAGE if fallback and not p else "") for s, (p, note) in zip(todo, found)}
    own = [excerpts(s, passages[s] or fallback) for s in todo]
    views = dict(zip(todo, check_sentences(todo, own, request.checker)))
    checks = _Pass(todo, passages, fallback, notes, views)
    checks.stated = {s: finding for s, finding in (request.stated or {}).items() if s in views}
    if request.accept_restatements:
        checks.restated = {
            s: source
            for s in todo
            if s not in checks.stated
            and views[s].decided is None
            and (source := restated_source(without_label(s), [e.text for e in views[s].evidence])) is not None
        }
    checks.guard = {s: _guard_reasons(s, checks, request) for s in todo}
    if request.checker is not None and request.checker.extraction:
        extracted = [
            s
            for s in todo
            if s not in checks.stated
            and s not in checks.restated
            and passages[s]
            and not checks.guard[s]
            and views[s].decided != UNSUPPORTED
        ]
        checks.confirmed, checks.contradicted, checks.extraction_calls = _extraction_checks(
            extracted, views, checks.guard, request.verifier, request.paper_id
        )
    return checks


def _guard_reasons(sentence: str, checks: _Pass, request: AuditRequest) -> list[str]:
    """What the guards object to in a sentence: facts missing from the paper, the caller's
    objections, and (`require_specific`) naming nothing of the paper."""
    facts = request.facts
    claim = without_label(sentence)  # a bold list label ("**Page Splitting**:") is a topic name
    if sentence in checks.stated:  # what the tool quotes is the paper's text: its own words are checked
        claim = _QUOTED.sub("“…”", claim)
    reasons = (
        check_sentence(claim, facts, restates=checks.restated.get(sentence, "")) if facts is not None else []
    )
    if request.objections is not None and sentence not in checks.restated:
        # (a restatement is the paper's own claim: "Yet, existing corpora are not without their
        # limitations" is no claimed lack of a limitations section)
        reasons += request.objections(sentence)
    # a restatement says what a sentence of the paper says; a lead-in ("… as follows:")
    # introduces the list items that carry the content
    lead_in = sentence.rstrip().endswith((":", "："))
    if request.require_specific and facts is not None and sentence not in checks.restated and not lead_in:
        if says_nothing_specific(claim, facts):
            reasons.append(NOTHING_SPECIFIC)
    return reasons


def _verify_batches(batches: list[list[str]], checks: _Pass, request: AuditRequest) -> list[_BatchOutcome]:
    """The verifier's outcome for each batch, at most `max_workers` batches at a time."""

    chars = capabilities_of(request.verifier).claim_evidence_chars

    def run(batch):
        shown = [claim_evidence(checks.views[s].evidence, s, chars) for s in batch]
        return _verify_batch(batch, shown, request)

    if len(batches) > 1 and request.max_workers > 1:
        with ThreadPoolExecutor(max_workers=min(request.max_workers, len(batches))) as pool:
            return list(pool.map(run, batches))
    return [run(b) for b in batches]


def _decided(sentence: str, checks: _Pass, band: CheckerBand | None) -> SentenceResult:
    """The verdict of a sentence decided without the verifier: the tool's own, a restatement,
    contradicted by an extraction or a guard, or the claim checker sure of it."""
    view, guard = checks.views[sentence], checks.guard[sentence]
    evidence, item = checks.evidence(sentence), ""
    if sentence in checks.stated:
        how, finding = TOOL, checks.stated[sentence]
        item = getattr(finding, "item", "")
        if hasattr(finding, "evidence"):  # the checklist item's own passage, or none: not a search's
            evidence = list(finding.evidence)
        verdict = UNSUPPORTED if guard else SUPPORTED
        reasons = guard + [f"{STATED}: {getattr(finding, 'finding', finding)}"]
    elif sentence in checks.restated:
        how, source = RESTATED, checks.restated[sentence]
        verdict, reasons = _restated_verdict(source, guard)
        evidence = sorted(view.evidence, key=lambda e: source not in e.text)
    elif view.decided is None:  # contradicted by an extraction, or a guard objects
        how = BY_EXTRACTION if sentence in checks.contradicted else GUARD
        verdict, reasons = UNSUPPORTED, list(guard)
    else:
        how = CHECKER
        verdict, reasons = _checker_verdict(view, guard, band)
        if verdict == SUPPORTED and sentence in checks.confirmed:
            reasons.append(checks.confirmed[sentence])
    if checks.notes[sentence]:
        reasons.append(checks.notes[sentence])
    return SentenceResult(
        sentence,
        verdict,
        "",
        reasons,
        evidence,
        judgement=Judgement(None, p_checker=view.p_supported),
        decided_by=settle(how, verdict, guard, reasons),
        checklist_item=item,
    )


def _verified(
    sentence: str, j: Judgement, distrust: str, readable: bool, checks: _Pass, request: AuditRequest
) -> SentenceResult:
    """The verdict of a sentence the verifier was asked about."""
    view, guard, band = checks.views[sentence], checks.guard[sentence], request.checker
    verdict, reasons = verifier_verdict(
        j,
        guard,
        bool(view.evidence),
        request.threshold,
        readable,
        distrust,
        _checker_says(view, band),
        checks.confirmed.get(sentence, ""),
    )
    if band is not None and band.scorer is not None:
        reasons.insert(len(guard), view.reason(band))
    if checks.notes[sentence]:
        reasons.append(checks.notes[sentence])
    j.p_checker = view.p_supported
    return SentenceResult(
        sentence,
        verdict,
        j.answer or "",
        reasons,
        checks.evidence(sentence),
        judgement=j,
        decided_by=settle(VERIFIER, verdict, guard, reasons),
    )


def _reused(old: SentenceResult) -> SentenceResult:
    """A verdict of an earlier pass, carried over without a call."""
    return dataclasses.replace(old, reasons=list(old.reasons), evidence=list(old.evidence), reused=True)


def mark_unsupported(text: str, flagged: list[str]) -> str:
    """Prefix the first occurrence of each given sentence (the unsupported and unchecked ones,
    `AuditResult.to_mark`) with `[待验证] `; delete nothing."""
    wanted = set(flagged)
    inserts: list[int] = []
    for s, e in sentence_spans(text):
        sentence = text[s:e]
        if sentence in wanted:
            wanted.discard(sentence)
            if not text[max(0, s - len(MARK)) : s] == MARK and not sentence.startswith(MARK.strip()):
                inserts.append(s)
    for pos in reversed(inserts):
        text = text[:pos] + MARK + text[pos:]
    return text


@dataclass
class Iteration:
    text: str
    audit: AuditResult
    generation_prompt_tokens: int = 0
    generation_completion_tokens: int = 0
    generation_calls: int = 1


@dataclass
class LoopResult:
    iterations: list[Iteration]  # the drafts kept, the last one final
    final_text: str
    rejected: list[Iteration] = field(default_factory=list)  # rewrites that were worse
    rewrite_notes: list[str] = field(default_factory=list)  # why a rewrite was not kept
    failed: int = 0  # rewrites whose generation failed

    @property
    def final(self) -> AuditResult:
        return self.iterations[-1].audit

    @property
    def regenerations(self) -> int:
        return len(self.iterations) - 1 + len(self.rejected) + self.failed

    @property
    def llm_calls(self) -> int:
        """The generation calls of every iteration plus the verification calls."""
        every = self.iterations + self.rejected
        return sum(it.generation_calls + it.audit.llm_calls for it in every)

    @property
    def tokens(self) -> int:
        return sum(
            it.generation_prompt_tokens
            + it.generation_completion_tokens
            + it.audit.prompt_tokens
            + it.audit.completion_tokens
            for it in self.iterations + self.rejected
        )


def supported_count(result: AuditResult) -> int:
    return sum(1 for s in result.sentences if s.verdict == SUPPORTED)


def worse_rewrite(rewrite: AuditResult, before: AuditResult) -> str | None:
    """Why a rewrite must not replace the text before it, or None: it says nothing, or it
    keeps fewer supported sentences (a small writer asked to rewrite may drop the good
    sentences with the bad, down to the headings alone, which no audit flags)."""
    if not rewrite.sentences:
        return "it has no sentences"
    kept, had = supported_count(rewrite), supported_count(before)
    if kept < had:
        return f"it has {kept} supported sentences where the text before it had {had}"
    return None


def audit_loop(
    generate: Callable[[list[str], str | None], object],
    audit: Callable[[str, dict[str, SentenceResult]], AuditResult],
    *,
    threshold: float = FLAG_THRESHOLD,
    max_regenerations: int = MAX_REGENERATIONS,
    on_iteration: Callable[[int, AuditResult], None] | None = None,
) -> LoopResult:
    """Generate, audit, regenerate while flagged_ratio > threshold (at most
    `max_regenerations` times), then mark what is still unsupported or unchecked.

    A rewrite that fails, says nothing or keeps fewer supported sentences than the text
    before it is not kept: the loop stops with that text, and a note says why.
    generate(flagged, previous_text) returns the text, or a Completion (whose
    token counts are then added to the totals); the first call gets ([], None).
    audit(text, known) is an audit pass; `known` carries earlier verdicts so
    unchanged sentences are not verified again (unchecked ones are: the verifier may answer now).
    """
    known: dict[str, SentenceResult] = {}
    result = LoopResult([], "")
    flagged: list[str] = []
    previous: str | None = None
    while True:
        number = len(result.iterations) + len(result.rejected)
        it = _draft(generate, audit, flagged, previous, known, number, result)
        if it is None:
            break
        if on_iteration:
            on_iteration(number, it.audit)
        why = worse_rewrite(it.audit, result.iterations[-1].audit) if result.iterations else None
        if why:
            result.rejected.append(it)
            result.rewrite_notes.append(f"rewrite {number} was not kept: {why}")
            break
        result.iterations.append(it)
        for s in it.audit.sentences:
            if s.verdict != UNCHECKED:
                known.setdefault(s.text, s)
        if it.audit.flagged_ratio <= threshold or number >= max_regenerations:
            break
        flagged, previous = it.audit.flagged, it.text
    final = result.iterations[-1]
    result.final_text = mark_unsupported(final.text, final.audit.to_mark)
    return result


def _draft(generate, audit, flagged, previous, known, number: int, result: LoopResult) -> Iteration | None:
    """The next draft, audited; None when a rewrite failed (noted in `result`; a first draft's
    failure is raised)."""
    try:
        out = generate(flagged, previous)
    except ReaderError as exc:
        if previous is None:
            raise
        result.failed += 1
        result.rewrite_notes.append(f"rewrite {number} failed ({exc}): the text before it was kept")
        return None
    text = getattr(out, "text", out)
    return Iteration(
        text=text,
        audit=audit(text, known),
        generation_prompt_tokens=getattr(out, "prompt_tokens", 0),
        generation_completion_tokens=getattr(out, "completion_tokens", 0),
        generation_calls=getattr(out, "calls", 1),
    )
