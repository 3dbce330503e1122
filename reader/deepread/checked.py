"""Critique sentences the tool states itself, from the paper's rigour checklist.

What a paper lacks (a variance for its results, a baseline, a section on its limitations) is a
reviewer's point, but a sentence saying so has no passage to support it: the verifier cannot
confirm an absence, and the small writer's paraphrase of the finding was flagged or turned into
something else. What the paper has (the data's size, the spread it reports) the small writer read
from 2,400 tokens of the paper and misstated ("14 papers, each with 186 pages"). So the tool writes
these sentences from the checklist (reader.checklist; here as plain `Finding`s), each tied to its
item, and the audit takes the finding as its reason (reader.audit.loop, `stated`).
"""

from __future__ import annotations

import re
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field

from reader.checklist.model import Finding
from reader.deepread.material import LIMITATIONS, abstract_sentences, ordered_figures, section_sentences
from reader.deepread.negation import LACK, NEGATION
from reader.deepread.tidy import content_key, repeats_earlier
from reader.text.rigour import DATASET_WORDS, Passage, paper_sentences
from reader.text.rigour_experiments import MEASURED_ONLY

RESULT_FIGURES = 3  # of the abstract's, named in the sentences on variance, runs and baselines
QUOTE_CHARS = 170
_HUMAN = re.compile(
    r"\b(?:participants|annotators|crowd ?workers|crowdsourc\w+|volunteers|respondents|patients|"
    r"human subjects|interviewees|freelancers|Mechanical Turk)\b",
    re.I,
)


# the paper's own study ("we asked the annotators"), not the studies a review describes ("across
# subjects" of a perspective, whose note said it gave no ethics statement for its participants)
_OWN_WORK = re.compile(r"\b(?:we|our|us)\b", re.I)


@dataclass(frozen=True)
class CheckedFact:
    heading: str  # the critique heading it goes under
    sentence: str  # as the note gives it
    finding: str  # what the check found: the audit's reason
    item: str = ""  # the checklist item it states (reader.text.rigour ITEMS)
    quote: str = ""  # the paper's sentence it quotes, if any


@dataclass(frozen=True)
class PaperChecks:
    """What the checklist found in a paper, with what the sentences need beside it: an absence is
    claimed of the whole paper, so every section read counts (references are not among them)."""

    findings: dict[str, Finding]
    result_figures: list[str]  # the abstract's decimals and percentages, in order
    n_sections: int
    limitation_mention: str | None  # any sentence naming limitations ("" when only a title does)
    human: bool = False  # the paper speaks of its own participants, annotators, patients …
    # the paper's sentence saying its results vary a lot ("We see a high variance … around a median
    # of 27.2 BLEU"); None when none does, or when the paper itself calls results stable somewhere
    instability: str | None = None
    subjective: bool = False  # a sentence of the paper speaks of subjectivity
    extra: dict = field(default_factory=dict)

    def has(self, key: str) -> bool:
        finding = self.findings.get(key)
        return finding is not None and finding.found

    @property
    def variance(self) -> str | None:
        """The sentence giving a spread or a test; None when none does (a bare "significantly" is no spread)."""
        v = self.findings.get("variance")
        return v.quote if v is not None and v.found and v.kind != "claim" else None

    @property
    def limitations(self) -> str | None:
        v = self.findings.get("limitations")
        return v.quote if v is not None and v.found else self.limitation_mention

    @property
    def empirical(self) -> bool:
        """Reports results in metrics: what baselines, ablations and runs are asked of."""
        return self.has("metrics")

    @property
    def computational(self) -> bool:
        """Trains or tunes a model: what hyperparameters, code and compute are asked of."""
        return self.has("hyperparameters") or self.has("compute")


def rule_findings(sections) -> dict[str, Finding]:
    """The checklist by the rules alone over the sections' text (no index, no model)."""
    from reader.text.rigour_find import find_all

    passages = [Passage(s.text, s.title) for s in sections]
    found = find_all(paper_sentences(passages))
    return {
        key: Finding(
            key, f is not None, f.sentence.text if f else "", f.value if f else "", f.kind if f else ""
        )
        for key, f in found.items()
    }


