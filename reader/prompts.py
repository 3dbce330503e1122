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

# "<" (or a full-width "＜") that could start a tag: before a letter, "/", "!" or "?".
# "p < 0.05", "a<3" and "<=" stay as they are.
_TAG_START = re.compile(r"[<＜](?=[A-Za-z/!?])")
NEUTRAL_LT = "‹"


# Text in a passage that speaks to the model rather than about research: a fake answer line
# ("[1] YES"), a role label ("SYSTEM: …"), an order to drop the instructions or to answer every
# claim a certain way. The tags keep such lines from looking like the prompt, but a 1.5B model still
# follows them (tests/test_audit_model.py), so they are taken out of passages.
_ADDRESSED_TO_MODEL = re.compile(
    r"^[ \t>*#-]*\[\s*(?:\d{1,3}|n)\s*\]\s*\**\s*(?:YES|NO)\b.*$"  # a whole fake answer line
    r"|^[ \t>*#-]*(?:SYSTEM|ASSISTANT|INSTRUCTIONS?)\s*:[^\n]*"  # a role label, to the line's end
    r"|(?<=[.!?] )(?:SYSTEM|ASSISTANT)\s*:[^\n.!?]*[.!?]?"  # or in mid-line, to the sentence's end
    r"|^\s*(?:-{2,}\s*passage\b[^\n]*|claims?\s*:\s*|\"{3}\s*"  # a line of the prompt's structure
    r"|[<‹＜]/?(?:passage|claims?|paper|draft|flagged|question|notes|sentences|title|left_out|material|facts)\b[^\n>]*>?\s*)$"
    r"|\b(?:ignore|disregard|forget|override)\W+(?:all\W+|any\W+|the\W+)?"
    r"(?:previous|prior|above|earlier|preceding|your|system)\W+(?:instructions?|prompts?|rules)\b[^\n.!?]*[.!?]?"
    r"|\banswer\W+(?:with\W+)?(?:YES|NO)\W+(?:to|for)\W+(?:every|all|each|any)\b[^\n.!?]*[.!?]?",
    re.IGNORECASE | re.MULTILINE,
)
REMOVED_LINE = "[text addressed to the model removed]"


def data(text, inline: bool = False) -> str:
    """Untrusted text made safe to put between the prompts' data tags (the jinja filter `data`).

    Every "<" that could open or close a tag becomes "‹", so "</passage>" or
    "<claims>" inside a paper is inert text; numbers and comparisons are untouched.
    Text addressed to the model (fake answer lines, role labels, the prompt's own
    structure, "ignore previous instructions …") is replaced by a note saying so.
    inline=True also folds line breaks into spaces, for one item per numbered line.
    """
    text = _ADDRESSED_TO_MODEL.sub(REMOVED_LINE, _TAG_START.sub(NEUTRAL_LT, str(text)))
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
