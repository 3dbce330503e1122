"""Control characters out of text that comes from outside: a PDF, a Zotero library, an LLM's reply."""

from __future__ import annotations

import re

# Bidirectional embeddings, overrides and isolates (U+202A-U+202E, U+2066-U+2069): U+202E shows
# what follows it right to left, so "report\u202efdp.exe" reads as "reportexe.pdf" on a terminal,
# in a note or in a bibliography. Text keeps its direction without them (LRM and RLM stay).
BIDI_CONTROLS = "\u202a-\u202e\u2066-\u2069"
# C0 control characters other than \t and \n, DEL, the C1 controls (U+0080-U+009F; U+009B is a
# terminal's CSI), the bidi controls and lone surrogates. PDFs carry them for glyphs without a
# Unicode mapping, an LLM or a Zotero field may carry a terminal's escape sequences; PostgreSQL
# refuses NUL in text, a surrogate cannot be encoded as UTF-8, and none of them is text anyone
# can read.
_CONTROL = re.compile(f"[\x00-\x08\x0b-\x1f\x7f-\x9f{BIDI_CONTROLS}\ud800-\udfff]")


def clean_text(text: str) -> str:
    """The text without control characters (\t and \n stay): applied wherever outside text
    enters, before it is stored or shown, and to a note or BibTeX file as a whole before it is
    written (a file's name, or text stored by an earlier version, passes through no entry)."""
    return _CONTROL.sub("", text)
