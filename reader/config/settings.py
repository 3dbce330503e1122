"""The settings, each declared once as a field: type, default, parser and check, help, secret.

The name of a setting is its config file key and, upper-case after READER_, its environment
variable: `crag_threshold`, READER_CRAG_THRESHOLD. `check_together` holds the rules between
settings.
"""

from __future__ import annotations

import os
import re
from dataclasses import dataclass
from pathlib import Path
from urllib.parse import urlsplit

from reader.config.declare import (
    choice,
    fraction,
    group,
    number,
    off_or,
    path,
    setting,
    switch,
    text,
    whole,
)
from reader.errors import ConfigError

EMBEDDED_MODEL_NAME = "qwen2.5-coder-1.5b-instruct-q4_k_m (embedded)"
DEFAULT_EMBED_MODEL = "all-MiniLM-L6-v2 (packaged)"

# the values reader.crag.pipeline.CragConfig accepts for routing, refusal and ungrounded
CRAG_ROUTINGS = ("counts", "confidence")
CRAG_REFUSALS = ("writer", "grader", "p_yes")
CRAG_UNGROUNDED = ("keep", "refuse")
# the services READER_EXTERNAL_SEARCH may name (reader.crag.scholarly.ADAPTERS)
EXTERNAL_SEARCHES = ("semantic-scholar", "arxiv", "openalex")
# where an exported note's cited references may be looked up (reader.export.lookup.SERVICES)
REFERENCE_LOOKUPS = ("off", "crossref", "openalex", "semantic-scholar")


# The verifier accepts a claim when its P(YES) reaches this: the highest threshold that kept false
# flags within 0.05 on half A of eval/audit_dev.jsonl (docs/measurements/audit.md has the curve).
VERIFY_THRESHOLD = 0.17
# llama.cpp's n-gram speculative decoding in the embedded model (reader.llm.local.SPECULATIVE_TYPES)
SPECULATIVE_MODES = ("off", "ngram-simple", "ngram-map-k", "ngram-map-k4v", "ngram-mod", "ngram-cache")
# how ingest finds a PDF's tables (reader.ingest.tables.FINDERS)
TABLE_FINDERS = ("auto", "words", "layout", "lines", "off")
# where `reader import` may fetch a paper by identifier (reader.ingest.fetch.SERVICES)
IMPORT_SERVICES = ("arxiv", "openalex", "unpaywall", "crossref")


def _followup(variable: str, raw) -> int:
    value = str(raw).strip().lower()
    if value in ("off", "no", "none", "0", "false"):
        return 0
    if value in ("on", "yes", "true"):
        return 3
    if value.isdigit() and 1 <= int(value) <= 5:
        return int(value)
    raise ConfigError(f"{variable}={value!r}: use a number of questions from 1 to 5 (default 3), or off")


def parse_import_services(variable: str, raw) -> str:
    names = [n.strip().lower() for n in str(raw).split(",") if n.strip()]
    if names in ([], ["off"], ["none"]):
        return ""
    unknown = [n for n in names if n not in IMPORT_SERVICES]
    if unknown:
        raise ConfigError(
            f"{variable}={raw!r}: unknown service {', '.join(unknown)}; use one or more of "
            f"{', '.join(IMPORT_SERVICES)}, comma-separated, or off"
        )
    return ",".join(dict.fromkeys(names))


def _zotero_library(variable: str, raw) -> str:
    value = str(raw).strip().strip("/")
    if not re.fullmatch(r"(users|groups)/\d+", value):
        raise ConfigError(
            f"{variable}={raw!r}: give users/ID or groups/ID (your user ID is on zotero.org/settings/keys)"
        )
    return value


def default_home() -> Path:
    base = os.environ.get("XDG_DATA_HOME") or str(Path.home() / ".local" / "share")
    return Path(base) / "reader"


