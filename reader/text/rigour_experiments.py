"""The checklist's rules for what an evaluation reports: datasets and sizes, baselines, metrics,
ablations, variance or significance, runs or seeds (reader.text.rigour names the items)."""

from __future__ import annotations

import re

from reader.text.rigour import (
    CITATION,
    DATASET_WORDS,
    INTRO_SECTION,
    OTHERS_DATA,
    OURS,
    RELATED_SECTION,
    Found,
    Sentence,
    matched_by,
    named,
    short,
)

# ------------------------------------------------------------------ datasets

_NUMBER_WORDS = {
    "two": 2, "three": 3, "four": 4, "five": 5, "six": 6, "seven": 7, "eight": 8, "nine": 9, "ten": 10,
    "eleven": 11, "twelve": 12, "fifteen": 15, "twenty": 20, "thirty": 30, "forty": 40, "fifty": 50,
    "sixty": 60, "hundred": 100, "sixty-five": 65, "hundreds": 100, "thousands": 1000,
}  # fmt: skip
_NUM = r"\d{1,3}(?:,\d{3})+(?:\.\d+)?|\d+(?:\.\d+)?|" + "|".join(sorted(_NUMBER_WORDS, key=len, reverse=True))
_SCALE = r"(?:[kKMB]\b|million|billion|thousand|hundred)"
_UNITS = (
    r"sentence pairs|sentences|pairs|images|photos|documents|docs|tokens|words|examples|samples|articles|"
    r"utterances|questions|answers|instances|dialogues|dialogs|conversations|tweets|reviews|videos|clips|"
    r"patients|participants|subjects|volunteers|respondents|annotators|abstracts|papers|publications|"
    r"records|queries|passages|triples|annotations|speakers|users|posts|comments|texts|paragraphs|"
    r"entities|mentions|cases|scans|slides|recordings|retellings|molecules|proteins|genes|cells|plants|"
    r"accessions|genotypes|cultivars|lines|mice|animals|rats|scenes|frames|objects|items|entries|"
    r"summaries|pages|web pages|relations|extractions|ANs|nouns|phrases|tuples|labels|claims|languages"
)
_FILLER = r"(?:(?!(?:we|they|of|the|and|were|are|was|is|from|in|on|for|to|with|by|at|than)\b)[A-Za-z][\w&-]*\s+){0,3}?"
_SIZE = re.compile(
    rf"(?<![\w.$])(?!(?:19|20)\d\d\b)({_NUM})\s?({_SCALE})?\s*{_FILLER}({_UNITS})\b"
    rf"|(?<![\w.])({_NUM})\s?({_SCALE})?\s*hours of (?:transcribed |recorded )?(?:speech|audio|video|recordings)",
    re.I,
)
_DATA_CUE = re.compile(
    rf"\b(?:{DATASET_WORDS}|benchmarks?|treebanks?|collections?|collected|training|train|test|"
    r"testing|dev|development|validation|splits?|annotated|label(?:l)?ed|consists?|consisting|contains?|"
    r"containing|compris\w*|gathered|crawled|sampled|recruited|enrolled|used for (?:the|this) study|"
    r"survey\w*|evaluat\w+ on|experiments? on|were used|was used)\b|^(?:on|across|over|from) (?:the )?\d",
    re.I,
)
_HUMAN_OR_BIOLOGICAL = re.compile(
    r"participants|subjects|patients|volunteers|respondents|annotators|plants|genotypes|accessions|"
    r"cultivars|lines|mice|animals|rats|speakers",
    re.I,
)


def _count(number: str, scale: str | None) -> float:
    number = number.lower().replace(",", "")
    value = float(_NUMBER_WORDS[number]) if number in _NUMBER_WORDS else float(number)
    return value * 1000 if scale else value


