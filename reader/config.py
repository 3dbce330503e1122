"""Settings from READER_* environment variables and an optional TOML config file.

Precedence: environment variable > config file > default. The config file is
READER_CONFIG if set, else $READER_HOME/config.toml if it exists. Keys in the
file are the variable names without the READER_ prefix, lower-case
(e.g. `llm_base_url = "http://127.0.0.1:8080/v1"`).

READER_LLM_BASE_URL=scripted: (or scripted:latency_ms=200) selects the
deterministic dry-run LLM (reader/llm/dryrun.py) instead of a model: for
trying the pipeline end to end and for subprocess tests.
"""

from __future__ import annotations

import os
import tomllib
from dataclasses import dataclass
from pathlib import Path

from reader.errors import ConfigError

EMBEDDED_MODEL_NAME = "qwen2.5-coder-1.5b-instruct-q4_k_m (embedded)"
DEFAULT_EMBED_MODEL = "all-MiniLM-L6-v2 (packaged)"


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
class Settings:
    home: Path
    database_url: str
    generator: LLMSettings
    verifier: LLMSettings
    embed_model: str | None  # None: the packaged all-MiniLM-L6-v2
    upload_limit_mb: int = 50
    web_token: str | None = None
    output_language: str | None = None  # None: follow the paper
    cache: bool = True
    config_file: Path | None = None
    # The verifier's P(YES) from which a claim counts as supported; None: the audit's default.
    verify_threshold: float | None = None
    # The trained claim checker (reader/audit/checking.py), off by default; on, it decides a
    # sentence it scores at or below checker_low (unsupported) or at or above checker_high
    # (supported), and the verifier decides the rest. 0 and 1: it scores and records every
    # sentence and orders its evidence but decides none, since on half A of eval/audit_dev.jsonl
    # no band beat the verifier without reducing it to "every English sentence passes"
    # (docs/audit.md, "The claim checker"). Off, since deciding nothing it would only cost each
    # process the model's load.
    checker: bool = False
    checker_low: float = 0.0
    checker_high: float = 1.0
    # The review queue (reader/queue.py, docs/scale.md): how long a worker's claim on a paper
    # lasts unless its heartbeat renews it, how many attempts a paper gets before it is marked
    # failed, and whether uploads go to the queue (`reader worker` processes them) or are
    # reviewed in the uploading process.
    queue_lease_s: float = 60.0
    queue_attempts: int = 3
    workers: bool = False
    # Scholarly search beyond the library, off unless named ("arxiv,openalex"; reader/crag/scholarly.py):
    # the question leaves the machine for each service named. Optional Semantic Scholar key and
    # an address for OpenAlex's polite pool.
    external_search: str = ""
    # The question pipeline's routing (reader/crag/route.py), as `reader calibrate --write` stores it.
    crag_routing: str = "counts"
    crag_threshold: float = 0.6
    crag_theta_high: float = 0.7
    crag_theta_low: float = 0.3
    crag_quote_threshold: float | None = 0.9
    crag_refusal: str = "p_yes"
    # answer_p_yes 0.5 with unsupported answers withheld: chosen by `reader calibrate` on the 27
    # development questions and confirmed on the 61 held-out ones (docs/ask.md).
    crag_answer_p_yes: float = 0.5
    crag_evidence_p_yes: float = 0.3
    crag_ungrounded: str = "refuse"
    semantic_scholar_key: str | None = None
    openalex_mailto: str | None = None

    @property
    def index_dir(self) -> Path:
        return self.home / "index"

    @property
    def models_dir(self) -> Path:
        return self.home / "models"


# the values reader.crag.pipeline.CragConfig accepts for routing, refusal and ungrounded
CRAG_ROUTINGS = ("counts", "confidence")
CRAG_REFUSALS = ("writer", "grader", "p_yes")
CRAG_UNGROUNDED = ("keep", "refuse")

_KEYS = [
    "home", "database_url", "llm_base_url", "llm_model", "llm_api_key",
    "verifier_base_url", "verifier_model", "verifier_api_key", "embed_model",
    "llm_timeout", "llm_concurrency", "upload_limit_mb", "web_token",
    "output_language", "cache", "verify_threshold", "checker", "checker_low", "checker_high", "queue_lease", "queue_attempts", "workers",
    "external_search", "semantic_scholar_key", "openalex_mailto",
    "crag_routing", "crag_threshold", "crag_theta_high", "crag_theta_low", "crag_quote_threshold",
    "crag_refusal", "crag_answer_p_yes", "crag_evidence_p_yes", "crag_ungrounded",
]