@dataclass(frozen=True)
class LLMSettings:
    """One role's endpoint. base_url None means the embedded local model."""

    base_url: str | None
    model: str | None
    api_key: str | None
    timeout_s: float = 120.0
    max_concurrency: int = 4

    @property
    def is_embedded(self) -> bool:
        return not self.base_url

    @property
    def is_scripted(self) -> bool:
        """READER_LLM_BASE_URL=scripted:[latency_ms=N] — the deterministic dry-run LLM."""
        return bool(self.base_url) and self.base_url.startswith("scripted:")

    @property
    def model_name(self) -> str:
        if self.is_embedded:
            return EMBEDDED_MODEL_NAME
        if self.is_scripted:
            return "scripted-dry-run"
        return self.model or "default"


@dataclass(frozen=True)
class CragSettings:
    """How `reader ask` routes, refuses and withholds (reader/crag/, docs/design/ask.md): the settings
    `reader calibrate` grids and `--write` stores. reader.crag.pipeline.CragConfig adds the
    pipeline's fixed parts."""

    routing: str = setting(
        "counts",
        parse=choice(CRAG_ROUTINGS, "use counts or confidence"),
        help="how `reader ask` routes after grading: `counts` (correct when two passages reach the "
        "threshold) or `confidence` (the best passage's P(YES) blended with its rank, against "
        "theta_high / theta_low; passages kept by P(YES); a low route also consults the fallback "
        "sources)",
    )
    threshold: float = setting(0.6, parse=fraction(), help="the grade a passage needs to count as evidence")
    theta_high: float = setting(
        0.7, parse=fraction(), help="confidence routing: from here the route is correct"
    )
    theta_low: float = setting(
        0.3, parse=fraction(), help="confidence routing: below here the route is incorrect"
    )
    quote_threshold: float | None = setting(
        0.9,
        parse=off_or(fraction(", or be off (never quote a passage when the writer refuses)")),
        unset="off",
        none_as="off",
        help="the grader's P(YES) at which a refused answer quotes the passage instead (`off`: never)",
    )
    refusal: str = setting(
        "p_yes",
        parse=choice(
            CRAG_REFUSALS,
            "use writer (the answer prompt may say not found), grader (on a "
            "correct route it may not) or p_yes (the grader's P(YES) decides "
            "whether to answer)",
        ),
        help='who may answer "not found" once evidence was kept: `p_yes` (the best passage\'s P(YES) '
        "decides; the writer reads the passages at evidence_p_yes whole; without log-probabilities "
        "as `writer`), `writer` (the answer prompt offers it on every route) or `grader` (not on a "
        "correct route). The 1.5B grader's YES/NO verdict dropped passages that held the answer "
        "(18 -> 10 of 19 development questions) and refinement more (-> 7), and its writer refused "
        "with the answer in hand (docs/measurements/ask.md)",
    )
    ungrounded: str = setting(
        "refuse",
        parse=choice(
            CRAG_UNGROUNDED,
            "use keep (return an unsupported answer marked ungrounded) or refuse (withhold it: not found)",
        ),
        help="an answer the groundedness check finds unsupported is cut to the sentences it found "
        "supported, or withheld when none of them answers (`refuse`: not found; what was left out and "
        "why in the notes), or returned whole, marked ungrounded (`keep`); a check that timed out or "
        "failed never withholds",
    )
    answer_p_yes: float = setting(
        0.3,
        parse=fraction(),
        help="with `p_yes`: the best P(YES) at which the writer must answer (below: not found, the writer "
        "not asked); 0.3 with the relevance grader (its P(relevant), blended with the LLM's P(YES) "
        'where both graded), chosen on the 27 development questions (docs/design/ask.md, "The trained '
        "relevance grader\"); 0.5 was the LLM grader's",
    )
    evidence_p_yes: float = setting(
        0.3,
        parse=fraction(),
        help="with `p_yes`: the P(YES) a passage needs to be read by the writer (never one a grader "
        "rejected; the relevance grader's best window of it, else whole)",
    )
    grader: bool = setting(
        True,
        parse=switch(
            "use on (the trained relevance grader grades every passage, the LLM what it is unsure of) "
            "or off (the LLM grades every passage)"
        ),
        help="the trained relevance grader (reader/grader/): on, it grades every retrieved passage "
        "(its best window becomes what the writer reads) and decides at or below grader_low (not "
        "relevant) or at or above grader_high (relevant); the LLM grades the passages between, and "
        "their P(YES) is the mean of both",
    )
    grader_low: float = setting(
        0.015,
        parse=fraction(" (the relevance grader's P(relevant))"),
        help="at or below it a passage is not relevant, with no LLM call",
    )
    grader_high: float = setting(
        0.5,
        parse=fraction(" (the relevance grader's P(relevant))"),
        help="at or above it a passage is relevant, with no LLM call",
    )