def data_sizes(sentence: str) -> list[str]:
    """The sizes of data a sentence gives ("3,000 items", "about three million sentences", "six
    wheat genotypes"): a count of 100 or more, or scaled, or of people, plants or animals that a
    study used; in a sentence about data."""
    if not _DATA_CUE.search(sentence):
        return []
    sizes = []
    for m in _SIZE.finditer(sentence):
        number, scale = (m.group(1), m.group(2)) if m.group(1) else (m.group(4), m.group(5))
        unit = m.group(3) or "hours"
        try:
            count = _count(number, scale)
        except ValueError:
            continue
        if "." in number and not scale:
            continue  # 0.971 examples is a ratio
        if count >= 100 or scale or unit == "hours" or (count >= 2 and _HUMAN_OR_BIOLOGICAL.fullmatch(unit)):
            sizes.append(" ".join(m.group(0).split()))
    return sizes


# "The most populated category is Neoplasms with 5.4K instances (23.3% of the total dataset)": the
# size of one class of the data, not of the data
_ONE_CLASS = re.compile(
    r"\b(?:most|least|largest|smallest|biggest) (?:populated |frequent |common )?(?:category|class|label)\b"
    r"|\b(?:category|class|label) with the (?:most|least|fewest|largest|smallest)\b"
    r"|%\s*of the (?:total|whole|entire) (?:data ?set|corpus|data)\b",
    re.I,
)


def datasets_rule(s: Sentence) -> Found | None:
    sizes = data_sizes(s.plain)
    if not sizes or _ONE_CLASS.search(s.plain):
        return None
    if OTHERS_DATA.search(s.plain) and not re.search(r"\b(?:we|our)\b", s.plain, re.I):
        return None  # the size of the data of a cited work, told in its related work
    return Found(s, "; ".join(dict.fromkeys(sizes[:3])))


# ------------------------------------------------------------------ baselines and metrics

_BASELINE = re.compile(r"\bbaselines?\b|\bbaseline (?:model|system|method)s?\b", re.I)
_COMPARED = re.compile(
    r"\b(?:we |are |were |is |was )?(?:compare[ds]?|comparing|evaluate[ds]?|evaluating|benchmark(?:ed)?)"
    r"\s+(?:\w+\s+){0,4}?(?:with|to|against)\b|\btest(?:ed|s)?\s+(?:[\w-]+\s+){0,4}?against\b|"
    r"\boutperform\w*|\bcomparable (?:with|to)\b|\bcomparison of [\w-]+ (?:with|to|against)\b|\b(?:compared|comparison) (?:with|to|against)\b",
    re.I,
)


_DESCRIBED_BASELINE = re.compile(
    r"\b((?:[\w]+-)+[\w]+) baselines?\b|\b(?:our|the|a) (baseline) (?:\w+ )?(?:is|was|by|uses|selects|"
    r"consists)\b",
    re.I,
)
_NAMES_BEFORE = re.compile(
    r"(?:\b(?:[A-Z][\w+-]*[A-Z0-9][\w+-]*|[A-Z]{2,}[\w+-]*)(?:,\s*|\s+and\s+|\s+or\s+)?)+\s*baselines?\b"
)


