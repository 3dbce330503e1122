"""Text taken from a PDF's lines as a reader copies it: ligatures as their letters ("ﬁ" as
"fi") and a word broken at a line's end made whole ("relat- edness" as "relatedness").

The viewer's copy handler (reader/web/static/viewer.js) does the same in the browser; this is
for what the server writes out (the extraction table's CSV).
"""

from __future__ import annotations

import re
import unicodedata

# U+FB00..U+FB06: ff fi fl ffi ffl ſt st
_LIGATURES = re.compile("[\ufb00-\ufb06]")
# a lower-case letter, a hyphen, a line's end (now a space) and a lower-case letter; "pre- and
# post-training" keeps its hyphen (the word after is "and", "or" or "to")
_BROKEN = re.compile(r"(?<=[a-z])-\s+(?!(?:and|or|to)\b)(?=[a-z])")


def expand_ligatures(text: str) -> str:
    return _LIGATURES.sub(lambda m: unicodedata.normalize("NFKC", m.group()), text)


def joined_lines(text: str) -> str:
    """`text` with its ligatures expanded and a word broken over two lines joined."""
    return _BROKEN.sub("", expand_ligatures(text))
