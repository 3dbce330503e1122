"""Control characters out of text that comes from outside: a PDF, a Zotero library, an LLM's reply."""

from __future__ import annotations

import re

# C0 control characters other than \t and \n, DEL, the C1 controls (U+0080-U+009F; U+009B is a
# terminal's CSI) and lone surrogates. PDFs carry them for glyphs without a Unicode mapping, an
# LLM or a Zotero field may carry a terminal's escape sequences; PostgreSQL refuses NUL in
# text, a surrogate cannot be encoded as UTF-8, and none of them is text anyone can read.
_CONTROL = re.compile("[\x00-\x08\x0b-\x1f\x7f-\x9f\ud800-\udfff]")


def clean_text(text: str) -> str:
    """The text without control characters (\t and \n stay): applied wherever outside text
    enters, before it is stored or shown."""
    return _CONTROL.sub("", text)