def baselines_rule(s: Sentence, own: str = "") -> Found | None:
    """A sentence that compares with a baseline and names it: a name or a citation after "baseline"
    or "compared with" ("Our baseline model is a MaxEnt classifier", "comparing with MOGANED [10]"),
    or names right before "baselines" ("the TEXTRUNNER and PL baselines"). Neither the paper's own
    system (`own`, its title's name: "comparing with the GAT-based MOGANED, SemEAGAT surpasses
    it") nor a metric ("… improves by 1.1% on F1") is a baseline."""
    text = s.plain
    section = s.passage.section or ""
    if RELATED_SECTION.search(section) or (INTRO_SECTION.search(section) and not OURS.search(text)):
        return None  # others' comparisons, told in the related work
    before = _NAMES_BEFORE.search(text)
    names: list[str] = named(before.group(0)) if before else []
    names += [m.group(1) or short(text[m.start() :], 60) for m in _DESCRIBED_BASELINE.finditer(text)]
    strength = BASELINE if names else ""
    for m in list(_BASELINE.finditer(text)) + list(_COMPARED.finditer(text)):
        after = text[m.end() : m.end() + 120]
        if m.group(0).lower().startswith("outperform"):
            if not re.search(r"(?:difficult|hard|easy) to\s*$", text[: m.start()]):
                found = named(after[:60])  # "outperforms SCIBERT": a name, not only a citation
                names += found
                strength = strength or (OUTPERFORMS if found else "")
            continue
        found = named(after) + (["(cited)"] if CITATION.search(after) else [])
        names += found
        if found:
            strength = BASELINE if _BASELINE.fullmatch(m.group(0)) or strength == BASELINE else COMPARED
    names = [
        n
        for n in dict.fromkeys(names)
        if n.lower() not in {"table", "figure", own.lower()} and not _METRIC.fullmatch(n)
    ]
    if not names:
        return None  # "For completeness, additional baselines are also included": no baseline named
    return Found(s, ", ".join(n for n in names if n != "(cited)")[:120] or "named by citation", strength)


# How strongly a sentence states the baselines (Found.kind): named as baselines, compared with by
# name, or only outperformed ("cbow outperforms count": often two settings of the paper's own)
BASELINE, COMPARED, OUTPERFORMS = "baseline", "compared", "outperforms"
STRENGTH = {BASELINE: 3, COMPARED: 2, OUTPERFORMS: 1}
_EVALUATION = re.compile(r"result|experiment|evaluat|baseline|comparison|table \d+ caption", re.I)


def baseline_weight(found: Found) -> int:
    """A baselines sentence's weight: its strength, one more in the results or experiments (a
    comparison told there is the evaluation's); 2 at least for the item to be found."""
    bonus = 1 if _EVALUATION.search(found.sentence.passage.section or "") else 0
    return STRENGTH.get(found.kind, 0) + bonus


_METRIC_NAMES = [
    ("accuracy", r"accuracy|accuracies"),
    ("precision", r"precision(?!/recall curve)"),
    ("recall", r"recall(?:@\d+)?"),
    ("F1", r"F1|F-score|F-measure|F score|F\u2081"),
    ("AUC", r"AUC|area under the (?:ROC |precision/recall |precision-recall )?curve"),
    ("BLEU", r"BLEU"),
    ("ROUGE", r"ROUGE(?:-\w+)?"),
    ("METEOR", r"METEOR"),
    ("BERTScore", r"BERTScore"),
    ("perplexity", r"perplexity"),
    ("MAP", r"MAP|mean average precision"),
    ("nDCG", r"n?DCG"),
    ("MRR", r"MRR|mean reciprocal rank"),
    ("P@k", r"P@\d+|precision@\d+"),
    ("exact match", r"exact match"),
    ("error rate", r"WER|CER|word error rate|error rate(?! training)"),
    ("MAE / MSE / RMSE", r"MAE|MSE|RMSE|mean (?:absolute|squared) error"),
    ("R²", r"R2|R\u00b2|coefficient of determination"),
    ("correlation", r"(?:Pearson|Spearman|Kendall)(?:'s|’s)?(?: rank)?(?: correlation| r| rho| ρ| tau| τ)?|correlation coefficients?"),
    ("agreement", r"inter-annotator agreement|Cohen(?:'s|’s) kappa|Krippendorff(?:'s|’s) alpha|Fleiss"),
    ("rank", r"median rank|mean rank|top-\d+ accuracy|hits@\d+"),
    ("coverage", r"coverage"),
]  # fmt: skip
_METRIC = re.compile(
    r"\b(?:" + "|".join(f"(?P<m{i}>{p})" for i, (_, p) in enumerate(_METRIC_NAMES)) + r")(?!\w)"
)
_CASE_FREE = {
    "accuracy",
    "precision",
    "recall",
    "perplexity",
    "exact match",
    "error rate",
    "coverage",
    "rank",
}
_REPORTS = re.compile(
    r"\d|\b(?:report\w*|measur\w*|metrics?|scores?|in terms of|evaluated (?:by|with|using|as|in))\b", re.I
)
_MEASURED = re.compile(
    r"\b(?:were|was) (?:measured|recorded|quantified|assessed|scored)\b|\bmeasurements were (?:taken|made)\b",
    re.I,
)


