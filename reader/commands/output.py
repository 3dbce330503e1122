"""Printing that survives any file name: one line per name, JSON that always encodes."""

from __future__ import annotations

import json
import re

import click

# What a terminal acts on instead of showing: C0 controls but tab and newline (ESC starts an
# escape sequence, BEL, CR), DEL, the C1 controls (U+009B is CSI), the bidi embeddings, overrides
# and isolates (U+202E turns what follows round; as reader.text.controls.BIDI_CONTROLS, which the
# commands may not import); and lone surrogates (a file name that is not UTF-8).
_TERMINAL_CONTROL = re.compile("[\x00-\x08\x0b-\x1f\x7f-\x9f\u202a-\u202e\u2066-\u2069\ud800-\udfff]")


def for_terminal(text: str) -> str:
    """Text from outside (a title, an author, an LLM's reply, an error) fit to print: each
    control character a terminal would act on is shown escaped (\\x1b); lines and tabs stay.
    Text is cleaned where it enters; this guards what was stored before, or by another program."""
    return _TERMINAL_CONTROL.sub(lambda m: repr(m.group())[1:-1], text)


def table_cell(text: str | None) -> str:
    """for_terminal for a cell of a rich table, whose markup ([red], [/b]) is shown as written."""
    from rich.markup import escape

    return escape(for_terminal(text or ""))


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
