"""The declared settings (SETTINGS) loaded, described and written.

Precedence: environment variable > config file > default; an empty value counts as unset.
"""

from __future__ import annotations

import json
import os
import tomllib
from dataclasses import MISSING
from pathlib import Path

from reader.config.declare import Registered, build, registered
from reader.config.settings import Settings, check_together, default_home
from reader.errors import ConfigError
from reader.files import FileRefused, read_regular

SETTINGS: list[Registered] = registered(Settings)
FILE_KEYS: list[str] = [s.name for s in SETTINGS if s.declaration.in_file]
_BY_NAME = {s.name: s for s in SETTINGS}


CONFIG_MAX_BYTES = 1024 * 1024  # a config file is a few lines; more is not one


def _read_file(path: Path) -> dict:
    """The config file's keys. Only a regular file of at most CONFIG_MAX_BYTES is read (READER_CONFIG
    at /dev/zero read until memory ran out; at a named pipe it waited for ever)."""
    try:
        raw = read_regular(path, CONFIG_MAX_BYTES)
    except FileRefused as exc:
        if exc.folder:
            reason = "is a folder; set READER_CONFIG to a TOML file"
        elif exc.size is not None:
            reason = f"{exc.size:,} bytes, larger than a config file may be ({CONFIG_MAX_BYTES // 1024} kB)"
        else:
            reason = exc.reason.replace("cannot read the file", "cannot read it")
        raise ConfigError(f"config file {path}: {reason}") from None
    try:
        data = tomllib.loads(raw.decode("utf-8"))
    except UnicodeDecodeError:
        raise ConfigError(f"config file {path}: not UTF-8 text (a TOML file is UTF-8)") from None
    except tomllib.TOMLDecodeError as exc:
        raise ConfigError(f"config file {path}: not valid TOML ({exc})") from exc
    unknown = sorted(set(data) - set(FILE_KEYS))
    if unknown:
        raise ConfigError(f"config file {path}: unknown keys {unknown}; known keys: {FILE_KEYS}")
    return data


def config_file_of(env: dict) -> Path | None:
    """READER_CONFIG, else $READER_HOME/config.toml when it exists."""
    if env.get("READER_CONFIG"):
        return Path(env["READER_CONFIG"]).expanduser()
    home_file = Path(env.get("READER_HOME") or default_home()).expanduser() / "config.toml"
    return home_file if home_file.exists() else None  # not a regular file: refused when read


def _given(value) -> bool:
    return value not in (None, "")


def load_settings(env: dict | None = None) -> Settings:
    env = dict(os.environ if env is None else env)
    config_file = config_file_of(env)
    file_data = _read_file(config_file) if config_file else {}
    values: dict = {}
    for entry in SETTINGS:
        raw = env.get(entry.variable)
        if not _given(raw) and entry.declaration.in_file:
            raw = file_data.get(entry.name)
        if _given(raw):
            values[entry.name] = entry.declaration.parse(entry.variable, raw)
        elif entry.default is MISSING:
            values[entry.name] = entry.declaration.derive(values)
        else:
            values[entry.name] = entry.default
    values["config"] = config_file
    check_together(values)
    return build(Settings, values)


def _toml_literal(value) -> str:
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, (int, float)):
        return repr(value)
    return json.dumps(str(value), ensure_ascii=False)  # a TOML basic string


def write_config_values(path: Path, values: dict) -> Path:
    """Set these settings (by name) in the TOML config file at `path` (created if missing), keeping
    its other lines; a key already set on a line of its own is replaced there. None stands for the
    setting's off value, or for leaving it out (its default) when it has none."""
    lines = path.read_text(encoding="utf-8").splitlines() if path.is_file() else []
    for key, value in values.items():
        entry = _BY_NAME.get(key)
        if entry is None or not entry.declaration.in_file:
            raise ConfigError(f"{key!r} is not a setting; known keys: {FILE_KEYS}")
        if value is None:
            value = entry.declaration.none_as
        if value is not None:
            entry.declaration.parse(entry.variable, value)  # a value the setting refuses is not written
        at = next((i for i, old in enumerate(lines) if old.split("=", 1)[0].strip() == key), None)
        line = None if value is None else f"{key} = {_toml_literal(value)}"
        if at is None and line is not None:
            lines.append(line)
        elif at is not None and line is not None:
            lines[at] = line
        elif at is not None:
            del lines[at]
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text("\n".join(lines) + "\n", encoding="utf-8")
    return path


def mask(secret: str | None) -> str:
    """What `reader config` shows of a secret: whether it is set, nothing of it."""
    return "****" if secret else "(not set)"


def shown(entry: Registered, settings: Settings) -> str:
    """One setting's value as `reader config` shows it."""
    value = entry.value_in(settings)
    declaration = entry.declaration
    if declaration.secret:
        return mask(value)
    if declaration.show is not None:
        return declaration.show(value, settings)
    if value is None or value == "":
        return declaration.unset
    if isinstance(value, bool):
        return "on" if value else "off"
    if isinstance(value, float):
        return f"{value:g}{declaration.unit}"
    return f"{value}{declaration.unit}"


def describe(settings: Settings) -> list[tuple[str, str]]:
    """Every setting as (variable, value) rows, secrets masked."""
    return [(entry.variable, shown(entry, settings)) for entry in SETTINGS]
