"""The writer: a critique or synthesis written one heading at a time.

A small model asked for six headings in one reply fills the later ones with the earlier ones'
sentences, or with "The paper does not make any overclaims." Here each heading is one call:
the same system message and paper for every heading (a server's prompt cache reads them once),
then that heading's request with its own material (reader.deepread.material): the paper's
sentences that carry what the heading is about and, for the critique, facts a reviewer would
check. A rewrite asks again only for the headings that had unsupported sentences, and keeps
the other headings as they were.

A reply is the text under one heading; if the model wrote headings anyway, the text under
the requested one is taken (or what came before the first heading), less a last sentence the
length limit cut off.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from functools import cached_property

from reader.deepread.checked import (
    CheckedFact,
    PaperChecks,
    checked_facts,
    checklist_facts,
    paper_checks,
    synthesis_facts,
)
from reader.deepread.material import critique_facts, heading_material, missing_headlines, table_results
from reader.deepread.tidy import content_key, repeats_earlier
from reader.llm.base import Completion, supports_sampling
from reader.prompts import environment, language_instruction, messages, writes_chinese
from reader.text.split import sentence_spans, split_sentences
from reader.text.tokens import estimate_tokens

# llama.cpp's sampling controls for the writer (docs/design/deepread.md: what each did to the 1.5B model's notes).
WRITER_SAMPLING = {"repeat_penalty": 1.1, "dry_multiplier": 0.8, "min_p": 0.05}
WRITER_TEMPERATURE = 0.2
# The synthesis's headings are shown the paper's sentences that carry them and asked for short
# sentences of the writer's own; the critique's only the facts a check found: shown sentences,
# the 1.5B writer set them under critique headings they did not fit (docs/design/deepread.md).
WITH_MATERIAL = ("synthesis",)
MATERIAL_SHARE = 0.06  # of the paper context's tokens, for each heading's own sentences (80 to 400)
_HEADING_LINE = re.compile(r"^[ \t]*(?:#{1,6}[ \t]*(.+?)|\*\*(.+?)\*\*:?)[ \t]*#*[ \t]*$", re.M)


def headings(kind: str) -> list[str]:
    """The headings of a critique or synthesis, as prompts/_headings.j2 names them."""
    return list(getattr(environment().get_template("_headings.j2").module, kind))


@dataclass(frozen=True)
class Request:
    """What every heading of one document shares."""

    kind: str
    title: str
    language: str
    context: str
    left_out: list[str]
    sections: list  # reader.deepread.Section: .title, .text, .priority
    paper_id: str
    words_per_heading: int
    output_language: str | None = None
    sampling: dict = field(default_factory=lambda: dict(WRITER_SAMPLING))
    # the paper's rigour checklist (reader.checklist, as reader.deepread.checked.PaperChecks); None: the
    # rules alone over `sections`
    checks: PaperChecks | None = None
    tables: list = field(default_factory=list)  # the paper's tables as cells (reader.text.grid.Table)

    @property
    def max_tokens(self) -> int:
        return int(self.words_per_heading * 2.2) + 60

    @cached_property
    def paper_checks(self) -> PaperChecks:
        return self.checks if self.checks is not None else paper_checks(self.sections)

    @cached_property
    def checked(self) -> list[CheckedFact]:
        """The sentences the tool states itself under the document's headings (in English), from
        the checklist; found once, asked for under each heading."""
        if writes_chinese(self.language, self.output_language):
            return []
        if self.kind == "synthesis":
            return synthesis_facts(self.paper_checks, self.sections)
        return checked_facts(self.paper_checks)

    def facts(self, heading: str) -> list[str]:
        """What the writer is shown under a critique heading as found by a check: the checklist's
        found items (with their pages), else the rules' data sizes and variance sentence."""
        if self.kind != "critique":
            return []
        return checklist_facts(heading, self.paper_checks) or critique_facts(heading, self.sections)

    @property
    def material_tokens(self) -> int:
        """0 for a document written without the paper's sentences as material."""
        if self.kind not in WITH_MATERIAL:
            return 0
        return min(400, max(80, int(MATERIAL_SHARE * estimate_tokens(self.context))))


def heading_body(reply: str, heading: str) -> str:
    """The text a reply gives under `heading`: all of it when it has no heading line; else the
    text under the line naming `heading`, or before the first heading line, or (a reply that
    names the heading otherwise, "## Results" for Key results) under the first heading line
    that names no other heading of the documents."""
    lines = list(_HEADING_LINE.finditer(reply))
    if not lines:
        return reply.strip()
    wanted = heading.lower()
    under = [
        reply[line.end() : lines[i + 1].start() if i + 1 < len(lines) else len(reply)].strip()
        for i, line in enumerate(lines)
    ]
    for line, body in zip(lines, under):
        if (line.group(1) or line.group(2) or "").strip().strip(":").lower() == wanted:
            return body
    known = {h.lower() for kind in ("critique", "synthesis") for h in headings(kind)}
    named_otherwise = (
        body
        for line, body in zip(lines, under)
        if body and (line.group(1) or line.group(2) or "").strip().strip(":").lower() not in known
    )
    return reply[: lines[0].start()].strip() or next(named_otherwise, "")


_ENDS = re.compile(r"[.!?。！？][\"'”’)\]]*$")
_TRAILING_MARKER = re.compile(r"\s*(?:\d{1,3}[.)]|[-*•])\s*$")


