"""The claimed-absence check (reader/deepread/absence.py): a sentence saying the paper does not do
what one of its affirmative sentences states is contradicted, with that sentence quoted."""

from __future__ import annotations

from types import SimpleNamespace

from reader.deepread.absence import UNTESTED_REASON, PaperStatements, absent_stems, untested
from reader.deepread.material import section_sentences

# the README sample's own sentences, and one that restricts
TEXT = (
    "Section headings are short lines that are numbered, bold or larger than the body text; captions "
    "start with Figure or Table and a number. Author lists are read on a best-effort basis. "
    "Captions are found only when they start a text block. We do not evaluate on scanned documents."
)
STATEMENTS = PaperStatements.of(section_sentences([SimpleNamespace(title="3 Method", text=TEXT, priority=1)]))


def test_a_claimed_absence_of_what_the_paper_states_is_contradicted_with_the_sentence_quoted():
    (reason,) = STATEMENTS.contradicting(
        "Their method does not account for captions that start with Figure or Table and a number."
    )
    assert reason.startswith("the paper does say it: “Section headings are short lines")
    assert STATEMENTS.contradicting(
        "The paper fails to describe how author lists are read, which hurts recall."
    )
    # the acl2014 note's two, of a paper that trains and reports each phrase type
    assert STATEMENTS.contradicting("There is no information about how author lists are read.")
    assert STATEMENTS.contradicting("There is no discussion of captions that start with Figure or Table.")
    assert STATEMENTS.contradicting("There is no clear answer for scanned documents.") == []  # no absence
    # the s2orc note's Missing experiments, of a paper that compares itself with other corpora (§7)
    assert STATEMENTS.contradicting("Reviewers would need information about how author lists are read.")


def test_true_absences_vague_ones_and_restricted_statements_are_left_alone():
    assert STATEMENTS.contradicting("The authors do not evaluate on scanned documents.") == []
    assert STATEMENTS.contradicting("The paper does not report any information about speed.") == []
    # the only sentence about text blocks restricts ("only when"): it agrees with the claim
    assert STATEMENTS.contradicting("The method does not handle captions that start a text block.") == []
    assert STATEMENTS.contradicting("The paper says headings are numbered.") == []  # no absence claimed


def test_what_is_claimed_missing_stops_at_its_clause_and_drops_the_words_of_critique():
    assert absent_stems(" any information about author lists, which matters") == absent_stems("author lists")
    assert absent_stems(" cases that do not start a block") == set()  # a double negation is not read


def test_a_claim_that_the_paper_leaves_something_untested_is_left_to_the_reader():
    # the acl2012 note's Overclaims, each false: the paper tests all of them
    for said in (
        "The authors suggest using l1/l2 regularization for joint feature selection, but this is not tested "
        "in the experiments.",
        "The authors claim that a larger training sample helps, but the experiments only show gains on "
        "small development sets.",
        "The gain is not supported by the experiments.",
        # the longeval note, of a paper whose RQ1 experiments show it
        "The authors propose guidelines, but they do not provide any empirical evidence to support their claims.",
        # the 2kenize note, of a paper whose Table 3 compares it with four converters
        "The authors propose a model that can disambiguate between mappings, but they do not provide any "
        "evidence to support this claim.",
    ):
        assert untested(said) == [UNTESTED_REASON]
    assert untested("The method was tested on three datasets, but it is not open source.") == []
    assert untested("The authors evaluate the parser on English only.") == []


def test_a_claimed_absence_of_what_the_paper_is_about_is_contradicted_by_its_head():
    text = (
        "We measure inter-annotator agreement with Krippendorff's alpha. "
        "Fine-grained labels raise inter-annotator agreement to 0.7. "
        "Coarse annotations have lower agreement than fine annotations."
    )
    statements = PaperStatements.of(
        section_sentences([SimpleNamespace(title="3 Results", text=text, priority=1)])
    )
    # the longeval note: a qualifier the paper never writes, after what the paper is about
    (reason,) = statements.contradicting(
        "The paper does not provide any information about inter-annotator agreement on faithfulness "
        "scores for SQuALITY or PubMed datasets."
    )
    assert reason.startswith("the paper says it in 2 sentences")
    assert statements.contradicting(
        "The paper does not compare different annotation methods, such as coarse and fine, for long summaries."
    )
    # the specter note: what is said of it ("was implemented or validated") ends the head
    assert statements.contradicting(
        "The paper does not provide information on how inter-annotator agreement was measured or validated."
    )
    # a head of critique's words names nothing; one the paper states once is no subject of it
    assert (
        statements.contradicting("The paper does not give any details about Krippendorff's alpha on PubMed.")
        == []
    )
    assert (
        statements.contradicting("The paper does not report the significance of agreement on PubMed.") == []
    )


def test_what_the_note_says_was_not_described_or_is_lacking_is_an_absence_too():
    # the wheat note: "the data processing and statistical analysis were not thoroughly described"
    (reason,) = STATEMENTS.contradicting(
        "Additionally, the best-effort reading of author lists was not thoroughly described, which hurts."
    )
    assert reason.startswith("the paper does say it: “Author lists are read")
    assert STATEMENTS.contradicting("The method lacks captions that start with Figure or Table and a number.")
    assert STATEMENTS.contradicting("Scanned documents were not evaluated.") == []  # the paper says so


def test_a_paper_sentence_affirms_what_comes_before_its_negation():
    statements = PaperStatements.of(
        [
            "Scalability is a particularly important concern for Open Information Extraction, the task of "
            "extracting large numbers of relations that are not specified in advance.",
            "We do not evaluate the tagger on German text.",
        ]
    )
    claim = "It does not address the scalability concerns associated with Open Information Extraction."
    assert statements.contradicting(claim)[0].startswith("the paper does say it: “Scalability is")
    # what follows the negation is not affirmed
    assert statements.contradicting("The paper does not evaluate the tagger on German text.") == []


def test_a_claimed_lack_of_a_definition_the_paper_gives_is_contradicted():
    # as the tutorial on goal awareness defines proactivity
    paper = PaperStatements.of(
        [
            "Conversational agents' proactivity can be defined as the capability to create or control "
            "the conversation by taking the initiative.",
            "We define no reward for the dialogue policy here, and leave it to future work.",
            "The reward function is computed from user ratings.",
        ]
    )
    claim = "Another limitation is the lack of a clear definition of what constitutes proactive behavior."
    assert paper.contradicting(claim) and "defines it" in paper.contradicting(claim)[0]
    # a definition of something the paper names but never defines stands
    assert paper.contradicting("The paper lacks a clear definition of the reward function.") == []