def paper_checks(sections, findings: dict[str, Finding] | None = None) -> PaperChecks:
    """The checks of a paper: `findings` from its checklist (the deep read's), else the rules over
    `sections` (each with .title, .text, .priority)."""
    sentences = section_sentences(sections)
    named = next((s for s in sentences if LIMITATIONS.search(s)), None)
    if named is None and any(LIMITATIONS.search(s.title) for s in sections):
        named = ""
    figures = ordered_figures(" ".join(abstract_sentences(sections)))
    unstable = next((s for s in sentences if _results_vary(s)), None)
    return PaperChecks(
        findings=findings if findings is not None else rule_findings(sections),
        result_figures=[n for n in figures if "%" in n or "." in n][:RESULT_FIGURES],
        n_sections=len(sections),
        limitation_mention=named,
        human=any(_HUMAN.search(s) and _OWN_WORK.search(s) for s in sentences),
        instability=None if any(_STABLE.search(s) for s in sentences) else unstable,
        subjective=any(_SUBJECTIVITY.search(s) for s in sentences),
    )


# results said to hold steady: "reliable and consistent across multiple runs", "a low variance"
_STABLE = re.compile(
    r"\b(?:reliable|consistent|stable|robust|reproducible)\b[^.]{0,80}?\b(?:across|over|between)\b[^.]{0,30}?"
    r"\b(?:runs|seeds|trials|initiali[sz]ations|repetitions)\b"
    r"|\b(?:low|small|little|negligible|minimal) (?:variance|variability|standard deviation)\b",
    re.I,
)
# results said to vary a lot, in a sentence about results (not "iron deficiency varies greatly
# with each stage of life"), not negated ("do not vary greatly")
_UNSTABLE = re.compile(
    r"\b(?:high|large|considerable|substantial|great) (?:variance|variability|standard deviations?|instability)\b"
    r"|(?<![\w-])unstable\b|\bvar(?:y|ies|ied) (?:widely|considerably|greatly|substantially|a lot)\b"
    r"|\bscatter(?:s|ed)? widely\b",
    re.I,
)
_RESULT_WORDS = re.compile(
    r"(?<!\bas a )\b(?:results?|runs?|seeds?|scores?|performance|accuracy|BLEU|F1|trials|initiali[sz]ations|"
    r"estimates)\b",
    re.I,
)
_NEGATED_BEFORE = re.compile(rf"\b(?:{NEGATION})\b(?:\W+\w+){{0,2}}\W*$|n't\W*$", re.I)


def _results_vary(sentence: str) -> bool:
    m = _UNSTABLE.search(sentence)
    return bool(m and _RESULT_WORDS.search(sentence) and not _NEGATED_BEFORE.search(sentence[: m.start()]))


def contradicted_stability(sentence: str, checks: PaperChecks) -> list[str]:
    """Reasons a sentence calling the results consistent, reliable or of low variance is false: the
    paper says they vary a lot ([] when it does not, or when the sentence denies the stability)."""
    m = _STABLE.search(sentence)
    if checks.instability is None or m is None or _NEGATED_BEFORE.search(sentence[: m.start()]):
        return []
    return [f"the paper says its results vary: {_quote_of(checks.instability)}"]


# an evaluation called subjective ("The evaluation criteria used (e.g., precision, recall, F1) are
# subjective", "The evaluation of the coverage metrics is subjective"), not denied
_SUBJECTIVE = re.compile(
    r"\b(?:metrics?|evaluation|criteria|measures?|scores?|scoring)\b(?:[^.]|\.(?!\s)){0,100}?"
    r"\b(?:is|are|was|were|remains?|seems?|appears?)\s+(?:(?!not\b|never\b)\w+\s+)?subjective\b",
    re.I,
)
_SUBJECTIVITY = re.compile(r"\bsubjectiv\w*", re.I)


def claimed_subjectivity(sentence: str, checks: PaperChecks) -> list[str]:
    """Reasons a sentence calling the paper's evaluation subjective is the writer's: the checklist
    found the metrics it computes and no sentence of the paper speaks of subjectivity ([] when the
    sentence says no such thing, the paper speaks of it, or it reports no metric)."""
    if not _SUBJECTIVE.search(sentence) or checks.subjective or not checks.has("metrics"):
        return []
    return [
        _reason(checks.findings["metrics"], "the paper reports its metrics and never calls them subjective")
    ]


def _listed(items: list[str]) -> str:
    return items[0] if len(items) == 1 else ", ".join(items[:-1]) + " and " + items[-1]


