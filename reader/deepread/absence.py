"""A written sentence that says the paper does not do something which a sentence of the paper says
it does: "their method does not account for captions that start with Figure or Table and a
number" of a paper that says "captions start with Figure or Table and a number".

The claim's object (what it says is missing, up to the first comma or clause) is reduced to its
content stems, generic words of critique taken off ("any information about", "the method's");
a paper sentence that holds at least MIN_SHARE of them (and two or more), and is not itself a
negation or a restriction ("we do not evaluate on X", "only when …"), contradicts the claim and
is quoted as the finding. A claimed lack of a definition ("the lack of a clear definition of what
constitutes proactive behaviour") is contradicted by a sentence that defines one of the things it
names ("proactivity can be defined as …"). The checklist's items (reader.deepread.checked.contradicted_absence)
decide the absences they know; this covers the rest.
"""

from __future__ import annotations

import math
import re
from collections.abc import Sequence
from dataclasses import dataclass

from reader.audit.citations import content_stems
from reader.deepread.checked import quoted
from reader.deepread.negation import LACK, NEGATION

# "does not account for X", "do not explicitly discuss X", "fails to consider X", "lacks X"
_ABSENCE = re.compile(
    r"(?:\b(?:(?:does|do|did)\s+not|doesn't|don't|didn't|fails?\s+to|never)\s+(?:\w+ly\s+)?"
    r"(?:account\s+for|consider|address|mention|discuss|report|provide|include|describe|evaluate|"
    r"compare|specify|state|explain|present|analy[sz]e|examine|test|cover|handle|give|show|measure|"
    r"study|investigate|take\s+into\s+account)|\b(?:" + LACK + r")\b"
    # "There is no information about the performance … on different types of phrases"
    r"|\bthere\s+(?:is|are)\s+no\s+(?:information|mention|discussion|details?|analysis|evaluation|"
    r"comparison|report)\b"
    # "they would need information about how the authors compared S2ORC with other … corpora"
    r"|\bwould\s+(?:also\s+)?need\s+(?:more\s+)?(?:information|details?)\s+(?:about|on)\b)(?P<object>[^.;:,]*)",
    re.I,
)
# "the data processing and statistical analysis were not thoroughly described": the object before
_NOT_DONE = re.compile(
    r"(?P<object>[^.;:,]*?)\s+(?:is|are|was|were)\s+not\s+(?:\w+ly\s+)?(?:described|reported|discussed|"
    r"explained|provided|given|presented|detailed|specified|mentioned|considered|addressed|evaluated|"
    r"examined|analy[sz]ed|measured|tested|compared)\b",
    re.I,
)
# where the object ends: a clause of its own ("…, which", "… making it")
_OBJECT_END = re.compile(r"\b(?:which|making|so that|because|since|although|while|leaving|nor)\b", re.I)
# words a critique wraps round what it says is missing; they name nothing of the paper
CRITIQUE_WORDS = content_stems(
    "any information details detail discussion explicit explicitly clear clearly specific specifics "
    "whether different various other method methods approach paper papers author authors study work "
    "result results analysis proposed potential possible impact effect effects issue issues aspect "
    "aspects way ways role performance data information thorough thoroughly detailed further additional "
    "description descriptions explanation overview additionally also finally moreover however associated "
    "related regarding relevant"
)
# a paper sentence that negates or restricts says what is missing or limited: it agrees with the claim
_NOT_AFFIRMED = re.compile(r"\b(?:" + NEGATION + r"|neither|cannot|only|except|unless|lack\w*)\b|n't\b", re.I)
# "…, but this is not tested in the experiments", "not supported by the experiments": an absence of
# evidence for something the paper says. No checklist item covers it and the verifier, shown the
# passage that says the first half, answers YES; in the notes read, the writer made these up.
_UNTESTED = re.compile(
    r",?\s+but\s+(?:this|it|these|they|that|such claims?)\s+(?:is|are|was|were|has|have)\s+(?:not|never)\s+"
    r"(?:\w+ly\s+)?(?:been\s+)?(?:tested|evaluated|validated|verified|supported|demonstrated|shown|measured|"
    r"examined|explored|proven|backed)\b"
    r"|\bnot\s+(?:supported|backed|tested|validated|demonstrated|shown)\s+by\s+(?:the|its|any)\s+"
    r"(?:experiments?|results|evidence|data)\b"
    r"|\bexperiments\s+only\s+show\b|\bwithout\s+(?:any\s+)?(?:experimental|empirical)\s+(?:evidence|support|validation)\b"
    r"|\b(?:does|do|did)\s+not\s+(?:provide|give|offer|present)\s+(?:any\s+)?(?:experimental|empirical)\s+"
    r"(?:evidence|support|validation)\b"
    # "…, but they do not provide any evidence to support this claim" (2kenize, whose Table 3 does)
    r"|\b(?:does|do|did)\s+not\s+(?:provide|give|offer|present)\s+(?:any\s+)?evidence\s+(?:to\s+support|for)\b",
    re.I,
)
UNTESTED_REASON = (
    "says the paper does not test or support something it says: an absence of evidence that no "
    "checklist item covers and the tool cannot check"
)
# of the object's stems a paper sentence must hold; chosen on half A of the shared papers
# (benchmarks/bench_absence.py: false flags 3/164 there, 1/164 on half B)
MIN_SHARE = 0.9
MIN_STEMS = 2  # an object of fewer content stems is too vague to look for
# The object's head, up to its first preposition, clause or "is/was" ("inter-annotator agreement" of
# "inter-annotator agreement on faithfulness scores for SQuALITY or PubMed", "the citation-based
# pretraining objective" of "how the citation-based pretraining objective was implemented"), stated whole in at
# least this many affirmative sentences: the paper is about it. Chosen on half A of the shared
# papers with benchmarks/bench_absence.py.
MIN_HEAD_SENTENCES = 2
_HEAD_END = re.compile(
    r"\b(?:of|on|for|in|across|between|about|regarding|with|from|to|by|under|over|at|among|against|that|"
    r"which|who|when|where|whether|how|why|as|is|are|was|were)\b",
    re.I,
)
# "lacks a clear definition of what constitutes proactive behaviour": what is missing is a definition,
# contradicted by a paper sentence that defines one of the things named ("proactivity can be defined
# as …"), a name DEFINITION_REACH words or fewer from the defining word
_DEFINITION_OF = re.compile(
    r"^\W*(?:of\s+)?(?:an?\s+|any\s+)?(?:(?:clear|formal|precise|explicit|proper|concrete)\s+)?"
    r"definitions?\s+(?:of|for)\s+(?P<what>.*)",
    re.I,
)
_DEFINES = re.compile(r"^(?:defin(?:e|es|ed|ing|ition)|refers?|denotes?)$", re.I)
DEFINITION_REACH = 5
# "does not compare different annotation methods, such as COARSE and FINE": the examples name it
_EXAMPLES = re.compile(r"^\s*,?\s*(?:such as|including|like|e\.g\.,?)\s+(?P<examples>[^.;:,]*)", re.I)


