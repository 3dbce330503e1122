"""Every prompt is a jinja2 file in prompts/, rendered through this one environment.

A prompt is a conversation: each template has a `system` block (the instructions)
and a `user` block (the data). A paper is untrusted input, and so is everything
derived from it, so every piece of paper text, passage, claim, question and draft
goes into the user message between tags (<passage n="1" page="3"> … </passage>,
<claims> … </claims>, <paper> … </paper>) through the `data` filter, which
neutralises whatever could open or close a tag: the text cannot forge the
prompt's structure, and the system message tells the model that tagged text is
data, never instructions.

StrictUndefined makes a missing variable an error instead of an empty string.
"""

from __future__ import annotations

import re
from functools import lru_cache

from jinja2 import Environment, FileSystemLoader, StrictUndefined

from reader.resources import prompts_dir

PROMPTS_DIR = prompts_dir()
ROLES = ("system", "user")

# Characters that look like the ones the prompts' structure is made of — tags (< > /), numbered
# answers ([1] (1)), role labels (SYSTEM:) — and the full-width letters and digits. The text is
# matched in a view with these folded to their ASCII forms, one character for one, so that
# "﹤/passage﹥", "〈/passage〉", "【1】YES" or "ＳＹＳＴＥＭ：" are neutralised or taken out like their
# ASCII forms, while the rest of the text (a Chinese paper's "（表 2）") is shown as written.
_LOOK_ALIKES = {
    **dict.fromkeys("＜﹤〈〈⟨˂ᐸ❮⧼‹", "<"),
    **dict.fromkeys("＞﹥〉〉⟩˃ᐳ❯⧽›", ">"),
    **dict.fromkeys("／⁄∕⧸╱", "/"),
    **dict.fromkeys("［【〔〖⟦", "["),
    **dict.fromkeys("］】〕〗⟧", "]"),
    **dict.fromkeys("（﹙⁽", "("),
    **dict.fromkeys("）﹚⁾", ")"),
    **dict.fromkeys("：﹕", ":"),
    **{chr(c): chr(c - 0xFEE0) for c in range(ord("０"), ord("９") + 1)},
    **{chr(c): chr(c - 0xFEE0) for c in range(ord("Ａ"), ord("Ｚ") + 1)},
    **{chr(c): chr(c - 0xFEE0) for c in range(ord("ａ"), ord("ｚ") + 1)},
}
_FOLD = str.maketrans(_LOOK_ALIKES)
# Invisible characters that could split a word or a tag ("</pas\u200bsage>"): dropped.
_INVISIBLE = re.compile("[\u200b\u200c\u200d\u2060\ufeff\u00ad]")

# "<" that could start a tag: before a letter, "/", "!" or "?".
# "p < 0.05", "a<3" and "<=" stay as they are.
_TAG_START = re.compile(r"<(?=[A-Za-z/!?])")
NEUTRAL_LT = "‹"


