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


def zotero_options(what: str):
    """`--zotero [DIR]` and `--collection NAME`, for a command that `what`s a Zotero library's PDFs."""

    def decorate(command):
        command = click.option(
            "--collection",
            metavar="NAME",
            help="With --zotero: only this collection (its name or Parent/Child path) and its subcollections.",
        )(command)
        return click.option(
            "--zotero",
            "zotero",
            is_flag=False,
            flag_value="",
            default=None,
            metavar="[ZOTERO_DATA_DIR]",
            help=f"{what} the PDFs of a Zotero library (default folder: ~/Zotero), each paper with its "
            "Zotero key, title, authors, year, DOI and collections; Zotero may keep running.",
        )(command)

    return decorate