@dataclass(frozen=True)
class PaperStatements:
    """The paper's sentences with the content stems of what each affirms, built once per read."""

    sentences: tuple[tuple[str, frozenset[str]], ...]

    @classmethod
    def of(cls, sentences: list[str], stemmed: Sequence[frozenset[str]] | None = None) -> PaperStatements:
        """From the paper's sentences (reader.deepread.material.section_sentences); what a sentence
        affirms is what comes before its first negation or restriction ("Scalability is a
        particularly important concern for Open Information Extraction, … relations that are not
        specified in advance" affirms its first clause). `stemmed`, when given, holds each
        sentence's content stems (the deep read stems them once for its checks); a sentence with
        neither negation nor restriction affirms all of them."""
        wholes = stemmed if stemmed is not None else [None] * len(sentences)
        affirmed = ((s, _affirmed_stems(s, whole)) for s, whole in zip(sentences, wholes, strict=True))
        return cls(tuple((s, stems) for s, stems in affirmed if stems))

    def contradicting(self, sentence: str) -> list[str]:
        """The reason a claimed absence is false, quoting the paper sentence that states it ([] when
        the sentence claims no absence, its object is too vague, or no sentence states it)."""
        for m in [*_ABSENCE.finditer(sentence), *_NOT_DONE.finditer(sentence)]:
            definition = _DEFINITION_OF.match(m.group("object"))
            defining = self.defining(absent_stems(definition.group("what"))) if definition else None
            if defining:
                return [f"the paper defines it: {quoted(defining)}"]
            wanted = absent_stems(m.group("object"))
            examples = _EXAMPLES.match(sentence[m.end() :]) if m.re is _ABSENCE else None
            if len(wanted) < MIN_STEMS and examples:
                wanted |= absent_stems(examples.group("examples"))
            if len(wanted) < MIN_STEMS:
                continue
            need = max(MIN_STEMS, math.ceil(MIN_SHARE * len(wanted)))
            best = max(self.sentences, key=lambda s: len(wanted & s[1]), default=None)
            if best is not None and len(wanted & best[1]) >= need:
                return [f"the paper does say it: {quoted(best[0])}"]
            head = head_stems(m.group("object"))
            stating = [s for s, stems in self.sentences if len(head) >= MIN_STEMS and head <= stems]
            if len(stating) >= MIN_HEAD_SENTENCES:
                return [f"the paper says it in {len(stating)} sentences, such as {quoted(stating[0])}"]
        return []

    def defining(self, named: set[str]) -> str | None:
        """The first paper sentence that defines one of the things named (their content stems)."""
        for sentence, stems in self.sentences:
            if not named & stems:
                continue
            words = re.findall(r"[A-Za-z][\w-]*", sentence)
            for i, word in enumerate(words):
                near = words[max(0, i - DEFINITION_REACH) : i + DEFINITION_REACH + 1]
                if _DEFINES.match(word) and any(content_stems(w) & named for w in near):
                    return sentence
        return None


def _affirmed_stems(sentence: str, whole: frozenset[str] | None) -> frozenset[str]:
    """The content stems of what the sentence affirms; `whole`, when known, are those of the whole
    sentence."""
    negation = _NOT_AFFIRMED.search(sentence)
    if negation:
        return frozenset(content_stems(sentence[: negation.start()]))
    return whole if whole is not None else frozenset(content_stems(sentence))


def untested(sentence: str) -> list[str]:
    """The reason a sentence is left to the reader: it claims the paper leaves something it says
    untested or unsupported ([] when it does not)."""
    return [UNTESTED_REASON] if _UNTESTED.search(sentence) else []


def head_stems(phrase: str) -> set[str]:
    """The content stems of the object's head: its first stretch between prepositions or clause words
    that names something (a stretch of critique's words only, "any information about", is passed)."""
    for stretch in _HEAD_END.split(phrase):
        stems = absent_stems(stretch)
        if stems:
            return stems
    return set()


def absent_stems(phrase: str) -> set[str]:
    """The content stems of what a claim says is missing, up to the clause that follows it."""
    phrase = _OBJECT_END.split(phrase, maxsplit=1)[0]
    if _NOT_AFFIRMED.search(phrase):  # "does not consider cases that do not …": a double negation
        return set()
    return content_stems(phrase) - CRITIQUE_WORDS