def metric_names(sentence: str) -> list[str]:
    found = []
    for m in _METRIC.finditer(sentence):
        name = _METRIC_NAMES[int(next(k for k, v in m.groupdict().items() if v)[1:])][0]
        if name not in _CASE_FREE and m.group(0).islower() and name not in ("F1",):
            continue  # "map", "rouge" in prose
        found.append(name)
    if not found:
        found = [
            n
            for n, pattern in _METRIC_NAMES
            if n in _CASE_FREE and re.search(rf"\b(?:{pattern})(?!\w)", sentence, re.I)
        ]
    return list(dict.fromkeys(found))


# the value of a metrics item the rules found by a verb of measuring alone, no metric named
MEASURED_ONLY = "measured: "


def metrics_rule(s: Sentence) -> Found | None:
    names = metric_names(s.plain)
    if names and _REPORTS.search(s.plain):
        return Found(s, ", ".join(names))
    if _MEASURED.search(s.plain) and re.search(r"\b(?:we|were|was)\b", s.plain, re.I):
        return Found(s, MEASURED_ONLY + _MEASURED.search(s.plain).group(0))
    return None


# ------------------------------------------------------------------ ablations, variance, runs

_ABLATION = re.compile(
    r"\bablat\w+|\bw/o\b|\bcomponents? (?:taken )?in isolation\b|\beach of its components\b|"
    r"\b(?:contribution|effect|impact|importance) of each (?:component|module|feature|part)\b|"
    r"\bwith and without\b|\bvariants of (?:our|the) (?:\w+ ){0,3}?(?:model|method|system|approach)\b|"
    r"\b(?:omits?|omitting|leaves? out)\b[^.;]{0,80}?\bfull model\b|"
    r"\b(?:examine|investigat\w+|measur\w+|assess\w*|stud(?:y|ied)|analy[sz]\w+) the (?:utility|impact|effect|"
    r"contribution|benefit|importance) of (?:using |adding |removing |including )?(?:the |each |our |these )?\w+|"
    r"\b(?:remov\w+|without|replac\w+|dropp\w+|excluding)\b[^.;]{0,80}?\b(?:results? in|leads? to|"
    r"decreas\w*|drops?|hurts?|degrad\w*|worse|lower\w*|reduc\w+ (?:the )?performance|performs? worse)\b",
    re.I,
)


def ablations_rule(s: Sentence) -> Found | None:
    m = _ABLATION.search(s.plain)
    if m is None or CITATION.search(s.plain[max(0, m.start() - 40) : m.end() + 40]):
        return None  # an ablation of a cited work
    return Found(s, m.group(0)[:60])


