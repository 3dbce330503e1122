"""Settings from READER_* environment variables and an optional TOML config file.

Precedence: environment variable > config file > default. The config file is
READER_CONFIG if set, else $READER_HOME/config.toml if it exists. Keys in the
file are the variable names without the READER_ prefix, lower-case
(e.g. `llm_base_url = "http://127.0.0.1:8080/v1"`).

Each setting is declared once, as a field of `Settings` or of its group `CragSettings`
(reader/config/settings.py): default, parser and check, help, secret. From those
declarations (`SETTINGS`) come loading (`load_settings`), `reader config`'s rows
(`describe`) and the config file's writing (`write_config_values`, for `reader calibrate
--write`); the guide's settings table (docs/guide/configuration.md) is generated from them by
scripts/generate_docs.py and checked (tests/test_settings_documented.py).

READER_LLM_BASE_URL=scripted: (or scripted:latency_ms=200) selects the
deterministic dry-run LLM (reader/llm/dryrun.py) instead of a model: for
trying the pipeline end to end and for subprocess tests.
"""

from reader.config.declare import Registered
from reader.config.registry import FILE_KEYS, SETTINGS, describe, load_settings, mask, write_config_values
from reader.config.settings import (
    CRAG_REFUSALS,
    CRAG_ROUTINGS,
    CRAG_UNGROUNDED,
    DEFAULT_EMBED_MODEL,
    EMBEDDED_MODEL_NAME,
    EXTERNAL_SEARCHES,
    SPECULATIVE_MODES,
    CragSettings,
    LLMSettings,
    Settings,
    default_home,
)

__all__ = [
    "CRAG_REFUSALS",
    "CRAG_ROUTINGS",
    "CRAG_UNGROUNDED",
    "DEFAULT_EMBED_MODEL",
    "EMBEDDED_MODEL_NAME",
    "EXTERNAL_SEARCHES",
    "FILE_KEYS",
    "SETTINGS",
    "SPECULATIVE_MODES",
    "CragSettings",
    "LLMSettings",
    "Registered",
    "Settings",
    "default_home",
    "describe",
    "load_settings",
    "mask",
    "write_config_values",
]