def quoted(sentence: str, limit: int = 160) -> str:
    """The sentence in quotation marks, cut at `limit` characters; one that starts in lower case
    (where the passages' split cut it: "pared to other models as it gives the least variance …")
    shown as cut at its start too."""
    flat = " ".join(sentence.split()).rstrip(".")
    start = "“…" if flat[:1].islower() else "“"
    return start + (flat if len(flat) <= limit else flat[: limit - 1].rsplit(" ", 1)[0] + "…") + "”"


def _reason(f: Finding, said: str) -> str:
    where = f" ({f.pages})" if f.pages else ""
    if f.found:
        return f"checklist item {f.key}: {said}{where}: {quoted(f.quote)}"
    return f"checklist item {f.key}: not found — {said}" + (f"; {f.searched}" if f.searched else "")


def _absences(checks: PaperChecks) -> list[CheckedFact]:
    """What the checklist did not find, said by the tool: no spread for the results, experiments
    and details missing, no limitations, no ethics statement."""
    return _variance_absence(checks) + _missing_experiments(checks) + _validity_absences(checks)


def _variance_absence(checks: PaperChecks) -> list[CheckedFact]:
    variance = checks.findings.get("variance")
    if variance is not None and not variance.found:
        shown = checks.result_figures
        sentence = (
            f"The abstract's figures ({_listed(shown)}) are given without a standard deviation, "
            "confidence interval or significance test, and none is reported elsewhere in the paper."
            if shown
            else "No result of the paper is given with a standard deviation, confidence interval "
            "or significance test."
        )
        said = "no sentence of the paper gives a standard deviation, confidence interval, test, error bar or ± range"
        return [CheckedFact("Weaknesses", sentence, _reason(variance, said), "variance")]
    if variance is not None and variance.kind == "claim":
        sentence = (
            f"The paper calls a result significant ({quoted(variance.quote, 120)}) but names no test, "
            "p-value, standard deviation or confidence interval for it."
        )
        return [
            CheckedFact("Weaknesses", sentence, _reason(variance, "significance said, no test"), "variance")
        ]
    return []


# "{results}": "its results", naming the abstract's figures or its metrics (_results_named)
_EMPIRICAL_ABSENCES = [
    ("runs", "Weaknesses", "The paper does not say over how many runs or random seeds {results} were obtained."),
    ("baselines", "Missing experiments or baselines",
     "The paper's text names no baseline or other method that {results} are compared with."),
    ("ablations", "Missing experiments or baselines",
     "No ablation is reported: no part of the method is removed or varied to measure what it contributes."),
]  # fmt: skip
_COMPUTATIONAL_ABSENCES = [
    ("code", "Weaknesses", "The paper gives no link to its code and does not say that the code is available."),
    ("hyperparameters", "Weaknesses",
     "The paper gives no hyperparameters such as a learning rate, batch size or number of epochs."),
    ("compute", "Weaknesses", "The paper does not say on what hardware or with how much compute its experiments ran."),
]  # fmt: skip


def _missing_experiments(checks: PaperChecks) -> list[CheckedFact]:
    wanted = []
    if checks.empirical:
        # runs and ablations are asked of a model trained or tuned, not of a field study
        wanted += [a for a in _EMPIRICAL_ABSENCES if a[0] == "baselines" or checks.computational]
    if checks.computational:
        wanted += _COMPUTATIONAL_ABSENCES
    results = _results_named(checks)
    out = []
    for key, heading, sentence in wanted:
        item = checks.findings.get(key)
        if item is not None and not item.found:
            said = _reason(item, "the rules, the index and the extraction")
            out.append(CheckedFact(heading, sentence.format(results=results), said, key))
    return out


def _results_named(checks: PaperChecks) -> str:
    """ "its results", naming the abstract's figures, else the metrics the rules named."""
    if checks.result_figures:
        return f"its results (the abstract's {_listed(checks.result_figures)})"
    metrics = checks.findings.get("metrics")
    if metrics is not None and metrics.found and metrics.value and not _measured_only(metrics):
        return f"its results in {_listed(metrics.value.split(', '))}"
    return "its results"