_SPREAD = [
    ("±", r"±\s?\d(?![\d.,]*\s?(?:°|̊|˚|ºC|◦))|\+/-\s?\d"),
    ("standard deviation", r"\bstandard deviations?\b|\bstd(?:\.|-dev)?\b|\bSD\s?[=:(,]|\(SD\b|\bSDs?\)|\bs\.d\.|\bσ\s?="),
    ("standard error", r"\bstandard errors?\b|\bSEM?\s?[=:(,)]|\(SEM?\b|\bs\.e\.m?\.|\bSEM\b"),
    ("confidence interval", r"\bconfidence intervals?\b|\b\d\d(?:\.\d)?\s?% ?CIs?\b|\bCIs?\s?[=:\[(]|\[\s?-?\d*\.\d+\s?,\s?-?\d*\.\d+\s?\]"),
    ("IQR", r"\bIQR\b|\binterquartile\b"),
    ("error bars", r"\berror bars?\b|\bshaded (?:area|region)s? (?:show|indicate|denote)"),
    # "which also reduces variance" (2kenize, of its token distribution) speaks of it, reports none
    ("variance", r"(?<!reduces )(?<!reduce )(?<!reducing )(?<!reduced )(?<!lower )(?<!less )"
     r"\bvariances?\b(?! (?:reduction|of the (?:input|data)))"),
]  # fmt: skip
_TEST = [
    ("p-value", r"\bp\s?[<=≤>]\s?0?\.\d|\bp-values?\b|\bP\s?<\s?0?\.\d"),
    ("significance test", r"\bt-tests?\b|\bt\(\d+\)\s?=|\bF\(\d+,\s?\d+\)|\bANOVA\b|\banalysis of variance\b|"
     r"\bchi-?squared?\b|χ2|\bWilcoxon\b|\bMann[- ]Whitney\b|\bKruskal\b|\bMcNemar\b|\bTukey\b|\bBonferroni\b|"
     r"\bpermutation tests?\b|\bbootstrap(?:ped|ping)? (?:resampling|test|analysis|confidence|samples|estimate)\w*|\bsignificance (?:level|test)s?\b|\bstatistically (?:in)?significant\b"),
]  # fmt: skip
_CLAIM = re.compile(
    r"\bsignificantly (?:\w+ ){0,2}?(?:higher|lower|better|worse|differen\w+|improv\w+|outperform\w*|increas\w+|"
    r"decreas\w+|reduc\w+|larger|smaller|more|less)|\b(?:in)?significant (?:differen\w+|improvements?|gains?|"
    r"effects?|increases?|decreases?|reductions?|correlations?)\b",
    re.I,
)
_VARIANCE_PATTERNS = [(name, re.compile(p)) for name, p in _SPREAD + _TEST]


_URL = re.compile(r"\S*(?:https?://|www\.|\.com|\.org)\S*")


def variance_kinds(sentence: str) -> list[str]:
    sentence = _URL.sub(" ", sentence)  # "https://std.stheadline.com" gives no standard deviation
    return [name for name, pattern in _VARIANCE_PATTERNS if pattern.search(sentence)]


_SETTING = re.compile(
    r"\bmaintained\b|\btemperatures?\b|\bhumidity\b|\bphotoperiod\b|\bkept at\b|\bcontrolled at\b", re.I
)


def variance_rule(s: Sentence) -> Found | None:
    kinds = variance_kinds(s.plain)
    if kinds == ["±"] and _SETTING.search(s.plain):
        kinds = []  # "20:15 ± 0.08 °C, humidity 60 ± 0.3%": a setting's tolerance, not a result's spread
    if kinds:
        spread = any(k in dict(_SPREAD) for k in kinds)
        return Found(s, ", ".join(kinds), "spread" if spread else "test")
    if _CLAIM.search(_URL.sub(" ", s.plain)):
        return Found(s, "significance said without a test or spread", "claim")
    return None


_N = r"(?:\d+|two|three|four|five|six|seven|eight|nine|ten|twenty|fifty|hundred)"
_RUNS = re.compile(
    rf"\brandom seeds?\b|\b(?:different|multiple|{_N}) (?:random )?seeds\b|\bseed values?\b|"
    rf"\b{_N} (?:independent |random |separate |different )?(?:runs|trials|repetitions|restarts|initiali[sz]ations)\b|"
    rf"\b(?:averaged?|mean|median) (?:over|across|of) {_N} (?:runs|seeds|trials|folds|repetitions)\b|"
    rf"\brepeated {_N} times\b|\b{_N}[- ]fold cross[- ]validation\b|\bcross[- ]validation\b|\bleave-one-\w+-out\b|"
    rf"\b(?:biological|technical) replicat\w+|\btriplicates?\b|\bin (?:duplicate|triplicate)\b|\b{_N} replicat\w+",
    re.I,
)


runs_rule = matched_by(_RUNS)
