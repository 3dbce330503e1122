"""Every prompt is a jinja2 file in prompts/, rendered through this one environment.

StrictUndefined makes a missing variable an error instead of an empty string.
"""

from __future__ import annotations

from functools import lru_cache
from pathlib import Path

from jinja2 import Environment, FileSystemLoader, StrictUndefined

PROMPTS_DIR = Path(__file__).resolve().parents[1] / "prompts"


@lru_cache(maxsize=1)
def environment() -> Environment:
    return Environment(
        loader=FileSystemLoader(str(PROMPTS_DIR)),
        undefined=StrictUndefined,
        keep_trailing_newline=False,
        trim_blocks=True,
        lstrip_blocks=True,
        autoescape=False,  # prompts are plain text, not HTML
    )


def render(name: str, **variables) -> str:
    """Render prompts/<name>.j2 with the given variables."""
    return environment().get_template(f"{name}.j2").render(**variables).strip()


def template_names() -> list[str]:
    """The prompts that can be rendered; files starting with "_" are parts they include."""
    return sorted(p.stem for p in PROMPTS_DIR.glob("*.j2") if not p.stem.startswith("_"))


def language_instruction(paper_language: str, override: str | None = None) -> str:
    """Which language the output should be written in: the paper's unless a setting says otherwise."""
    lang = (override or paper_language or "en").lower()
    return "Write in Chinese (简体中文)." if lang.startswith("zh") else "Write in English."
