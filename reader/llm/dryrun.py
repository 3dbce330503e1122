"""A deterministic stand-in LLM for dry runs and subprocess tests.

Selected with `READER_LLM_BASE_URL=scripted:` (optionally
`scripted:latency_ms=200` to model a remote endpoint's latency). It answers
every call the pipeline makes with output of the right shape — no model, no
network. The `stage` of the call chooses the kind of answer (`HANDLERS`); the
prompt only supplies its content (the claims and evidence, the question and
passages, the paper text):

- critique, synthesis: for the one heading a call asks for, the first sentences of its
  material (else sentences of the paper text inside the prompt, chosen deterministically);
- regenerate-critique, regenerate-synthesis: the previous draft without the
  sentences listed as unsupported;
- verify, audit, crag-check (`[n] YES` / `[n] NO`): YES when most of the
  claim's words, and every number and every word of comparison or negation it
  has, occur in the evidence shown for it (its own passages, or the prompt's
  shared ones), else NO — a crude but honest lexical check, which rejects the
  audit's control claim (a number changed, a comparison turned round);
- crag-grade (YES/NO + reason), crag-rewrite (one query per line) and
  crag-answer (the best-overlapping evidence sentence, cited, or the prompt's
  not-found sentinel) by the same word overlap; crag-grade-batch
  (`[n] YES - reason` per passage) decides each passage as crag-grade does, and
  crag-refine-batch (`passage.sentence` numbers) keeps the sentences sharing
  enough of the question's words;
- any other stage, or none: `FALLBACK`, prose as for a critique.

Same stage and prompt, same answer: tests can count calls and rerun for identical rows.
"""

from __future__ import annotations

import hashlib
import re
import threading
from collections.abc import Callable

from reader.llm.base import ENDPOINT, Completion, Message
from reader.llm.scripted import ScriptedLLM
from reader.text.split import split_sentences

MODEL_NAME = "scripted-dry-run"

_WORD = re.compile(r"[a-z0-9][a-z0-9\-\.%]*[a-z0-9%]|[a-z0-9]")
_CJK = re.compile(r"[\u4e00-\u9fff]")
_STOP = set(
    "the a an and or of to in on for with by from as at is are was were be been this that these "
    "those it its their our we they which who what when where how not no can may also than then "
    "such into over under between both each more most other some all any only very has have had "
    "do does did using used use based paper study work".split()
)
_INSTRUCTION = re.compile(
    r"\b(write|answer|reply|critique|synthesis|claims?|evidence|prompt|instructions?|do not|"
    r"you|your|sentence|paragraph|markdown|bullet|json|respond|question)\b",
    re.I,
)


def words(text: str) -> set[str]:
    text = text.lower()
    found = {w.strip(".") for w in _WORD.findall(text)}
    found = {w for w in found if len(w) > 2 and w not in _STOP}
    cjk = "".join(_CJK.findall(text))
    found.update(cjk[i : i + 2] for i in range(len(cjk) - 1))
    return found


def overlap(claim: str, evidence: str) -> float:
    claim_words = words(claim)
    if not claim_words:
        return 0.0
    return len(claim_words & words(evidence)) / len(claim_words)


_NUMBERS = re.compile(r"\d+(?:[.,]\d+)*")
# Words that turn a claim round when changed: a comparison's direction, a negation.
_SIGNALS = set(
    "not no never cannot higher lower highest lowest increase decrease increases decreases "
    "increased decreased more less larger smaller better worse best worst outperforms "
    "underperforms outperform underperform outperformed underperformed improves degrades improved "
    "degraded faster slower above below maximum minimum stronger weaker longer shorter superior "
    "inferior".split()
)
_PLAIN_WORD = re.compile(r"[a-z]+")


def claims_with_evidence(prompt: str) -> list[tuple[int, str, str]]:
    """(number, claim, the evidence shown for it) for each numbered claim of a verify prompt.

    A claim's evidence is the <passage> blocks right under it (prompts/verify.j2); a claim with
    none has the text before the claims, where a prompt shows one set of passages for all
    (prompts/check_answer.j2), unless it is marked as having no evidence."""
    marker = "<claims>" if "<claims>" in prompt else "Claims:"
    shared, _, block = prompt.rpartition(marker)
    block = block.split("</claims>", 1)[0]
    found: list[list] = []  # [number, claim, own passages' lines, marked as without evidence]
    inside = False
    for line in block.splitlines():
        stripped = line.strip()
        if stripped.startswith("<passage"):
            inside = True
        elif stripped == "</passage>":
            inside = False
        elif inside and found:
            found[-1][2].append(line)
        elif (m := re.match(r"^\[(\d+)\]\s*(.*)$", stripped)) and not inside:
            found.append([int(m.group(1)), m.group(2).strip(), [], False])
        elif found and "No evidence was found" in stripped:
            found[-1][3] = True
    no_evidence = "No evidence was found" in shared
    return [
        (n, claim, "\n".join(own) if own else ("" if none or no_evidence else shared))
        for n, claim, own, none in found
    ]