def _validity_absences(checks: PaperChecks) -> list[CheckedFact]:
    out = []
    limitations = checks.findings.get("limitations")
    if checks.limitations is None and (limitations is None or not limitations.found):
        finding = (
            f"no section title or sentence of the paper's {checks.n_sections} sections names "
            "limitations or threats to validity"
        )
        sentence = "No section or sentence of the paper discusses its limitations or threats to validity."
        out.append(CheckedFact("Threats to validity", sentence, finding if limitations is None else
                               _reason(limitations, finding), "limitations"))  # fmt: skip
    ethics = checks.findings.get("ethics")
    if checks.human and ethics is not None and not ethics.found:
        sentence = (
            "The paper reports work with human participants or annotators but gives no ethics statement "
            "(no review board approval, consent or ethics section)."
        )
        out.append(
            CheckedFact("Threats to validity", sentence, _reason(ethics, "no ethics statement"), "ethics")
        )
    return out


_CRITIQUE_QUOTES = [
    ("datasets", "Quality of the evidence", "The data are described with their size as {q}."),
    ("variance", "Quality of the evidence", "The spread or significance of the results is given as {q}."),
    ("runs", "Quality of the evidence", "The number of runs or samples is given as {q}."),
    ("baselines", "Missing experiments or baselines", "The comparison is stated as {q}."),
]
# the paper's setup, which the small writer's synthesis seldom states: its data under Method, its
# metrics and comparison under Key results, each quoted with its page. The words round the quote
# claim nothing of it: the rules' sentence on metrics may describe training ("Training data … are
# prepared by comparing … using smoothed per-sentence BLEU", acl2012)
_SYNTHESIS_QUOTES = [
    ("datasets", "Method", "On its data, the paper says{where}: {q}."),
    ("metrics", "Key results", "On its metrics, the paper says{where}: {q}."),
    ("baselines", "Key results", "On what it compares with, the paper says{where}: {q}."),
]
_NUMBER_TOKEN = re.compile(r"^[\d.,%±()]+$")
_SPREAD = re.compile(r"\d+(?:\.\d+)?\s*±\s*\d+(?:\.\d+)?")
SPREADS_SHOWN = 3
_PLAIN_WORD = re.compile(r"^[a-z]+[,;:]?$")
# a comparison said ("Table 4 compares …", "REALM outperforms the TEXTRUNNER and PL baselines"), not
# a tool the paper used ("pathway analysis was performed using MetaboAnalyst 3.0")
_COMPARES = re.compile(r"\b(?:baselines?|compar\w*|outperform\w*|than|versus|vs\.?)\b", re.I)


def _reads_as_sentence(quote: str) -> bool:
    """Not a fragment the passage split cut ("nese scripts consisting of …", "sured in missing
    area …"), not a table's row ("BM25 (1995) 0.38 0.46 0.56 ROUGE-1 …") or header ("Subtask →
    MAG MeSH Co-View …"): a third of its words plain lower-case words."""
    tokens = quote.split()
    numbers = sum(bool(_NUMBER_TOKEN.match(t)) for t in tokens)
    plain = sum(bool(_PLAIN_WORD.match(t)) for t in tokens)
    return (
        bool(tokens) and not quote[0].islower() and numbers <= 0.25 * len(tokens) and plain >= len(tokens) / 3
    )


def _measured_only(metrics: Finding) -> bool:
    """The rules found a verb of measuring and no metric's name."""
    return metrics.value.startswith(MEASURED_ONLY)


def _states_setup(item: Finding) -> bool:
    """A synthesis quotes a sentence (not a fragment or a table's row), metrics the rules named
    (not "measured: …") and a comparison said."""
    if not _reads_as_sentence(item.quote):
        return False
    if item.key == "metrics":
        return not _measured_only(item)
    if item.key == "baselines":
        return bool(_COMPARES.search(quoted(item.quote, QUOTE_CHARS)))  # in what is shown of it
    return True


def _presences(
    checks: PaperChecks,
    templates=_CRITIQUE_QUOTES,
    keep: Callable[[Finding], bool] = lambda item: True,
    said: Sequence[str] = (),
) -> list[CheckedFact]:
    """What the checklist found, quoted under the templates' headings: the items `keep` holds
    for, none of whose quote a sentence `said` holds already."""
    out = []
    seen = [content_key(s) for s in said]
    for key, heading, template in templates:
        item = checks.findings.get(key)
        if item is None or not item.found or not item.quote or (key == "variance" and item.kind == "claim"):
            continue
        if repeats_earlier(content_key(item.quote), seen):
            continue  # one sentence of the paper quoted once
        if not keep(item):
            continue
        seen.append(content_key(item.quote))
        where = f" ({item.pages})" if item.pages else ""
        sentence = template.format(q=_shown(item), where=where)
        out.append(CheckedFact(heading, sentence, _reason(item, "found"), key, item.quote))
    return out