def _read_file(path: Path) -> dict:
    try:
        with open(path, "rb") as fh:
            data = tomllib.load(fh)
    except OSError as exc:
        raise ConfigError(f"config file {path}: cannot read it ({exc.strerror})") from exc
    except tomllib.TOMLDecodeError as exc:
        raise ConfigError(f"config file {path}: not valid TOML ({exc})") from exc
    unknown = sorted(set(data) - set(_KEYS))
    if unknown:
        raise ConfigError(f"config file {path}: unknown keys {unknown}; known keys: {_KEYS}")
    return data


def load_settings(env: dict | None = None) -> Settings:
    env = dict(os.environ if env is None else env)
    home = Path(env.get("READER_HOME") or default_home()).expanduser()
    config_path = env.get("READER_CONFIG")
    file_data: dict = {}
    config_file = None
    if config_path:
        config_file = Path(config_path).expanduser()
        file_data = _read_file(config_file)
    elif (home / "config.toml").is_file():
        config_file = home / "config.toml"
        file_data = _read_file(config_file)
    if "home" in file_data and not env.get("READER_HOME"):
        home = Path(file_data["home"]).expanduser()

    def get(key: str, default=None):
        value = env.get("READER_" + key.upper())
        if value not in (None, ""):
            return value
        value = file_data.get(key)
        return default if value in (None, "") else value

    def get_int(key: str, default: int) -> int:
        raw = get(key, default)
        try:
            return int(raw)
        except (TypeError, ValueError):
            raise ConfigError(f"READER_{key.upper()}={raw!r} is not a whole number") from None

    def get_float(key: str, default: float) -> float:
        raw = get(key, default)
        try:
            return float(raw)
        except (TypeError, ValueError):
            raise ConfigError(f"READER_{key.upper()}={raw!r} is not a number") from None

    timeout = get_float("llm_timeout", 120.0)
    concurrency = get_int("llm_concurrency", 4)
    generator = LLMSettings(
        base_url=get("llm_base_url"),
        model=get("llm_model"),
        api_key=get("llm_api_key"),
        timeout_s=timeout,
        max_concurrency=concurrency,
    )
    verifier_url = get("verifier_base_url")
    verifier = LLMSettings(
        base_url=verifier_url or generator.base_url,
        model=get("verifier_model") or generator.model,
        api_key=get("verifier_api_key") or generator.api_key,
        timeout_s=timeout,
        max_concurrency=concurrency,
    )
    database_url = get("database_url") or f"sqlite:///{home / 'reader.db'}"
    cache_raw = str(get("cache", "1")).lower()
    verify_threshold = get("verify_threshold")
    if verify_threshold is not None:
        verify_threshold = get_float("verify_threshold", 0.0)
        if not 0.0 <= verify_threshold <= 1.0:
            raise ConfigError(f"READER_VERIFY_THRESHOLD={verify_threshold!r} must lie between 0 and 1 "
                              "(a probability; lower flags fewer sentences)")
    checker_raw = str(get("checker", "on" if Settings.checker else "off")).strip().lower()
    if checker_raw not in ("on", "off", "1", "0", "true", "false", "yes", "no"):
        raise ConfigError(f"READER_CHECKER={checker_raw!r}: use on (the trained claim checker decides what it "
                          "is sure of) or off (the verifier decides every sentence)")
    checker_low = get_float("checker_low", Settings.checker_low)
    checker_high = get_float("checker_high", Settings.checker_high)
    for name, value in (("LOW", checker_low), ("HIGH", checker_high)):
        if not 0.0 <= value <= 1.0:
            raise ConfigError(f"READER_CHECKER_{name}={value!r} must lie between 0 and 1 "
                              "(the claim checker's P(supported))")
    if checker_low > checker_high:
        raise ConfigError(f"READER_CHECKER_LOW={checker_low!r} must not exceed READER_CHECKER_HIGH={checker_high!r}: "
                          "between the two the verifier decides")
    queue_lease = get_float("queue_lease", 60.0)
    if not queue_lease > 0:
        raise ConfigError(f"READER_QUEUE_LEASE={queue_lease!r} must be a positive number of seconds "
                          "(how long a worker holds a paper without a heartbeat; default 60)")
    queue_attempts = get_int("queue_attempts", 3)
    if queue_attempts < 1:
        raise ConfigError(f"READER_QUEUE_ATTEMPTS={queue_attempts!r} must be 1 or more "
                          "(attempts a queued paper gets before it is marked failed; default 3)")
    crag_routing = str(get("crag_routing") or Settings.crag_routing).strip().lower()
    if crag_routing not in CRAG_ROUTINGS:
        raise ConfigError(f"READER_CRAG_ROUTING={crag_routing!r}: use counts or confidence")
    crag = {name: get_float(f"crag_{name}", default)
            for name, default in ((name, getattr(Settings, f"crag_{name}"))
                                  for name in ("threshold", "theta_high", "theta_low", "answer_p_yes", "evidence_p_yes"))}
    for name, value in crag.items():
        if not 0.0 <= value <= 1.0:
            raise ConfigError(f"READER_CRAG_{name.upper()}={value!r} must lie between 0 and 1")
    if crag["theta_low"] >= crag["theta_high"]:
        raise ConfigError(f"READER_CRAG_THETA_LOW={crag['theta_low']!r} must be below "
                          f"READER_CRAG_THETA_HIGH={crag['theta_high']!r}")
    if crag["evidence_p_yes"] > crag["answer_p_yes"]:
        raise ConfigError(f"READER_CRAG_EVIDENCE_P_YES={crag['evidence_p_yes']!r} must not exceed "
                          f"READER_CRAG_ANSWER_P_YES={crag['answer_p_yes']!r}: the passage that makes "
                          "the writer answer must be among the passages it reads")
    quote_raw = str(get("crag_quote_threshold", Settings.crag_quote_threshold)).strip().lower()
    if quote_raw in ("off", "none", "no", ""):
        crag_quote = None
    else:
        crag_quote = get_float("crag_quote_threshold", Settings.crag_quote_threshold)
        if not 0.0 <= crag_quote <= 1.0:
            raise ConfigError(f"READER_CRAG_QUOTE_THRESHOLD={crag_quote!r} must lie between 0 and 1, "
                              "or be off (never quote a passage when the writer refuses)")
    crag_refusal = str(get("crag_refusal") or Settings.crag_refusal).strip().lower()
    if crag_refusal not in CRAG_REFUSALS:
        raise ConfigError(f"READER_CRAG_REFUSAL={crag_refusal!r}: use writer (the answer prompt may say "
                          "not found), grader (on a correct route it may not) or p_yes (the grader's "
                          "P(YES) decides whether to answer)")
    crag_ungrounded = str(get("crag_ungrounded") or Settings.crag_ungrounded).strip().lower()
    if crag_ungrounded not in CRAG_UNGROUNDED:
        raise ConfigError(f"READER_CRAG_UNGROUNDED={crag_ungrounded!r}: use keep (return an unsupported "
                          "answer marked ungrounded) or refuse (withhold it: not found)")
    return Settings(
        home=home,
        database_url=database_url,
        generator=generator,
        verifier=verifier,
        embed_model=get("embed_model"),
        upload_limit_mb=get_int("upload_limit_mb", 50),
        web_token=get("web_token"),
        output_language=get("output_language"),
        cache=cache_raw not in ("0", "false", "no", "off"),
        config_file=config_file,
        verify_threshold=verify_threshold,
        checker=checker_raw in ("on", "1", "true", "yes"),
        checker_low=checker_low,
        checker_high=checker_high,
        queue_lease_s=queue_lease,
        queue_attempts=queue_attempts,
        workers=str(get("workers", "0")).lower() in ("1", "true", "yes", "on"),
        external_search=str(get("external_search") or "").strip(),
        semantic_scholar_key=get("semantic_scholar_key") or None,
        openalex_mailto=get("openalex_mailto") or None,
        crag_routing=crag_routing,
        crag_threshold=crag["threshold"],
        crag_theta_high=crag["theta_high"],
        crag_theta_low=crag["theta_low"],
        crag_quote_threshold=crag_quote,
        crag_refusal=crag_refusal,
        crag_answer_p_yes=crag["answer_p_yes"],
        crag_evidence_p_yes=crag["evidence_p_yes"],
        crag_ungrounded=crag_ungrounded,
    )


