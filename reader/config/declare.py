"""How a setting is declared: a dataclass field whose metadata says how to read, check and show it.

    threshold: float = setting(0.6, parse=fraction(), help="the grade a passage needs")

`registered(Settings)` lists every declared field (a group's fields under its prefix, as
`crag_threshold`); `build(Settings, values)` makes the dataclass from parsed values.
The parsers below take the variable's name so that a bad value is one line naming it.
"""

from __future__ import annotations

import math
from collections.abc import Callable
from dataclasses import MISSING, dataclass, field, fields
from pathlib import Path

from reader.errors import ConfigError

Parse = Callable[[str, object], object]  # (variable, raw value) -> value; a bad value: ConfigError
SETTING, GROUP = "reader.setting", "reader.group"


@dataclass(frozen=True)
class Declaration:
    parse: Parse
    help: str
    name: str | None = None  # the config file's key when it is not the field's name
    derive: Callable[[dict], object] | None = None  # the default, from the settings declared before
    secret: bool = False  # masked by `reader config`
    in_file: bool = True  # False: environment only
    unset: str = "(not set)"  # what `reader config` shows for None or ""
    unit: str = ""
    show: Callable[[object, object], str] | None = None  # (value, settings) -> what `reader config` shows
    none_as: str | None = None  # what the config file holds for None ("off"); None: the key is left out


def setting(default=MISSING, *, parse: Parse, help: str, **declaration):
    """A dataclass field declared as a setting (no default when `derive` computes it)."""
    return field(default=default, metadata={SETTING: Declaration(parse=parse, help=help, **declaration)})


def group(cls, prefix: str):
    """A field holding a group of settings, whose names are `prefix` + the group's field names."""
    return field(default_factory=cls, metadata={GROUP: (cls, prefix)})


@dataclass(frozen=True)
class Registered:
    name: str  # the config file's key, e.g. "crag_threshold"
    path: tuple[str, ...]  # where Settings holds it, e.g. ("crag", "threshold")
    default: object  # MISSING when the declaration derives it
    declaration: Declaration

    @property
    def variable(self) -> str:
        return "READER_" + self.name.upper()

    def value_in(self, settings):
        for attribute in self.path:
            settings = getattr(settings, attribute)
        return settings


def registered(cls, prefix: str = "", path: tuple[str, ...] = ()) -> list[Registered]:
    out: list[Registered] = []
    for f in fields(cls):
        if GROUP in f.metadata:
            group_cls, group_prefix = f.metadata[GROUP]
            out += registered(group_cls, prefix + group_prefix, path + (f.name,))
        elif SETTING in f.metadata:
            declaration = f.metadata[SETTING]
            out.append(
                Registered(declaration.name or prefix + f.name, path + (f.name,), f.default, declaration)
            )
    return out


def build(cls, values: dict, prefix: str = ""):
    """`cls` (and its groups) from the values by setting name."""
    kwargs = {}
    for f in fields(cls):
        if GROUP in f.metadata:
            group_cls, group_prefix = f.metadata[GROUP]
            kwargs[f.name] = build(group_cls, values, prefix + group_prefix)
        elif SETTING in f.metadata:
            kwargs[f.name] = values[f.metadata[SETTING].name or prefix + f.name]
    return cls(**kwargs)


# ------------------------------------------------------------ parsers


def text(variable: str, raw) -> str:
    return str(raw)


def stripped(variable: str, raw) -> str:
    return str(raw).strip()


def path(variable: str, raw) -> Path:
    return Path(str(raw)).expanduser()


def _checked(convert, what: str, ok, must: str) -> Parse:
    def parse(variable: str, raw):
        try:
            value = convert(raw)
        except (TypeError, ValueError):
            raise ConfigError(f"{variable}={raw!r} is not {what}") from None
        if isinstance(value, float) and not math.isfinite(value):
            raise ConfigError(f"{variable}={raw!r} must be a finite number")
        if ok is not None and not ok(value):
            raise ConfigError(f"{variable}={value!r} {must}")
        return value

    return parse


def whole(ok=None, must: str = "") -> Parse:
    """An int; `ok(value)` false: "<variable>=<value> <must>"."""
    return _checked(int, "a whole number", ok, must)


def number(ok=None, must: str = "") -> Parse:
    """A finite float (never nan or inf); `ok(value)` false: "<variable>=<value> <must>"."""
    return _checked(float, "a number", ok, must)


def fraction(why: str = "") -> Parse:
    """A number between 0 and 1 (a probability or a grade)."""
    return number(lambda v: 0.0 <= v <= 1.0, "must lie between 0 and 1" + why)


def off_or(parse: Parse) -> Parse:
    """None for off (or none, no), else `parse`."""

    def parse_or_off(variable: str, raw):
        return None if str(raw).strip().lower() in ("off", "none", "no") else parse(variable, raw)

    return parse_or_off


def choice(choices: tuple[str, ...], why: str) -> Parse:
    """One of `choices` (case and spaces ignored); otherwise "<variable>=<value>: <why>"."""

    def parse(variable: str, raw) -> str:
        value = str(raw).strip().lower()
        if value not in choices:
            raise ConfigError(f"{variable}={value!r}: {why}")
        return value

    parse.choices = choices  # what may be chosen, for a grid over the setting (reader.crag.calibrate)
    return parse


_ON, _OFF = ("on", "1", "true", "yes"), ("off", "0", "false", "no")


def switch(why: str) -> Parse:
    """on / off (also 1 / 0, true / false, yes / no)."""
    words = choice(_ON + _OFF, why)
    return lambda variable, raw: words(variable, raw) in _ON