def _shown(item: Finding) -> str:
    """The item's quote as a sentence shows it; a table's row holding the spread of its results
    ("BC5CDR Li et al. (2016) NER 90.01 90.41 ± 0.06 JNLPBA …", s2orc) by its first SPREADS_SHOWN
    spreads."""
    spreads = _SPREAD.findall(item.quote) if item.key == "variance" else []
    if spreads and not _reads_as_sentence(item.quote):
        return _listed([quoted(spread) for spread in spreads[:SPREADS_SHOWN]])
    return quoted(item.quote, QUOTE_CHARS)


def checked_facts(checks: PaperChecks) -> list[CheckedFact]:
    """The critique's sentences from the checklist: what the paper lacks (under Weaknesses, Missing
    experiments or baselines and Threats to validity) and what it states, quoted (under Quality of
    the evidence and Missing experiments or baselines). Each names its checklist item."""
    return _absences(checks) + _presences(checks)


def synthesis_facts(checks: PaperChecks, sections) -> list[CheckedFact]:
    """The synthesis's sentences from the checklist: the paper's data, metrics and comparison,
    quoted with their pages, where the quote reads as a sentence and is none of the abstract's
    (the synthesis restates those). Each names its checklist item."""
    return _presences(checks, _SYNTHESIS_QUOTES, keep=_states_setup, said=abstract_sentences(sections))


# What the writer is shown under each critique heading: the checklist's found items, with pages.
# (What is missing the tool states itself: given as a fact, an absence was paraphrased and flagged.)
FACT_ITEMS = {
    "Weaknesses": ("variance", "runs", "baselines", "code", "data"),
    "Quality of the evidence": ("datasets", "metrics", "variance", "runs", "baselines"),
    "Missing experiments or baselines": ("baselines", "ablations", "datasets"),
    "Threats to validity": ("datasets", "limitations", "ethics"),
}


def checklist_facts(heading: str, checks: PaperChecks) -> list[str]:
    """The writer's facts under a critique heading: each found checklist item, its value, page and
    sentence ("Datasets and sizes (p. 4): 620 ANs — “The dataset contains 620 ANs …”")."""
    from reader.text.rigour import BY_KEY

    out = []
    for key in FACT_ITEMS.get(heading, ()):
        item = checks.findings.get(key)
        if item is None or not item.found or not item.quote:
            continue
        where = f" ({item.pages})" if item.pages else ""
        value = f": {item.value}" if item.value and item.value not in item.quote else ""
        out.append(f"{BY_KEY[key].label}{where}{value} — {quoted(item.quote, 200)}")
    return out


# "not without their limitations" says they have some
# "they would also need information about the datasets and sizes used" (s2orc's note, of a paper
# giving them): a reviewer's request for what the paper lacks
_NEGATED = (
    r"\b(?!not\s+without\b)(?<!not\s)(?:" + NEGATION + "|" + LACK + r"|fails? to|absence of|"
    r"would\s+(?:also\s+)?need\s+(?:more\s+)?(?:information|details?))\b[^.;:]{0,100}?"
)
_CLAIMS_NO = {
    "limitations": r"\b(?:limitations?|threats? to validity|shortcomings)\b",
    "variance": r"\b(?:standard deviations?|confidence intervals?|significance tests?|statistical(?:ly)? significan\w*|"
    r"variances?|variability|error bars?|standard errors?|"
    # "the significance of inter-annotator agreement" (the longeval note, of a paper giving its
    # spread and bootstrap intervals); "the significance of the results" may mean their importance
    r"significance of (?:the |its |their )?(?:[\w-]+ )?(?:agreement|differences?|improvements?|gains?|correlations?))\b",
    "datasets": r"\b(?:data(?:set)?s? (?:and (?:their )?)?sizes?|size of (?:the |its )?(?:data|dataset|corpus|sample)|how (?:large|big|many)|"
    r"number of (?:examples|samples|participants|documents|sentences|instances))\b",
    # "any comparative analysis between different script converters" (2kenize, whose Table 3 compares
    # four): a comparison with other methods is a baseline
    "baselines": r"\bbaselines?\b|\bcompar\w*\s+(?:\w+\s+){0,4}?(?:with|to|between|against|among)\s+"
    r"(?:\w+\s+){0,3}?(?:methods|approaches|systems|models|converters|tools|techniques|alternatives)\b",
    "ablations": r"\bablations?\b",
    "runs": r"\b(?:random )?seeds?\b|\bnumber of runs\b|\b(?:multiple|repeated) runs\b",
    "hyperparameters": r"\bhyper-?parameters?\b",
    "code": r"\b(?:source )?code\b|\bimplementation is available\b",
    "ethics": r"\bethic\w*|\binformed consent\b|\breview board\b",
}
# "The variance is not reported for these datasets": the negation after what it says is missing
_NOT_GIVEN = (
    r"[^.;:]{0,60}?\b(?:is|are|was|were)\s+(?:not|never)\s+(?:\w+ly\s+)?(?:reported|given|provided|stated|"
    r"mentioned|discussed|described|included|specified|presented|shown|available)\b"
)
_CLAIMS = {
    key: re.compile(f"{_NEGATED}(?:{pattern})|(?:{pattern}){_NOT_GIVEN}", re.I)
    for key, pattern in _CLAIMS_NO.items()
}
# "it is difficult to determine whether the gains are statistically significant": an absence of
# spread said as doubt
_DOUBTED_VARIANCE = re.compile(
    r"\b(?:difficult|hard|impossible|unclear|not possible)\b[^.;:]{0,100}?(?:" + _CLAIMS_NO["variance"] + ")",
    re.I,
)


