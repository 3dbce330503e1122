"""The checklist's rules for what a paper reports about itself: hyperparameters, compute, code and
data availability, limitations, an ethics statement and its stated contributions."""

from __future__ import annotations

import re

from reader.text.rigour import (
    AUTHOR_CONTRIBUTIONS,
    OTHERS_DATA,
    RELATED_SECTION,
    Found,
    Sentence,
    matched_by,
    short,
)

# ------------------------------------------------------------------ hyperparameters and compute

_HYPER = re.compile(
    r"\blearning rates?\b|\bbatch sizes?\b|\b\d+ (?:training )?epochs?\b|\bepochs?\b[^.]{0,20}\d|\bdropout\b|"
    r"\bhyper-?parameters?\b|\bweight decay\b|\bwarm-?up\b|\b(?:Adam|AdamW|SGD|Adagrad|RMSprop)\b(?: optimi[sz]er)?|"
    r"\bmomentum (?:of |=\s?)?\d|\bgrid search\b|\b(?:hidden|embedding|vector|state|layer|window|beam|vocabulary|context) sizes?\b"
    r"[^.]{0,30}\d|\b(?:vectors?|embeddings?|layers?|filters?|kernels?) of (?:size|dimension) \d+|\bwindow of \d+|"
    r"\b(?:set|fixed|tuned|chosen) (?:to|at|as) \d|\b[αβγλτηεkKTC]\s?=\s?\d|\bregulari[sz]ation (?:parameters?|weight)|"
    r"\bscaling weight\b|\bweight\s?=\s?\d|\bnumber of (?:layers|heads|states|iterations|clusters|topics) (?:is|was|to)\b",
)


def hyperparameters_rule(s: Sentence) -> Found | None:
    found = [m.group(0) for m in _HYPER.finditer(s.plain)]
    if not found or RELATED_SECTION.search(s.passage.section or ""):
        return None  # a cited work's settings, told in the related work
    return Found(s, "; ".join(dict.fromkeys(f.strip() for f in found[:4])))


_COMPUTE = re.compile(
    r"\b(?:\d+|single|one|two|four|eight) (?:\w+ )?(?:GPUs?|TPUs?|CPUs?|cores)\b|"
    r"\b(?:\d+|single|one|two|four|eight) (?:compute|worker|cluster|GPU|CPU) nodes?\b|"
    r"\b(?:NVIDIA|Nvidia|Tesla|GeForce|Quadro|Titan|RTX|GTX|V100|A100|H100|P100|K80|Tesla T4|Xeon|Intel Core|Ryzen|EPYC)\b|"
    r"\b\d+ ?(?:GB|G|TB) (?:of )?(?:RAM|memory|GPU memory)\b|\b\d+G memory\b|"
    r"\b(?:GPU|CPU|TPU|compute|core)[- ]hours?\b|\b(?:training|inference) (?:took|takes|time)\b[^.]{0,30}\d|"
    r"\bwall[- ]clock\b|\b(?:on|using) a (?:single |standard |commodity )?(?:machine|server|workstation|laptop|cluster|computer)\b|"
    r"\b\d+[- ]nodes? (?:[\w/]+ ){0,2}cluster\b",
)


compute_rule = matched_by(_COMPUTE)


# ------------------------------------------------------------------ availability

_CODE_HOST = re.compile(r"(?:https?://)?(?:www\.)?(?:github\.com|gitlab\.com|bitbucket\.org|huggingface\.co|"
                        r"code\.google\.com/p|sourceforge\.net|pypi\.org/project)/\s?[\w.\-/ ]+", re.I)  # fmt: skip
_CODE_SAID = re.compile(
    r"\b(?:our|the|this|its)\s+(?:\w+\s+){0,2}?(?:code|software|implementation|source code|toolkit|tool|library|"
    r"package|system|models?|scripts?)\s+(?:\w+\s+){0,3}?(?:is|are|will be|has been|have been)\s+"
    r"(?:made\s+)?(?:publicly |freely |openly )?(?:available|released|open[- ]sourced?)\b|"
    r"\bwe (?:\w+ )?(?:release|open-source|make (?:\w+ )?available|publish|share|provide)\b[^.]{0,60}?"
    r"\b(?:code|software|implementation|toolkit|source|scripts)\b|\bcode (?:is|are) available\b|"
    r"\b(?:code|software|implementation|librar(?:y|ies)|tools?|toolkit|package) (?:can be|is|are) (?:found|downloaded|"
    r"accessed|obtained)\b|\bwe (?:make|made) [^.]{0,50}?available\b[^.]{0,200}?\b(?:code|software|models?|tools?|"
    r"librar(?:y|ies)|implementation)\b",
    re.I,
)


def _title_words(title: str) -> set[str]:
    return {w.lower() for w in re.findall(r"[A-Za-z]{4,}", title)}


def code_rule(s: Sentence, title: str) -> Found | None:
    said = _CODE_SAID.search(s.plain)
    host = _CODE_HOST.search(s.plain)
    if said and not (OTHERS_DATA.search(s.plain) and not re.search(r"\b(?:we|our)\b", s.plain, re.I)):
        return Found(s, host.group(0).replace(" ", "") if host else said.group(0))
    if host:
        path = re.split(r"[/.\-_]", host.group(0).lower().replace(" ", ""))
        if _title_words(title) & {p for p in path if len(p) >= 4} - {"github", "gitlab", "https", "google"}:
            return Found(
                s, host.group(0).replace(" ", "")
            )  # the paper's own repository: named as in its title
    return None