def _hide_password(url: str, settings) -> str:
    """postgresql://user:pass@host/db -> postgresql://user:****@host/db"""
    if "@" in url:
        head, tail = url.split("@", 1)
        if ":" in head.split("//", 1)[-1]:
            return head.rsplit(":", 1)[0] + ":****@" + tail
    return url


def _home(variable: str, raw) -> Path:
    home = path(variable, raw)
    if home.exists() and not home.is_dir():
        raise ConfigError(f"{variable}={home} is not a folder: set it to a folder (created when missing)")
    return home


_DATABASE_SCHEME = re.compile(r"([A-Za-z][A-Za-z0-9]*)(\+[A-Za-z0-9_]+)?://")


def _database_url(variable: str, raw) -> str:
    """A SQLAlchemy URL of a database reader runs on: SQLite or PostgreSQL."""
    url = str(raw).strip()
    scheme = _DATABASE_SCHEME.match(url)
    use = "use sqlite:////path/to/reader.db or postgresql+psycopg://user@host/db"
    if scheme is None:
        raise ConfigError(f"{variable}={_hide_password(url, None)!r} is not a database URL: {use}")
    if scheme.group(1).lower() not in ("sqlite", "postgresql"):
        raise ConfigError(
            f"{variable}={_hide_password(url, None)!r}: {scheme.group(1)} is not supported "
            f"(reader stores in SQLite or PostgreSQL); {use}"
        )
    return url


def _endpoint(variable: str, raw) -> str:
    """An OpenAI-compatible endpoint (http or https), or scripted: for the dry-run LLM."""
    url = str(raw).strip()
    if url.startswith("scripted:"):
        return url
    parts = urlsplit(url)
    if parts.scheme.lower() not in ("http", "https") or not parts.netloc:
        raise ConfigError(
            f"{variable}={_hide_password(url, None)!r} is not an endpoint URL: use "
            "http(s)://host:port/v1 (OpenAI-compatible), scripted: for the dry-run LLM, or unset it "
            "for the embedded model"
        )
    return url


_LANGUAGE_NAMES = {"english": "en", "chinese": "zh"}


def _language(variable: str, raw) -> str:
    """en or zh (a region tag such as zh-CN, or the language's English name, is accepted)."""
    value = str(raw).strip().lower().replace("_", "-")
    value = _LANGUAGE_NAMES.get(value, value)
    if not re.fullmatch(r"(en|zh)(-[a-z0-9]+)*", value):
        raise ConfigError(f"{variable}={raw!r}: use en or zh, or unset it to write in the paper's language")
    return value[:2]


def _searches(variable: str, raw) -> str:
    """A comma-separated list of EXTERNAL_SEARCHES, or off."""
    value = str(raw).strip()
    names = [name.strip().lower() for name in value.split(",") if name.strip()]
    if names in ([], ["off"], ["none"]):
        return value
    unknown = [name for name in names if name not in EXTERNAL_SEARCHES]
    if unknown:
        raise ConfigError(
            f"{variable}={value!r}: unknown external search {', '.join(unknown)}; use one or more of "
            f"{', '.join(EXTERNAL_SEARCHES)}, comma-separated, or off"
        )
    return value