def supports(claim: str, evidence: str) -> bool:
    """The dry run's honest lexical check: most of the claim's words, and every number and word of
    comparison or negation it has, occur in the evidence."""
    if not evidence.strip() or overlap(claim, evidence) < 0.7:
        return False
    if not set(_NUMBERS.findall(claim)) <= set(_NUMBERS.findall(evidence)):
        return False
    signals = set(_PLAIN_WORD.findall(claim.lower())) & _SIGNALS
    return signals <= set(_PLAIN_WORD.findall(evidence.lower()))


def answer_verify(prompt: str) -> str:
    return "\n".join(
        f"[{number}] {'YES' if supports(claim, evidence) else 'NO'}"
        for number, claim, evidence in claims_with_evidence(prompt)
    )


def _question(prompt: str) -> str:
    match = re.search(r"<question>(.*?)</question>", prompt)
    return match.group(1).strip() if match else ""


def _tagged(prompt: str, tag: str) -> list[str]:
    """The contents of every <tag ...> … </tag> block (the prompts' data)."""
    return re.findall(rf"<{tag}\b[^>]*>\n?(.*?)\n?</{tag}>", prompt, re.S)


def _grade_of(question: str, passage: str) -> tuple[float, str, str]:
    """(word overlap, YES/NO, reason) of a passage for a question."""
    share = overlap(question, passage)
    reason = f"{round(share * 100)}% of the question's terms occur in the passage."
    return share, ("YES" if share >= 0.5 else "NO"), reason


def answer_grade(prompt: str) -> str:
    """YES/NO on the first line (or `Score: x`, for a prompt that asks for one), then a reason."""
    question, passages = _question(prompt), _tagged(prompt, "passage")
    share, verdict, reason = _grade_of(question, passages[0] if passages else "")
    if "Score:" in prompt and "YES or NO" not in prompt:
        return f"Score: {min(1.0, share * 1.25):.2f}\nReason: {reason}"
    return f"{verdict}\n{reason}"


def answer_grade_batch(prompt: str) -> str:
    """`[n] YES - reason` / `[n] NO - reason` for each <passage>, decided as `answer_grade` does."""
    question = _question(prompt)
    return "\n".join(
        "[{}] {} - {}".format(n, *_grade_of(question, passage)[1:])
        for n, passage in enumerate(_tagged(prompt, "passage"), 1)
    )


def answer_refine_batch(prompt: str) -> str:
    """The `passage.sentence` numbers of the sentences sharing at least 30% of the question's words."""
    question = _question(prompt)
    keep = [
        number
        for number, sentence in re.findall(r"^\[(\d+\.\d+)\]\s*(.*)$", prompt, re.M)
        if overlap(question, sentence) >= 0.3
    ]
    return ", ".join(keep) if keep else "none"


