"""How much text costs a model, without a tokenizer."""

from __future__ import annotations

import re

# Ideographs, extension A and kana: each costs about one token.
CJK_CHARS = re.compile(r"[\u3040-\u30ff\u3400-\u4dbf\u4e00-\u9fff]")


def estimate_tokens(text: str) -> int:
    """Rough token count: ~4 characters per token for Latin script, ~1 per CJK character."""
    cjk = len(CJK_CHARS.findall(text))
    return cjk + max(0, len(text) - cjk) // 4 + 1