_HUB_NAME = re.compile(r"[A-Za-z0-9][\w.-]*(/[\w.-]+)?")


def _embed_model(variable: str, raw) -> str:
    """A model folder, or a name in the Hugging Face hub's form (owner/name)."""
    value = str(raw).strip()
    folder = Path(value).expanduser()
    if folder.is_dir():
        return value
    if value.startswith(("/", ".", "~")) or folder.exists():
        raise ConfigError(
            f"{variable}={value!r}: no such model folder; set it to a folder holding an embedding "
            "model, or unset it for the packaged all-MiniLM-L6-v2"
        )
    if len(value) > 96 or not _HUB_NAME.fullmatch(value):
        raise ConfigError(
            f"{variable}={value!r} is neither a model folder nor a hub model name (owner/name, "
            "e.g. BAAI/bge-small-en-v1.5); unset it for the packaged all-MiniLM-L6-v2"
        )
    return value


def _checker_band(on: bool, settings) -> str:
    if not on:
        return "off (the verifier decides every sentence)"
    return f"on (sure at P ≤ {settings.checker_low:g} or ≥ {settings.checker_high:g}; 0 and 1: never)"


@dataclass(frozen=True, kw_only=True)
class Settings:
    home: Path = setting(
        parse=_home,
        derive=lambda values: default_home(),
        help="database, search index, assembled model, uploads (default ~/.local/share/reader)",
    )
    config_file: Path | None = setting(
        None,
        name="config",
        parse=path,
        in_file=False,
        unset="(none)",
        help="the TOML config file (default: $READER_HOME/config.toml when it exists)",
    )
    database_url: str = setting(
        parse=_database_url,
        derive=lambda values: f"sqlite:///{values['home'] / 'reader.db'}",
        show=_hide_password,
        help='SQLAlchemy URL (`postgresql+psycopg://…` works; `pip install -e ".[postgres]"`); default: '
        "a SQLite file in READER_HOME",
    )
    llm_base_url: str | None = setting(
        None,
        parse=_endpoint,
        unset="(embedded local model)",
        help="OpenAI-compatible endpoint of the generator (OpenAI, DeepSeek, vLLM, Ollama, llama.cpp "
        "server); unset: the embedded model; `scripted:` the deterministic dry-run LLM",
    )
    llm_model: str | None = setting(
        None, parse=text, show=lambda _, s: s.generator.model_name, help="the generator's model"
    )
    llm_api_key: str | None = setting(None, parse=text, secret=True, help="the generator's key")
    verifier_base_url: str | None = setting(
        parse=_endpoint,
        derive=lambda values: values["llm_base_url"],
        unset="(embedded local model)",
        help="an independent checker for the audit and the groundedness check (default: the generator's)",
    )
    verifier_model: str | None = setting(
        parse=text,
        derive=lambda values: values["llm_model"],
        show=lambda _, s: s.verifier.model_name,
        help="the verifier's model",
    )
    verifier_api_key: str | None = setting(
        parse=text, derive=lambda values: values["llm_api_key"], secret=True, help="the verifier's key"
    )
    llm_timeout: float = setting(
        120.0,
        parse=number(lambda v: v > 0, "must be a positive number of seconds (default 120)"),
        unit=" s",
        help="per-call timeout of both roles",
    )
    llm_concurrency: int = setting(
        4,
        parse=whole(lambda v: v >= 1, "must be 1 or more (concurrent calls per endpoint; default 4)"),
        help="concurrent calls per endpoint",
    )
    speculative: str = setting(
        "off",
        parse=choice(SPECULATIVE_MODES, "use off, " + ", ".join(SPECULATIVE_MODES[1:])),
        help="the embedded model's speculative decoding: llama.cpp drafts from n-grams of the prompt "
        "and the reply so far and checks each draft in one batch (lossless under greedy decoding); "
        'measured per prompt kind in docs/measurements/llm.md, "Speculative decoding"',
    )
    embed_model: str | None = setting(
        None,
        parse=_embed_model,
        unset=DEFAULT_EMBED_MODEL,
        help="any FlagEmbedding-loadable model: a local directory, or a hub name (owner/name) already in "
        "the local Hugging Face cache; nothing is downloaded unless HF_HUB_OFFLINE=0",
    )
    cache: bool = setting(
        True,
        parse=switch("use on or off (off: every call asks the LLM again)"),
        help="response cache (`0` turns it off; `--no-cache` for one command)",
    )
    output_language: str | None = setting(
        None,
        parse=_language,
        unset="(follow the paper)",
        help="`en` or `zh`; otherwise the output follows the paper's language",
    )
    upload_limit_mb: int = setting(
        50,
        parse=whole(lambda v: v >= 1, "must be 1 or more (megabytes per uploaded file; default 50)"),
        help="web upload limit per file",
    )
    ingest_max_mb: int = setting(
        200,
        parse=whole(lambda v: v >= 1, "must be 1 or more (MB; the largest file ingest reads; default 200)"),
        unit=" MB",
        help="the largest file ingest reads; a larger one is refused before it is read",
    )
    ingest_memory_mb: int = setting(
        1024,
        parse=whole(lambda v: v >= 16, "must be 16 or more (MB one PDF's parsing may take; default 1024)"),
        unit=" MB",
        help="memory parsing one PDF may take (in a child process); a PDF that needs more, such as "
        "a small file whose compressed streams expand to gigabytes, is refused",
    )
    ingest_timeout: float = setting(
        120.0,
        parse=number(
            lambda v: 0 < v < float("inf"),
            "must be a positive number of seconds (how long parsing one PDF may take; default 120)",
        ),
        unit=" s",
        help="how long parsing one PDF may take; a longer parse is stopped and the file refused",
    )
    ingest_max_pages: int = setting(
        2000,
        parse=whole(lambda v: v >= 1, "must be 1 or more (pages of one PDF; default 2000)"),
        help="the most pages a PDF may have to be ingested",
    )
    figures: bool = setting(
        True,
        parse=switch("use on or off (off: ingest stores no figures and their pictures)"),
        help="ingest finds each figure caption's picture and stores it (docs/design/figures.md)",
    )
    tables: str = setting(
        "auto",
        parse=choice(TABLE_FINDERS, "use auto, words, layout, lines or off"),
        help="how ingest finds a PDF's tables next to their captions (docs/design/tables.md): auto (word "
        "positions, pymupdf's layout model for a caption they cannot place), words, layout, lines or off",
    )
    web_token: str | None = setting(
        None, parse=text, secret=True, help="a token required by every web request"
    )
    web_accounts: bool = setting(
        False,
        parse=switch("use on (people sign in with `reader user add` accounts) or off"),
        help="`reader serve` asks people to sign in with their accounts (`reader user add NAME`); each "
        "keeps their own judgements and highlights (`reader serve --accounts` for one run)",
    )
    verify_threshold: float = setting(
        VERIFY_THRESHOLD,
        parse=fraction(" (a probability; lower flags fewer sentences)"),
        help="the verifier's P(YES) from which a claim counts as supported (without log-probabilities "
        "its first word decides); 0.17 kept false flags within 0.05 on half A of eval/audit_dev.jsonl "
        "(docs/measurements/audit.md has the curve)",
    )
    checker: bool = setting(
        False,
        show=_checker_band,
        parse=switch(
            "use on (the trained claim checker decides what it is sure of) or off (the verifier "
            "decides every sentence)"
        ),
        help="the trained claim checker (reader/checker/); on, it decides a sentence it scores at or below "
        "checker_low (unsupported) or at or above checker_high (supported), the verifier the rest. "
        "Off by default: on half A of eval/audit_dev.jsonl no band beat the verifier (docs/design/audit.md, "
        '"The claim checker"), so deciding nothing it would only cost each process its load',
    )
    checker_low: float = setting(
        0.0,
        parse=fraction(" (the claim checker's P(supported))"),
        help="at or below it the checker calls a sentence unsupported; 0 and 1 (the default band): it "
        "scores and records every sentence but decides none",
    )
    checker_high: float = setting(
        1.0,
        parse=fraction(" (the claim checker's P(supported))"),
        help="at or above it the checker calls a sentence supported",
    )
    verify_control: str = setting(
        "auto",
        parse=choice(
            ("auto", "on", "off"),
            "use auto (on for an endpoint verifier, off for the embedded model), on or off",
        ),
        help="one claim false by construction in each verify batch; a reply that does not reject it is "
        "not trusted (reader.audit.control). `auto`: on for an endpoint verifier, off for the embedded "
        "1.5B model, which wrote YES to the control of batches holding 112 of 203 development sentences "
        "and would leave them unchecked (docs/measurements/audit.md)",
    )
    extraction: bool = setting(
        True,
        parse=switch(
            "use on (numbers and comparisons are also checked by extraction) or off (the checker "
            "and the verifier alone)"
        ),
        help="a sentence's number or comparison is blanked over its best excerpt and the verifier asked "
        "to fill the blank from the passage (reader.audit.extraction): an answer that differs flags the "
        "sentence with the passage's answer quoted (no verifier call), one that agrees is a second "
        "signal (docs/design/audit.md); with the claim checker on or off",
    )
    queue_lease_s: float = setting(
        60.0,
        name="queue_lease",
        unit=" s",
        parse=number(
            lambda v: v > 0,
            "must be a positive number of seconds (how long a worker holds a "
            "paper without a heartbeat; default 60)",
        ),
        help="the review queue (docs/guide/scale.md): how long a worker's claim on a paper lasts unless its "
        "heartbeat renews it",
    )
    queue_attempts: int = setting(
        3,
        parse=whole(
            lambda v: v >= 1,
            "must be 1 or more (attempts a queued paper gets before it is marked failed; default 3)",
        ),
        help="attempts a queued paper gets before it is marked failed",
    )
    database_patience_s: float = setting(
        300.0,
        name="database_patience",
        unit=" s",
        parse=number(
            lambda v: v >= 0,
            "must be 0 or more seconds (how long a worker waits for a database server that went "
            "away; default 300)",
        ),
        help="how long review workers wait, retrying with back-off, for a database server that went "
        "away (a restart) before they stop with the papers left in the queue",
    )
    review_near_duplicates: bool = setting(
        False,
        parse=switch(
            "use off (a version of a paper already reviewed is ingested but not reviewed) or on "
            "(it is reviewed in full like any other paper)"
        ),
        help="review a near-duplicate in full: another file of a paper already reviewed (the same DOI, "
        "or the same title and nearly the same text), which is otherwise ingested but not reviewed, its "
        "job ending as near-duplicate (`reader review --force` reviews one; docs/guide/review.md)",
    )
    workers: bool = setting(
        False,
        show=lambda on, _: "on (uploads go to the queue)" if on else "off",
        parse=switch(
            "use on (the web server only queues uploads; `reader worker` reviews them) or off "
            "(a worker thread of the server reviews them)"
        ),
        help="the web server only queues uploads and `reader worker` reviews them, instead of a "
        "worker thread of the server",
    )
    external_search: str = setting(
        "",
        parse=_searches,
        unset="off (nothing leaves the machine)",
        help="scholarly search when the papers do not answer a question: `semantic-scholar`, `arxiv`, "
        "`openalex`, comma-separated (`reader ask --external` for one question); the question leaves "
        "the machine for each service named",
    )
    reference_lookup: str = setting(
        "off",
        show=lambda value, _: "off (nothing leaves the machine)" if value == "off" else value,
        parse=choice(REFERENCE_LOOKUPS, "use off, crossref, openalex or semantic-scholar"),
        help="look up each reference cited in an exported note there (`reader export --lookup` for one "
        "export); an entry the service does not know gets ⚠ and a reason in the note. The entries' "
        "text leaves the machine",
    )
    semantic_scholar_key: str | None = setting(
        None, parse=text, secret=True, help="optional Semantic Scholar API key"
    )
    openalex_mailto: str | None = setting(
        None, parse=text, unset="(none)", help="an address for OpenAlex's polite pool"
    )
    followup: int = setting(
        3,
        show=lambda n, _: "off" if not n else f"{n} questions",
        parse=_followup,
        help="after a deep read whose audit passed, this many follow-up questions (3 to 5) are written "
        "from the review's open points and answered from the paper with sources (`off` or 0: none; "
        "`reader read --no-followup` for one read)",
    )
    import_services: str = setting(
        "",
        parse=parse_import_services,
        unset="off (nothing leaves the machine)",
        help="where `reader import` may fetch a paper named by DOI or arXiv id: `arxiv`, `openalex`, "
        "`unpaywall`, `crossref`, comma-separated (`reader import --services` for one import); the "
        "identifier leaves the machine for each service named, and an open-access PDF is downloaded "
        "from where they point",
    )
    zotero_library: str | None = setting(
        None,
        parse=_zotero_library,
        unset="(none)",
        help="the Zotero web library that `reader zotero-note` writes child notes into: `users/ID` "
        "(your user ID, zotero.org/settings/keys) or `groups/ID`",
    )
    zotero_api_key: str | None = setting(
        None,
        parse=text,
        secret=True,
        help="a Zotero web API key with write access to that library (zotero.org/settings/keys)",
    )
    crag: CragSettings = group(CragSettings, "crag_")

    @property
    def generator(self) -> LLMSettings:
        return LLMSettings(
            self.llm_base_url,
            self.llm_model,
            self.llm_api_key,
            timeout_s=self.llm_timeout,
            max_concurrency=self.llm_concurrency,
        )

    @property
    def verifier(self) -> LLMSettings:
        return LLMSettings(
            self.verifier_base_url,
            self.verifier_model,
            self.verifier_api_key,
            timeout_s=self.llm_timeout,
            max_concurrency=self.llm_concurrency,
        )

    @property
    def index_dir(self) -> Path:
        return self.home / "index"

    @property
    def models_dir(self) -> Path:
        return self.home / "models"