def answer_rewrite(prompt: str) -> str:
    question = _question(prompt)
    match = re.search(r"Write (\d+) alternative", prompt)
    n = int(match.group(1)) if match else 3
    terms = sorted(words(question), key=lambda w: (-len(w), w))
    variants = [question, " ".join(terms), " ".join(terms[: max(1, len(terms) // 2)])]
    return "\n".join((variants * n)[:n])


def answer_intent(prompt: str) -> str:
    """reader.crag.intent: passages, unless the question speaks of citing (prompts/intent.j2)."""
    question = _question(prompt).lower()
    if re.search(r"\brelat|each other", question):
        return "related"
    if re.search(r"\b(?:any|some|many|all)\b.*\bcite\b", question):
        return "cited_by"
    if re.search(r"\b(?:does|do|did)\b.*\bcite\b|\breferences\b|cited by (?:this|the) paper", question):
        return "cites"
    if re.search(r"\bcit(?:e|es|ed|ing)\b|\bbuilds? (?:on|upon)\b|\bextends?\b", question):
        return "cited_by"
    return "passages"


def answer_followup(prompt: str) -> str:
    """reader.crag.followup: one question per open point (prompts/followup.j2), from its longest words."""
    match = re.search(r"write (\d+) ", prompt, re.I)
    n = int(match.group(1)) if match else 3
    out = []
    for point in _tagged(prompt, "point")[:n]:
        terms = sorted(words(point), key=lambda w: (-len(w), w))[:4]
        if terms:
            out.append(f"What does the paper say about {' '.join(sorted(terms))}?")
    return "\n".join(out)


def answer_question(prompt: str) -> str:
    """The evidence sentence that best matches the question, cited; else the not-found sentinel."""
    question = _question(prompt)
    sentinel = re.search(r"reply exactly: (.+)$", prompt, re.M)
    best, best_score = "", 0.0
    for number, block in enumerate(_tagged(prompt, "passage"), start=1):
        for sentence in split_sentences(block):
            score = overlap(question, sentence)
            if score > best_score:
                best, best_score = f"{sentence} [{number}]", score
    if best_score < 0.3:
        return sentinel.group(1).strip() if sentinel else "Not found in the evidence."
    return best


def _paper_region(prompt: str) -> tuple[str, str]:
    """(the paper text inside a generation prompt, the instructions around it)."""
    match = re.search(r"<paper>\n?(.*?)\n?</paper>", prompt, re.S)
    if not match:
        return prompt, ""
    return match.group(1), prompt[: match.start()] + prompt[match.end() :]


def answer_regenerate(prompt: str) -> str:
    """The previous draft without the sentences the prompt lists as unsupported."""
    listed = (_tagged(prompt, "flagged") or [""])[0]
    flagged = [line[2:].strip() for line in listed.splitlines() if line.startswith("- ")]
    previous = (_tagged(prompt, "draft") or [""])[0]
    for sentence in flagged:
        previous = previous.replace(sentence, "", 1)
    return "\n".join(re.sub(r"  +", " ", line).strip() for line in previous.splitlines()).strip()


def answer_generate(prompt: str, per_heading: int = 2) -> str:
    """Sections of the paper's own sentences, picked evenly with a prompt-dependent offset."""
    paper, instructions = _paper_region(prompt)
    # A deep read asks for one heading at a time, with that heading's own sentences of the paper.
    requested = re.search(r'^Write the text under the heading "(.+?)" of the', instructions, re.M)
    if requested:
        material = (_tagged(prompt, "material") or [""])[0]
        chosen = [line[2:].strip() for line in material.splitlines() if line.startswith("- ")]
        if chosen:
            return " ".join(chosen[:per_heading])
    headings = [requested.group(1)] if requested else re.findall(r"^## (.+)$", instructions, re.M)
    count = per_heading * len(headings) if headings else 8
    candidates = []
    for sentence in split_sentences(paper):
        flat = " ".join(sentence.split())
        if (
            50 <= len(flat) <= 300
            and len(flat.split()) >= 8
            and not _INSTRUCTION.search(flat)
            and not re.match(r"\[\d+\] ", flat)  # a numbered claim of a verify prompt
            and "{" not in flat
            and flat not in candidates
        ):
            candidates.append(flat)
    if not candidates:
        return "The paper text given here is too short to discuss in detail."
    seed = int(hashlib.sha256((prompt[:200] + " ".join(headings)).encode("utf-8")).hexdigest(), 16)
    step = max(1, len(candidates) // count)
    picked = candidates[seed % step :: step][:count]
    if not headings:
        half = (len(picked) + 1) // 2
        return " ".join(picked[:half]) + "\n\n" + " ".join(picked[half:])
    parts = []
    for i, heading in enumerate(headings):
        group = picked[i * per_heading : (i + 1) * per_heading]
        if group:
            parts.append(f"## {heading}\n" + " ".join(group))
    return "\n\n".join(parts)


_ITEM = re.compile(
    r'<passage item="(\d+)">\n(.*?)\n</passage>\n\[\d+\] (.*?)\n(?:Options for \[\d+\]: (.*?)\n)?', re.S
)


def _fill(passage: str, masked: str, options: str | None) -> str:
    """A blank filled from its passage: the option the passage uses, else the passage's number
    whose neighbouring words the sentence shares most; NONE when the passage has neither."""
    if options:
        found = [o for o in options.split(" / ") if re.search(rf"\b{re.escape(o)}\b", passage, re.I)]
        return found[0] if len(found) == 1 else "NONE"
    around = words(masked.replace("___", " "))
    best, best_score = "NONE", 0
    for m in _NUMBERS.finditer(passage):
        score = len(words(passage[max(0, m.start() - 60) : m.end() + 30]) & around)
        if score > best_score:
            best, best_score = m.group(0), score
    return best


def answer_extract(prompt: str) -> str:
    """reader.audit.extraction: each blank filled from its own passage (prompts/extract.j2)."""
    return "\n".join(
        f"[{n}] {_fill(passage, masked, options)}" for n, passage, masked, options in _ITEM.findall(prompt)
    )


def answer_checklist(prompt: str) -> str:
    """reader.checklist: the passage sentence sharing the most of the question's words, copied as
    it stands (prompts/checklist.j2), or NONE when none shares a fifth of them."""
    question = _question(prompt)
    best, best_score = "NONE", 0.2
    for block in _tagged(prompt, "passage"):
        for sentence in split_sentences(block):
            score = overlap(question, sentence)
            if score > best_score:
                best, best_score = " ".join(sentence.split()), score
    return best


# The stages the pipeline passes to `complete(stage=...)`, and the kind of answer each gets.
HANDLERS: dict[str, Callable[[str], str]] = {
    "critique": answer_generate,  # reader.deepread.writer: one stage per kind, one call per heading
    "synthesis": answer_generate,
    "regenerate-critique": answer_regenerate,  # ... and "regenerate-<kind>" for a rewrite
    "regenerate-synthesis": answer_regenerate,
    "verify": answer_verify,  # reader.audit.loop: the deep read's audit
    "audit": answer_verify,  # `reader audit`: any text against a paper
    "crag-check": answer_verify,  # reader.crag.grounded: an answer against its passages
    "extract": answer_extract,  # reader.audit.extraction: blanks filled from passages
    "checklist": answer_checklist,  # reader.checklist: one question, one span copied from its passages
    "crag-grade-batch": answer_grade_batch,  # reader.crag: the passages of a step in one call
    "crag-grade": answer_grade,  # ... and one passage, re-graded by the confidence routing
    "crag-refine-batch": answer_refine_batch,
    "crag-rewrite": answer_rewrite,
    "crag-answer": answer_question,
    "crag-intent": answer_intent,  # reader.crag.intent: passages or the citation graph
    "followup": answer_followup,  # reader.crag.followup: questions from a review's open points
}
FALLBACK = answer_generate  # any other stage, or none


def dry_run_answer(prompt: str, stage: str) -> str:
    """The answer of the kind `stage` calls for, with its content taken from `prompt`."""
    return HANDLERS.get(stage, FALLBACK)(prompt)


class DryRunLLM:
    """ScriptedLLM answering with `dry_run_answer`, at most `max_concurrency` calls at once."""

    def __init__(self, *, latency_s: float = 0.0, max_concurrency: int = 4):
        self.scripted = ScriptedLLM(dry_run_answer, model=MODEL_NAME, latency_s=latency_s, with_stage=True)
        self.model = MODEL_NAME
        self.capabilities = ENDPOINT  # a dry run sizes a deep read as for an endpoint
        self.supports_sampling = True
        self._slots = threading.BoundedSemaphore(max(1, max_concurrency))

    @property
    def history(self) -> list[dict]:
        return self.scripted.history

    def complete(self, messages: list[Message], **kwargs) -> Completion:
        with self._slots:
            return self.scripted.complete(messages, **kwargs)


def parse_options(base_url: str) -> dict[str, float]:
    """`scripted:latency_ms=200` → {"latency_ms": 200.0}."""
    from reader.errors import ConfigError

    options: dict[str, float] = {}
    spec = base_url.split(":", 1)[1].lstrip("?/")
    for part in filter(None, re.split(r"[&,;]", spec)):
        key, _, value = part.partition("=")
        if key.strip() != "latency_ms":
            raise ConfigError(
                f"READER_LLM_BASE_URL={base_url!r}: unknown option {key!r}; "
                "the scripted LLM takes only latency_ms, e.g. scripted:latency_ms=200"
            )
        try:
            options["latency_ms"] = float(value)
        except ValueError:
            raise ConfigError(f"READER_LLM_BASE_URL={base_url!r}: latency_ms must be a number") from None
    return options


def build_dry_run_llm(llm_settings) -> DryRunLLM:
    options = parse_options(llm_settings.base_url)
    return DryRunLLM(
        latency_s=options.get("latency_ms", 0.0) / 1000.0, max_concurrency=llm_settings.max_concurrency
    )