def without_cut_off_end(body: str) -> str:
    """`body` without a last sentence the length limit cut off (it ends without a full stop),
    when a sentence before it is complete; a list number left dangling goes with it."""
    text = body.rstrip()
    spans = sentence_spans(text)
    if not text or _ENDS.search(text) or len(spans) < 2:
        return body
    kept = text[: spans[-1][0]].rstrip()
    return _TRAILING_MARKER.sub("", kept).rstrip() if _ENDS.search(_TRAILING_MARKER.sub("", kept)) else body


def split_document(text: str) -> list[tuple[str, str]]:
    """(heading, text under it) for each "## heading" of a document; text before the first
    heading comes as ("", text)."""
    parts, last, heading = [], 0, ""
    for line in _HEADING_LINE.finditer(text):
        body = text[last : line.start()].strip()
        if heading or body:
            parts.append((heading, body))
        heading, last = (line.group(1) or line.group(2) or "").strip(), line.end()
    body = text[last:].strip()
    if heading or body:
        parts.append((heading, body))
    return parts


def heading_lines(text: str) -> list[tuple[int, int]]:
    """(start, end) offsets of each heading line of a document (those `split_document` splits at), in order."""
    return [line.span() for line in _HEADING_LINE.finditer(text)]


def join_document(parts: list[tuple[str, str]]) -> str:
    return "\n\n".join(f"## {h}\n{body}" if h else body for h, body in parts if h or body).strip()


def with_checked(heading: str, body: str, request: Request) -> str:
    """`body` with the sentences the tool states under `heading` (those it does not give already):
    a critique's findings before the writer's judgement around them, a synthesis's setup after
    the writer's account. A quote of a sentence the body gives already is left out."""
    said = [content_key(s) for s in split_sentences(body)]
    own = " ".join(
        f.sentence
        for f in request.checked
        if f.heading == heading
        and f.sentence not in body
        and not (f.quote and repeats_earlier(content_key(f.quote), said))
    )
    parts = (own, body) if request.kind == "critique" else (body, own)
    return "\n\n".join(x for x in parts if x)


def _ask(generator, request: Request, heading: str, material, facts, flagged=(), previous="") -> Completion:
    conversation = messages(
        "heading",
        title=request.title,
        context=request.context,
        left_out=request.left_out,
        document=request.kind,
        heading=heading,
        material=list(material),
        facts=list(facts),
        flagged=list(flagged),
        previous=previous,
        short_sentences=request.kind in WITH_MATERIAL,
        words=request.words_per_heading,
        language_instruction=language_instruction(request.language, request.output_language),
    )
    stage = f"regenerate-{request.kind}" if flagged else request.kind
    extra = {"sampling": request.sampling} if supports_sampling(generator) and request.sampling else {}
    return generator.complete(
        conversation,
        temperature=WRITER_TEMPERATURE,
        max_tokens=request.max_tokens,
        stage=stage,
        paper_id=request.paper_id,
        **extra,
    )


def _total(parts: list[tuple[str, str]], replies: list[Completion]) -> Completion:
    return Completion(
        text=join_document(parts),
        prompt_tokens=sum(r.prompt_tokens for r in replies),
        completion_tokens=sum(r.completion_tokens for r in replies),
        latency_s=sum(r.latency_s for r in replies),
        model=replies[0].model if replies else "",
        calls=len(replies),
    )


def _material(heading: str, request: Request, used: set[str]) -> list[str]:
    """The heading's sentences of the paper; under Key results, the main results table's headline
    row first (reader.deepread.material.table_results), where the paper has tables."""
    material = heading_material(heading, request.sections, used, request.material_tokens)
    if heading == "Key results" and request.material_tokens > 0:
        return table_results(request.tables) + material
    return material


def write_document(generator, request: Request) -> Completion:
    """The whole document, one call per heading."""
    used: set[str] = set()
    parts, replies = [], []
    for heading in headings(request.kind):
        material = _material(heading, request, used)
        reply = _ask(generator, request, heading, material, request.facts(heading))
        replies.append(reply)
        body = without_cut_off_end(heading_body(reply.text, heading))
        if heading == "Key results" and request.output_language in (None, request.language):
            # the small writer seldom keeps the abstract's figures: they follow, as the abstract says them
            body = " ".join([body, *missing_headlines(body, request.sections)]).strip()
        parts.append((heading, with_checked(heading, body, request)))
    return _total(parts, replies)


def rewrite_document(generator, request: Request, previous: str, flagged: list[str]) -> Completion:
    """`previous` with each heading that held a flagged sentence written again, the flagged
    sentences named and taken out of what the writer is shown; the other headings unchanged.
    A heading whose rewrite comes back empty keeps its sentences but the flagged ones."""
    used: set[str] = set()
    parts, replies = [], []
    for heading, body in split_document(previous):
        own = [s for s in flagged if s in body]
        material = _material(heading, request, used)
        if not own or not heading:
            parts.append((heading, body))
            continue
        reply = _ask(
            generator,
            request,
            heading,
            material,
            request.facts(heading),
            flagged=own,
            previous=remove_sentences(body, own),
        )
        replies.append(reply)
        # nothing back: the heading keeps its supported sentences, as the rewrite was asked to
        written = without_cut_off_end(heading_body(reply.text, heading)) or remove_sentences(body, own)
        parts.append((heading, with_checked(heading, written, request)))
    return _total(parts, replies)


def remove_sentences(text: str, sentences: list[str]) -> str:
    """`text` without every occurrence of the given sentences (for the rewrite prompt)."""
    unwanted = set(sentences)
    out, last = [], 0
    for start, end in sentence_spans(text):
        if text[start:end] in unwanted:
            out.append(text[last:start].rstrip(" "))
            last = end
    out.append(text[last:])
    return re.sub(r"[ \t]+\n|\n[ \t]+", "\n", "".join(out)).strip()
