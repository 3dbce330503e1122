"""The sentence splitter on decimals, abbreviations, citations and CJK punctuation.

Several inputs are real sentences taken from ../shared/papers (the text of the
PDFs, extracted with pymupdf), the rest are the cases the issue names.
"""

import re

import pytest

from reader.audit.split import sentence_spans, split_sentences

NAIVE = re.compile(r"(?<=[。！？.!?])\s*")

REAL_CASES = [
    # acl2020_specter: "et al. (2019)", a decimal percentage, "e.g.,", "i.e."
    (
        "With respect to the terminology used by Devlin et al. (2019), unlike most existing LMs "
        "that are “fine-tuning based”, our approach results in embeddings. We follow the approach "
        "of Feldman et al. (2019) in mapping the MeSH vocabulary to the disease classes.",
        2,
    ),
    (
        "The ranker improved clickthrough rate over the baseline by 46.5%, demonstrating its "
        "superiority. The category with least number of samples is Hepatitis (1.7% of the total dataset).",
        2,
    ),
    (
        "We encode the concatenated title and abstract using a Transformer LM (e.g., SciBERT) and "
        "take the final representation of the [CLS] token. Papers cited by a paper cited by the "
        "query paper, i.e. if P1 cites P2 and P2 cites P3, are hard negatives.",
        2,
    ),
    # acl2020_2kenize: "Eq. (6)", "Fig. 2", "e.g." inside parentheses
    (
        "Using Eq. (6) as the scoring function, Viterbi outputs the mapping sequence. "
        "Fig. 2 explains this process of joint subword modelling. Some sentences are code-mixed "
        "with zh-yue (e.g. speech transcription) or English.",
        3,
    ),
    # acl2020_2kenize: Chinese abstract with CJK punctuation and a percentage
    ("研究中文NLP 時，將文本進行繁簡轉換是常見的數據預處理步驟。藉此透過測試現行的繁簡轉換算法，發現只有55-85% 準確度。", 2),
]


@pytest.mark.parametrize("text,count", REAL_CASES)
def test_real_sentences_from_shared_papers(text, count):
    sentences = split_sentences(text)
    assert len(sentences) == count, sentences
    # nothing lost, nothing invented: the pieces rebuild the text modulo whitespace
    assert "".join(sentences).replace(" ", "") == text.replace(" ", "")


def test_naive_regex_breaks_what_ours_keeps():
    text = "Accuracy dropped by only 0.3% (Fig. 2), as in Smith et al. (2020). The end."
    naive = [p for p in NAIVE.split(text) if p]
    assert "Accuracy dropped by only 0." in naive  # the seed regex cuts the decimal
    assert "3% (Fig." in naive
    assert split_sentences(text) == [
        "Accuracy dropped by only 0.3% (Fig. 2), as in Smith et al. (2020).",
        "The end.",
    ]


@pytest.mark.parametrize(
    "text,expected",
    [
        ("It drops 0.3% and 1.2%. Next.", ["It drops 0.3% and 1.2%.", "Next."]),
        ("See Eq. (3) and Sec. 4.2 for details. Done.", ["See Eq. (3) and Sec. 4.2 for details.", "Done."]),
        ("Baselines, e.g. BERT, i.e. a Transformer, help. Yes.", ["Baselines, e.g. BERT, i.e. a Transformer, help.", "Yes."]),
        ("As J. Smith argued [12]. Then [3, 4] disagreed.", ["As J. Smith argued [12].", "Then [3, 4] disagreed."]),
        ("Is it robust? No! It fails.", ["Is it robust?", "No!", "It fails."]),
        ("BERT-large 精度只下降 0.3%，远低于 NEXUS 的 1.2%。作者没有报告方差！真的吗？",
         ["BERT-large 精度只下降 0.3%，远低于 NEXUS 的 1.2%。", "作者没有报告方差！", "真的吗？"]),
        ("混合 English 句子 works.然后中文继续。", ["混合 English 句子 works.", "然后中文继续。"]),
        ("He said “it works.” Then left.", ["He said “it works.”", "Then left."]),
        ("They used 1,200 samples, etc. and more. End.", ["They used 1,200 samples, etc. and more.", "End."]),
    ],
)
def test_split_cases(text, expected):
    assert split_sentences(text) == expected


def test_markdown_headings_and_list_markers():
    text = "## Strengths\n- The method is simple. It is fast.\n1. First point holds.\n\n2) Second."
    assert split_sentences(text) == [
        "The method is simple.", "It is fast.", "First point holds.", "Second.",
    ]


def test_empty_and_punctuation_only():
    assert split_sentences("") == []
    assert split_sentences("   \n\n ... ") == []


def test_spans_are_exact_substrings():
    text = "First one. 第二句。\n- Third (Fig. 3) one!"
    for s, e in sentence_spans(text):
        assert text[s:e] in split_sentences(text)
    assert [text[s:e] for s, e in sentence_spans(text)] == split_sentences(text)
