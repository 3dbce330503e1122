"""What a passage's section title says about it."""

from __future__ import annotations

import re

_REFERENCE_LIST = re.compile(r"^\W*(?:\d+\W*)?(?:references|bibliography|参考文献)\b", re.I)


def is_reference_list(section: str | None) -> bool:
    """The section is the paper's reference list ("References", "7 Bibliography", "参考文献")."""
    return bool(_REFERENCE_LIST.match(section or ""))