def write_config_values(path: Path, values: dict) -> Path:
    """Set these keys in the TOML config file at `path` (created if missing), keeping its other
    lines; a key already set on a line of its own is replaced there."""
    lines = path.read_text(encoding="utf-8").splitlines() if path.is_file() else []
    for key, value in values.items():
        if key not in _KEYS:
            raise ConfigError(f"{key!r} is not a setting; known keys: {_KEYS}")
        literal = f'"{value}"' if isinstance(value, str) else repr(value)
        line = f"{key} = {literal}"
        at = next((i for i, old in enumerate(lines) if old.split("=", 1)[0].strip() == key), None)
        if at is None:
            lines.append(line)
        else:
            lines[at] = line
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text("\n".join(lines) + "\n", encoding="utf-8")
    return path


def mask(secret: str | None) -> str:
    if not secret:
        return "(not set)"
    return secret[:3] + "…" + "*" * 4 if len(secret) > 8 else "****"


def describe(settings: Settings) -> list[tuple[str, str]]:
    """The effective settings as (name, value) rows with secrets masked."""

    def llm_rows(prefix: str, s: LLMSettings) -> list[tuple[str, str]]:
        return [
            (f"{prefix}_BASE_URL", s.base_url or "(embedded local model)"),
            (f"{prefix}_MODEL", s.model_name),
            (f"{prefix}_API_KEY", mask(s.api_key)),
        ]

    db = settings.database_url
    if "@" in db:  # hide a password in postgresql://user:pass@host/db
        head, tail = db.split("@", 1)
        if ":" in head.split("//", 1)[-1]:
            db = head.rsplit(":", 1)[0] + ":****@" + tail
    return [
        ("READER_HOME", str(settings.home)),
        ("READER_CONFIG", str(settings.config_file) if settings.config_file else "(none)"),
        ("READER_DATABASE_URL", db),
        *llm_rows("READER_LLM", settings.generator),
        *llm_rows("READER_VERIFIER", settings.verifier),
        ("READER_EMBED_MODEL", settings.embed_model or DEFAULT_EMBED_MODEL),
        ("READER_LLM_TIMEOUT", f"{settings.generator.timeout_s:g} s"),
        ("READER_LLM_CONCURRENCY", str(settings.generator.max_concurrency)),
        ("READER_CACHE", "on" if settings.cache else "off"),
        ("READER_OUTPUT_LANGUAGE", settings.output_language or "(follow the paper)"),
        ("READER_VERIFY_THRESHOLD", "(default)" if settings.verify_threshold is None
         else f"{settings.verify_threshold:g}"),
        ("READER_CHECKER", f"on (sure at P ≤ {settings.checker_low:g} or ≥ {settings.checker_high:g}; 0 and 1: never)"
         if settings.checker else "off (the verifier decides every sentence)"),
        ("READER_CHECKER_LOW", f"{settings.checker_low:g}"),
        ("READER_CHECKER_HIGH", f"{settings.checker_high:g}"),
        ("READER_QUEUE_LEASE", f"{settings.queue_lease_s:g} s"),
        ("READER_QUEUE_ATTEMPTS", str(settings.queue_attempts)),
        ("READER_WORKERS", "on (uploads go to the queue)" if settings.workers else "off"),
        ("READER_EXTERNAL_SEARCH", settings.external_search or "off (nothing leaves the machine)"),
        ("READER_SEMANTIC_SCHOLAR_KEY", mask(settings.semantic_scholar_key)),
        ("READER_OPENALEX_MAILTO", settings.openalex_mailto or "(none)"),
        ("READER_CRAG_ROUTING", settings.crag_routing + (
            f" (threshold {settings.crag_threshold:g}, theta_high {settings.crag_theta_high:g}, "
            f"theta_low {settings.crag_theta_low:g})" if settings.crag_routing == "confidence"
            else f" (threshold {settings.crag_threshold:g})")),
        ("READER_CRAG_QUOTE_THRESHOLD", "off" if settings.crag_quote_threshold is None
         else f"{settings.crag_quote_threshold:g}"),
        ("READER_CRAG_REFUSAL", settings.crag_refusal),
        ("READER_CRAG_UNGROUNDED", settings.crag_ungrounded),
        ("READER_UPLOAD_LIMIT_MB", str(settings.upload_limit_mb)),
        ("READER_WEB_TOKEN", mask(settings.web_token)),
    ]
