"""A draft is tidied before its audit: repeated sentences, empty bullets and the headings left
empty go, and every removal says why."""

from __future__ import annotations

from reader.deepread.tidy import (
    BARE_LEAD_IN,
    CAPTION,
    ECHOES_HEADING,
    EMPTY_BULLET,
    EMPTY_HEADING,
    FORMULA_PIECE,
    OTHER_WORK,
    REPEATS,
    content_key,
    drop_repeats,
    tidy,
)

DRAFT = """## Key results
- The model reaches 91.2% F1 on CoNLL-2003.
- It is faster than the CRF baseline.

## Relation to prior work
- The model reaches 91.2% F1 on CoNLL-2003.
- It builds on the BiLSTM-CRF tagger of Lample et al.

## Open questions
- The model reaches 91.2 % F1 on CoNLL-2003!
\\-
-
"""


def test_a_repeated_sentence_its_bullet_and_the_heading_it_left_empty_go():
    result = tidy(DRAFT)
    assert result.text.count("91.2% F1") == 1
    assert "Open questions" not in result.text  # nothing left under it
    assert "## Relation to prior work\n- It builds on the BiLSTM-CRF tagger" in result.text
    assert result.count(REPEATS) == 2
    assert result.count(EMPTY_HEADING) == 1
    assert result.count(EMPTY_BULLET) == 4  # two left by the repeats, two written empty
    assert "\\-" not in result.text and "\n-\n" not in result.text + "\n"


def test_nearly_the_same_sentence_is_a_repeat_and_a_different_one_is_not():
    text = (
        "The method improves recall on long documents by eight points. "
        "On long documents the method improves recall by eight points. "
        "The method improves precision on short documents by two points."
    )
    result = drop_repeats(text)
    assert [why for _, why in result.removed] == [REPEATS]
    assert "precision on short documents" in result.text
    assert result.text.count("improves recall") == 1


def test_short_sentences_must_match_exactly_to_count_as_repeats():
    result = drop_repeats("It is fast. It is slow. It is fast!")
    assert result.text == "It is fast. It is slow."


def test_function_words_do_not_make_sentences_differ_and_chinese_counts_too():
    assert content_key("The tagger is fast.") == content_key("A tagger, fast.")
    result = drop_repeats("该方法提升了准确率。该方法提升了准确率！另一个结论。")
    assert result.count(REPEATS) == 1 and "另一个结论" in result.text


def test_a_tidy_draft_is_left_as_it_is():
    text = "## Problem\nNamed entities in tweets are rare.\n\n## Method\nA BiLSTM-CRF tagger."
    result = tidy(text)
    assert result.text == text and result.removed == []


def test_a_sentence_that_only_says_its_heading_holds_nothing_goes_with_the_heading():
    draft = (
        "## Missing experiments or baselines\nThe paper does not provide any missing experiments or baselines.\n"
        "## Overclaims\nThe paper does not make any overclaims. However, the paper does not make any overclaims.\n"
        "## Quality of the evidence\nThe paper does not report variance over seeds.\n"
        "## Weaknesses\nThe state-of-the-art claim on PubTabNet is not tested in Table 3."
    )
    result = tidy(draft)
    assert result.text == (
        "## Quality of the evidence\nThe paper does not report variance over seeds.\n"
        "## Weaknesses\nThe state-of-the-art claim on PubTabNet is not tested in Table 3."
    )
    assert result.count(ECHOES_HEADING) == 3 and result.count(EMPTY_HEADING) == 2
    generic = "## Missing experiments or baselines\nThe authors do not provide any missing experiments for their method."
    assert tidy(generic).text == "" and tidy(generic).count(ECHOES_HEADING) == 1
    empty = "## Weaknesses\nThe paper's text does not provide any information about weaknesses."
    assert tidy(empty).text == ""


def test_a_line_whose_first_sentence_went_does_not_start_with_a_space():
    result = tidy(
        "## Method\nIt tags tweets with a CRF.\n## Key results\nIt tags tweets with a CRF. It reaches 91.2 F1."
    )
    assert result.text == "## Method\nIt tags tweets with a CRF.\n## Key results\nIt reaches 91.2 F1."


