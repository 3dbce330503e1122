"""Printing that survives any file name: one line per name, JSON that always encodes."""

from __future__ import annotations

import json

import click


def printable(text: str) -> str:
    """The text on one line: a newline, another control character or a byte that is not
    UTF-8 in a file's name is shown escaped (\\n, \\x00, \\udcff)."""
    return text if text.isprintable() else repr(text)[1:-1]


def to_json_text(data, indent: int | None = 2) -> str:
    """JSON with readable non-ASCII text; ASCII escapes only when a file name that is not
    UTF-8 (a lone surrogate) could not be printed otherwise."""
    text = json.dumps(data, ensure_ascii=False, indent=indent)
    try:
        text.encode("utf-8")
    except UnicodeEncodeError:
        text = json.dumps(data, indent=indent)
    return text


def echo_json(data, indent: int | None = 2) -> None:
    click.echo(to_json_text(data, indent))