_DATA_SAID = re.compile(
    r"\bdata availability\b|\ball (?:relevant )?data are (?:within|available|included)\b|"
    r"\b(?:our|the|this|these|all(?: the)?)\s+(?:\w+\s+){0,2}?(?:data|data ?sets?|corpus|corpora|annotations|"
    r"judg(?:e)?ments|benchmark|collection|resources?)\s+(?:\w+\s+){0,3}?(?:is|are|will be|has been|have been)\s+"
    r"(?:made\s+)?(?:publicly |freely |openly )?(?:available|released|deposited|accessible)\b|"
    r"\bwe (?:\w+ )?(?:release|make (?:\w+ )?available|publish|share|provide|open-source)\b[^.]{0,60}?"
    r"\b(?:data|dataset|datasets|corpus|annotations|judg(?:e)?ments|benchmark|training set)\b|"
    r"\bwe (?:make|made) [^.]{0,50}?available\b[^.]{0,200}?\b(?:data|datasets?|corpus|metadata|annotations)\b|"
    r"\b(?:figshare|zenodo|dryad|osf\.io|dataverse|kaggle\.com)\b|\bsupporting information files?\b|"
    r"\b(?:available|provided) (?:from the (?:corresponding )?authors? )?(?:up)?on (?:reasonable )?request\b",
    re.I,
)


data_rule = matched_by(_DATA_SAID)


# ------------------------------------------------------------------ sections: limitations, ethics

LIMITATIONS_TITLE = re.compile(r"limitations?|threats? to validity|weaknesses|局限|不足", re.I)
LIMITATIONS = re.compile(
    r"\b(?:limitations?|shortcomings?|weakness(?:es)?) of (?:this|our|the (?:present|current|proposed)) "
    r"(?:work|study|paper|approach|method|model|system|analysis|evaluation)\b|"
    r"\b(?:this|our|the present|the current) (?:work|study|paper|approach|method|model|system|analysis|evaluation)"
    r" (?:has|have|had|is subject to) (?:\w+ ){0,2}?limitations?\b|"
    r"\b(?:one|a|another|the|main|key|major|several|some|two|three) (?:main |key |major |important |notable )?"
    r"limitations? (?:of (?:this|our)|is|are|was|were)\b|\bthreats? to (?:the )?validity\b",
    re.I,
)
ETHICS_TITLE = re.compile(r"ethic|broader impact|societal impact|伦理", re.I)
ETHICS = re.compile(
    r"\b(?:institutional review board|IRB|ethics (?:committee|board|approval|review|statement)|"
    r"ethical (?:approval|considerations?|statement|review|clearance)|informed consent|"
    r"approved by the [^.]{0,60}(?:committee|board)|human subjects? (?:research|protocol)|"
    r"declaration of helsinki|animal (?:care|welfare) (?:committee|guidelines))\b",
    re.I,
)


def by_title(sentences: list[Sentence], title: re.Pattern, what: str) -> Found | None:
    """The first sentence of a section titled for the item ("Limitations", "Ethical Considerations")."""
    for s in sentences:
        section = re.sub(r"^\W*(?:\d+(?:\.\d+)*|[A-Z])\.?\s+", "", s.passage.section or "")
        if section and len(section) < 60 and title.search(section):
            return Found(s, f"{what} “{section}”")
    return None


# ------------------------------------------------------------------ contributions

_CONTRIBUTIONS = re.compile(
    r"\b(?:our|the|main|key|primary|major) (?:main |key |primary |major )?contributions?"
    r"(?: of (?:this|the|our) (?:paper|work|study))? (?:are|is|include|as follows)\b|"
    r"\bwe (?:propose|present|introduce|develop|describe|release|design)\b|"
    r"\b(?:this|the present|the current|our) (?:paper|work|study|article|note|research) (?:\w+ )?(?:proposes|presents|"
    r"introduces|describes|shows|demonstrates|examines|investigates|reports|focuses|develops|addresses)\b|"
    r"\bin this (?:paper|work|study|article|note),? we\b|"
    r"\bthe (?:main |primary )?(?:objective|aim|goal|purpose)s? of (?:this|the present|the current|our) "
    r"(?:study|research|paper|work|article) (?:was|were|is|are)\b|\bwe are the first\b",
    re.I,
)
_CONTRIBUTION_SECTIONS = re.compile(r"abstract|introduction|^1\b|front matter|^body$|摘要|引言", re.I)


def contributions_rule(sentences: list[Sentence]) -> Found | None:
    hits = [
        s
        for s in sentences
        if _CONTRIBUTIONS.search(s.plain)
        and not AUTHOR_CONTRIBUTIONS.search(s.plain + " " + (s.passage.section or ""))
    ]
    if not hits:
        return None
    best = next((s for s in hits if _CONTRIBUTION_SECTIONS.search(s.passage.section or "")), hits[0])
    return Found(best, short(best.text))
