"""The contrast check: a sentence that compares or orders things, turned round.

"A beats B" and "B beats A" cannot both be supported. A small verifier that says YES to a
fluent comparison often says YES to its reversal too: it has matched words, not decided.
So a sentence with a direction word is also asked about in reverse, in the same call, and it
counts as supported only when the verifier prefers it to its reversal.

`reversal` swaps the first direction word (English or Chinese) for its opposite; a sentence
without one has no reversal and is not contrasted.
"""

from __future__ import annotations

import re

_PAIRS_EN = [
    ("higher", "lower"), ("more", "less"), ("better", "worse"), ("larger", "smaller"),
    ("greater", "smaller"), ("bigger", "smaller"), ("faster", "slower"), ("stronger", "weaker"),
    ("longer", "shorter"), ("increases", "decreases"), ("increased", "decreased"),
    ("increase", "decrease"), ("improves", "worsens"), ("improved", "worsened"),
    ("outperforms", "underperforms"), ("outperformed", "underperformed"),
    ("above", "below"), ("exceeds", "falls below"), ("best", "worst"), ("highest", "lowest"),
    ("most", "least"), ("superior", "inferior"), ("rises", "falls"),
    ("beats", "trails"), ("beat", "trail"), ("zero-shot", "fine-tuned"),
    ("unsupervised", "supervised"), ("positively", "negatively"), ("fewer", "more"), ("smaller", "larger"), ("lower", "higher"),
    ("worse", "better"), ("slower", "faster"), ("weaker", "stronger"), ("shorter", "longer"),
    ("less", "more"), ("decreases", "increases"), ("decreased", "increased"),
    ("below", "above"), ("worst", "best"), ("lowest", "highest"), ("least", "most"),
    ("inferior", "superior"), ("underperforms", "outperforms"), ("trails", "beats"),
    ("supervised", "unsupervised"), ("fine-tuned", "zero-shot"), ("negatively", "positively"),
    ("falls", "rises"),
]
_PAIRS_ZH = [
    ("高于", "低于"), ("低于", "高于"), ("优于", "不如"), ("不如", "优于"), ("多于", "少于"),
    ("少于", "多于"), ("大于", "小于"), ("小于", "大于"), ("超过", "低于"), ("更高", "更低"),
    ("更低", "更高"), ("更好", "更差"), ("更差", "更好"), ("更多", "更少"), ("更少", "更多"),
    ("更快", "更慢"), ("更慢", "更快"), ("最高", "最低"), ("最低", "最高"), ("最好", "最差"),
    ("最差", "最好"), ("提高", "降低"), ("降低", "提高"), ("提升", "下降"), ("下降", "上升"),
    ("上升", "下降"), ("增加", "减少"), ("减少", "增加"), ("正相关", "负相关"),
    ("负相关", "正相关"), ("零样本", "微调"), ("无监督", "有监督"), ("有监督", "无监督"),
]
_EN: dict[str, str] = {}
for _word, _opposite in _PAIRS_EN:
    _EN.setdefault(_word, _opposite)  # the first listed pair wins ("more" -> "less")
_EN_WORD = re.compile(r"(?<![\w-])(" + "|".join(sorted(map(re.escape, _EN), key=len, reverse=True))
                      + r")(?![\w-])", re.IGNORECASE)
_ZH = dict(_PAIRS_ZH)
_ZH_WORD = re.compile("|".join(sorted(map(re.escape, _ZH), key=len, reverse=True)))


def reversal(sentence: str) -> str | None:
    """The sentence with its first direction word turned round, or None when it has none."""
    en = _EN_WORD.search(sentence)
    zh = _ZH_WORD.search(sentence)
    if en and (not zh or en.start() < zh.start()):
        word = en.group(0)
        opposite = _EN[word.lower()]
        if word[0].isupper():
            opposite = opposite[0].upper() + opposite[1:]
        return sentence[:en.start()] + opposite + sentence[en.end():]
    if zh:
        return sentence[:zh.start()] + _ZH[zh.group(0)] + sentence[zh.end():]
    return None