def check_together(values: dict) -> None:
    """The rules between settings, on the parsed values by name."""
    if values["checker_low"] > values["checker_high"]:
        raise ConfigError(
            f"READER_CHECKER_LOW={values['checker_low']!r} must not exceed "
            f"READER_CHECKER_HIGH={values['checker_high']!r}: between the two the verifier decides"
        )
    if values["crag_theta_low"] >= values["crag_theta_high"]:
        raise ConfigError(
            f"READER_CRAG_THETA_LOW={values['crag_theta_low']!r} must be below "
            f"READER_CRAG_THETA_HIGH={values['crag_theta_high']!r}"
        )
    if values["crag_grader_low"] > values["crag_grader_high"]:
        raise ConfigError(
            f"READER_CRAG_GRADER_LOW={values['crag_grader_low']!r} must not exceed "
            f"READER_CRAG_GRADER_HIGH={values['crag_grader_high']!r}: between the two the LLM grades"
        )
    if values["crag_evidence_p_yes"] > values["crag_answer_p_yes"]:
        raise ConfigError(
            f"READER_CRAG_EVIDENCE_P_YES={values['crag_evidence_p_yes']!r} must not exceed "
            f"READER_CRAG_ANSWER_P_YES={values['crag_answer_p_yes']!r}: the passage that makes "
            "the writer answer must be among the passages it reads"
        )