# Text in a passage that speaks to the model rather than about research: a fake answer line
# ("[1] YES"), a role label ("SYSTEM: …"), an order to drop the instructions or to answer every
# claim a certain way. The tags keep such lines from looking like the prompt, but a 1.5B model still
# follows them (tests/test_audit_model.py), so they are taken out of passages.
_ANSWER_WORD = r"(?:YES|NO|not\s+supported|unsupported|supported|true|false|是|否)"
_ADDRESSED_TO_MODEL = re.compile(
    r"^[ \t>*#-]*\[\s*(?:\d{1,3}|n)\s*\]\s*\**\s*(?:YES|NO)\b.*$"  # a whole fake answer line
    # other numbered answers, a line of nothing else: "(1) YES", "1. NO", "Claim 2: YES"
    r"|^[ \t>*#-]*(?:(?:(?:claim|statement)\s*)?(?:\(\s*\d{1,3}\s*\)|\[\s*\d{1,3}\s*\]|\d{1,3}\s*[.):])"
    rf"\s*\**\s*{_ANSWER_WORD}(?![\w-])[\s*.!,;]*)+$"
    r"|^[ \t>*#-]*(?:SYSTEM|ASSISTANT|INSTRUCTIONS?)\s*:[^\n]*"  # a role label, to the line's end
    r"|(?<=[.!?] )(?:SYSTEM|ASSISTANT)\s*:[^\n.!?]*[.!?]?"  # or in mid-line, to the sentence's end
    r"|^\s*(?:-{2,}\s*passage\b[^\n]*|claims?\s*:\s*|\"{3}\s*"  # a line of the prompt's structure
    r"|[<‹＜]/?(?:passage|claims?|paper|draft|flagged|question|notes|sentences|title|left_out|material|facts)\b[^\n>]*>?\s*)$"
    r"|\b(?:ignore|disregard|forget|override)\W+(?:all\W+|any\W+|the\W+)?"
    r"(?:previous|prior|above|earlier|preceding|your|system)\W+(?:instructions?|prompts?|rules)\b[^\n.!?]*[.!?]?"
    # the same in Chinese ("忽略以上所有指令，…"), to the sentence's end
    r"|(?:忽略|无视|忽视|忘记|不要理会|不要遵守)[^\n。！？.!?]{0,12}(?:指令|指示|提示词?|规则|要求)[^\n。！？!?]*[。！？!?]?"
    # a note addressed to a model ("Note to the reviewing model: …"), to the line's end
    r"|\b(?:note|message|instructions?|reminder)\s+(?:to|for)\s+(?:the\s+|any\s+)?(?:[a-z-]+\s+){0,2}"
    r"(?:model|assistant|AI|LLM|verifier|language\s+model)s?\s*:[^\n]*"
    r"|\banswer\W+(?:with\W+)?(?:YES|NO)\W+(?:to|for)\W+(?:every|all|each|any)\b[^\n.!?]*[.!?]?",
    re.IGNORECASE | re.MULTILINE,
)
REMOVED_LINE = "[text addressed to the model removed]"


def data(text, inline: bool = False) -> str:
    """Untrusted text made safe to put between the prompts' data tags (the jinja filter `data`).

    Look-alikes of the structure's characters ("﹤", "〈", "【", full-width letters) are folded to
    them first. Every "<" that could open or close a tag becomes "‹", so "</passage>" or
    "<claims>" inside a paper is inert text; numbers and comparisons are untouched.
    Text addressed to the model (fake answer lines, role labels, the prompt's own
    structure, "ignore previous instructions …") is replaced by a note saying so.
    inline=True also folds line breaks into spaces, for one item per numbered line.
    """
    text = _INVISIBLE.sub("", str(text))
    folded = text.translate(_FOLD)  # as long as the text: a match in it is a span of the text
    starts = [m.start() for m in _TAG_START.finditer(folded)]
    if starts:
        chars, view = list(text), list(folded)
        for i in starts:
            chars[i] = view[i] = NEUTRAL_LT
        text, folded = "".join(chars), "".join(view)
    pieces, last = [], 0
    for m in _ADDRESSED_TO_MODEL.finditer(folded):
        pieces += [text[last : m.start()], REMOVED_LINE]
        last = m.end()
    text = "".join(pieces) + text[last:]
    return " ".join(text.split()) if inline else text


@lru_cache(maxsize=1)
def environment() -> Environment:
    env = Environment(
        loader=FileSystemLoader(str(PROMPTS_DIR)),
        undefined=StrictUndefined,
        keep_trailing_newline=False,
        trim_blocks=True,
        lstrip_blocks=True,
        autoescape=False,  # prompts are plain text, not HTML
    )
    env.filters["data"] = data
    return env


def messages(name: str, **variables) -> list[dict]:
    """prompts/<name>.j2 as a conversation: its `system` block, then its `user` block."""
    template = environment().get_template(f"{name}.j2")
    out = []
    for role in ROLES:
        context = template.new_context(dict(variables))
        out.append({"role": role, "content": "".join(template.blocks[role](context)).strip()})
    return out


def render(name: str, **variables) -> str:
    """The conversation as one text, system then user (for tests and the dry-run LLM)."""
    return "\n\n".join(m["content"] for m in messages(name, **variables))


def template_names() -> list[str]:
    """The prompts that can be rendered; files starting with "_" are parts they include."""
    return sorted(p.stem for p in PROMPTS_DIR.glob("*.j2") if not p.stem.startswith("_"))


def writes_chinese(paper_language: str, override: str | None = None) -> bool:
    """Is the output written in Chinese? The paper's language unless a setting says otherwise."""
    return (override or paper_language or "en").lower().startswith("zh")


def language_instruction(paper_language: str, override: str | None = None) -> str:
    """Which language the output should be written in: the paper's unless a setting says otherwise."""
    return "Write in Chinese (简体中文)." if writes_chinese(paper_language, override) else "Write in English."