def test_a_captions_label_pasted_as_a_sentence_goes_and_a_sentence_citing_a_table_stays():
    result = tidy(
        "## Key results\nThe graph has more than 280M nodes. Figure 1: Part of the literature graph. "
        "Table 3: Results of the entity extraction model on SemEval-2017.\n"
        "- Table 4: The Bag of Concepts F1 score of the baseline.\n"
        "## Quality of the evidence\nTable 3 reports no variance. Fig. 2 shows the error falling."
    )
    assert result.text == (
        "## Key results\nThe graph has more than 280M nodes.\n"
        "## Quality of the evidence\nTable 3 reports no variance. Fig. 2 shows the error falling."
    )
    assert result.count(CAPTION) == 3 and result.count(EMPTY_BULLET) == 1
    # a caption's credit line and its panels (the neuron perspective's Key results)
    credits = tidy(
        "## Key results\n- Adapted and modified from Otero-Millan et al.35 (B) Same analysis as in (A).\n"
        "- (A) and (B) are adapted and modified from Bosman et al.25\n"
        "- Attention enhances gamma-band activity in V4 (A), as Bosman et al. report."
    )
    assert (
        credits.text
        == "## Key results\n- Attention enhances gamma-band activity in V4 (A), as Bosman et al. report."
    )
    assert credits.count(CAPTION) == 2


def test_a_formula_copied_one_line_a_piece_goes_and_a_short_list_item_stays():
    # roark13's Method copied the CRF's formula from its material, each piece a line
    result = tidy(
        "### Method\nThe CRF's parameters are estimated by optimizing the following conditional probability:\n"
        "d X\n!\nexp\nλkφk(x, y)\nk=1\nP(y | x) =\nZ(x)\nwhere Z(x) is a global normalization constant.\n"
        "### Key results\n- ROUGE-L\n- 模型准确率提高。\nThe F-score rises by 13%."
    )
    assert result.text == (
        "### Method\nThe CRF's parameters are estimated by optimizing the following conditional probability:\n\n"
        "where Z(x) is a global normalization constant.\n"
        "### Key results\n- ROUGE-L\n- 模型准确率提高。\nThe F-score rises by 13%."
    )
    assert result.count(FORMULA_PIECE) == 6


def test_a_cited_works_result_goes_from_key_results_and_stays_elsewhere():
    # the acl2014 note's Key results restated the paper's related work
    result = tidy(
        "### Key results\n- For example, Klementiev et al. (2012) reconstruct phrase tables in semantic space.\n"
        "- Decomposition recovers 47% of the constituents. Smith and Jones [4] find the same.\n"
        "### Relation to prior work\nKalchbrenner and Blunsom (2013) use composed sentence vectors."
    )
    assert result.text == (
        "### Key results\n- Decomposition recovers 47% of the constituents.\n"
        "### Relation to prior work\nKalchbrenner and Blunsom (2013) use composed sentence vectors."
    )
    assert result.count(OTHER_WORK) == 2 and result.count(EMPTY_BULLET) == 1
    kept = "### Key results\nSQuAD [12] accuracy rises to 90.1%."  # a dataset with its citation
    assert tidy(kept).text == kept


def test_a_lead_in_that_names_nothing_goes_and_its_items_stay():
    draft = (
        "## Threats to validity\n"
        "The results may not hold elsewhere due to several factors:\n"
        "- **Data**: the corpus has 9 million pages.\n\n"
        "## Contributions\n"
        "SPECTER improves on three tasks:\n"
        "- citation prediction\n\n"
        "## Strengths\n"
        "The paper adds:\n"
    )
    done = tidy(draft)
    assert "several factors" not in done.text and "- **Data**: the corpus has 9 million pages." in done.text
    assert "SPECTER improves on three tasks:" in done.text  # it names something
    assert "## Strengths" not in done.text  # its only sentence was a bare lead-in
    assert done.count(BARE_LEAD_IN) == 2
    outline = tidy(
        "## Open questions\n- The remainder of the paper is organized as follows.\n- REALM is slow.\n"
    )
    assert "remainder" not in outline.text and "- REALM is slow." in outline.text
    assert outline.count(BARE_LEAD_IN) == 1
