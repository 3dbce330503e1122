"""Where the files that ship with reader lie: the prompts and the alembic migrations.

They are kept at the repository's top level (prompts/, migrations/) and the wheel carries them
inside the package as reader/_prompts and reader/_migrations (pyproject.toml maps them). An
installed copy finds them next to this file; a checkout (editable install, or the repository on
PYTHONPATH) finds them one level up. A leaf module: imports nothing from reader.
"""

from __future__ import annotations

from pathlib import Path

_PACKAGE = Path(__file__).resolve().parent


def _find(installed: str, top_level: str) -> Path:
    for path in (_PACKAGE / installed, _PACKAGE.parent / top_level):
        if path.is_dir():
            return path
    raise FileNotFoundError(
        f"reader's {top_level}/ directory is missing: looked in {_PACKAGE / installed} "
        f"and {_PACKAGE.parent / top_level}"
    )


def prompts_dir() -> Path:
    """The directory of the prompt templates (*.j2)."""
    return _find("_prompts", "prompts")


def migrations_dir() -> Path:
    """The alembic script directory (env.py, script.py.mako, versions/)."""
    return _find("_migrations", "migrations")
