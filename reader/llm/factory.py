"""Builds the LLM for a role from the settings: an OpenAI-compatible endpoint when
a base URL is set, else the embedded model; wrapped with the call log and cache."""

from __future__ import annotations

from reader.config import Settings
from reader.errors import ConfigError

ROLES = ("generator", "verifier")
_ENV_PREFIX = {"generator": "READER_LLM", "verifier": "READER_VERIFIER"}


def build_inner_llm(settings: Settings, role: str):
    """The bare LLM for a role (no log, no cache)."""
    if role not in ROLES:
        raise ConfigError(f"unknown LLM role {role!r}: use one of {', '.join(ROLES)}")
    llm_settings = getattr(settings, role)
    if llm_settings.is_scripted:
        from reader.llm.dryrun import build_dry_run_llm

        return build_dry_run_llm(llm_settings)
    if llm_settings.is_embedded:
        from reader.llm.local import LocalLLM

        return LocalLLM(settings.models_dir, speculative=settings.speculative)
    from reader.llm.openai_compat import OpenAICompatLLM

    return OpenAICompatLLM(llm_settings, env_prefix=_ENV_PREFIX[role])


def build_llm(settings: Settings, role: str, calls, use_cache: bool = True):
    """The LLM a stage uses for `role` ("generator" or "verifier").

    Every call is logged through `calls` (a reader.store.calls.CallStore) and
    answered from the response cache when possible (unless use_cache is False).
    Without one (None) the bare LLM is returned.
    """
    inner = build_inner_llm(settings, role)
    if calls is None:
        return inner
    from reader.llm.logged import LoggedLLM

    return LoggedLLM(inner, role, calls, use_cache=use_cache)