# A sentence saying the paper has what its checklist searched for and did not find ("The authors
# provide variance or significance results for their experiments", "The datasets used for the
# experiments are diverse" of a tutorial without experiments);
# a hedge, a negation or a suggestion is no such claim.
_PRESENT = {
    "datasets": re.compile(rf"\b(?:{DATASET_WORDS})\b", re.I),
    "variance": re.compile(_CLAIMS_NO["variance"] + r"|\bp-values?\b|\bsignificance\b", re.I),
    "baselines": re.compile(r"\bbaselines?\b", re.I),
    "metrics": re.compile(r"\bmetrics?\b", re.I),
    "ablations": re.compile(r"\bablations?\b", re.I),
}
_NO_PRESENCE = re.compile(
    r"\b(?:" + NEGATION + "|" + LACK + r"|absen\w*|missing|fails?|should|could|would|might|may|must|needs?|"
    r"whether|if|unclear|only|instead)\b|n't\b",
    re.I,
)


def _quote_of(sentence: str) -> str:
    return "“" + (sentence if len(sentence) <= 160 else sentence[:157].rstrip() + "…") + "”"


def claimed_presence(sentence: str, checks: PaperChecks) -> list[str]:
    """Reasons a sentence's claim that the paper has datasets, a variance, baselines, metrics or
    ablations is false by the checklist, which searched the paper for them and found none ([] when none)."""
    if _NO_PRESENCE.search(sentence):
        return []
    reasons = []
    for key, pattern in _PRESENT.items():
        item = checks.findings.get(key)
        if item is not None and not item.found and pattern.search(sentence):
            reasons.append(_reason(item, "the sentence says the paper has it"))
    return reasons


def contradicted_absence(sentence: str, checks: PaperChecks) -> list[str]:
    """Reasons a sentence's claim that the paper lacks something is false, by the checklist: "does
    not mention any limitations" of a paper that discusses them, "no standard deviation" of one
    that reports a spread, "does not provide any information about data size" of one that gives
    it ([] when none)."""
    reasons = []
    if checks.limitations is not None and _CLAIMS["limitations"].search(sentence):
        where = f": {_quote_of(checks.limitations)}" if checks.limitations else ""
        reasons.append(f"the paper does discuss limitations{where}")
    if checks.variance is not None and (
        _CLAIMS["variance"].search(sentence) or _DOUBTED_VARIANCE.search(sentence)
    ):
        reasons.append(f"the paper does report a variance or significance test: {_quote_of(checks.variance)}")
    for key, claim in _CLAIMS.items():
        item = checks.findings.get(key)
        if key in ("limitations", "variance") or item is None or not item.found or not claim.search(sentence):
            continue
        where = f" ({item.pages})" if item.pages else ""
        reasons.append(f"the paper does give its {key}{where}: {_quote_of(item.quote)}")
    return reasons
