"""A paper's title, authors and year from its first page: the title is the
largest-font line (Chinese too), the authors are the name lines between the
title and the abstract, the year comes from the page's venue, copyright and date
lines (else the PDF's creation date), never from a year cited in the text.

Synthetic first pages check each rule; a few real papers are checked when
../shared is there (expected values read off each PDF's first page)."""

from pathlib import Path

import pymupdf
import pytest
from conftest import SHARED, SHARED_PAPERS

from reader.ingest.pdf import parse_pdf

CJK = "china-s"


def first_page(path: Path, lines: list[tuple[float, str, float, str]], created: str = "") -> Path:
    """A two-page PDF: `lines` (y, text, font size, font) on page 1, a plain page 2."""
    doc = pymupdf.open()
    page = doc.new_page()
    for y, text, size, font in lines:
        page.insert_text((60, y), text, fontsize=size, fontname=font)
    doc.new_page().insert_text(
        (60, 100), "The second page continues the discussion of the method in detail.", fontsize=10
    )
    if created:
        doc.set_metadata({"creationDate": created})
    doc.save(path)
    doc.close()
    return path


def test_a_chinese_paper_gets_its_chinese_title_and_names_and_no_words_from_the_abstract(tmp_path):
    pdf = first_page(
        tmp_path / "ner-paper.pdf",
        [
            (40, "中文信息学报 第33卷 第5期 2019年5月", 8, CJK),
            (70, "文章编号：1003-0077（2019）05-0001-08", 9, CJK),
            (110, "基于注意力机制的中文命名实体识别", 16, CJK),
            (140, "王小明 李华", 13, CJK),
            (165, "（苏州大学 计算机科学与技术学院，江苏 苏州 215006）", 9, CJK),
            (195, "摘要：命名实体识别是自然语言处理的基础任务。本文", 10.5, CJK),
            (211, "采用F BiLSTM-CRF模型，并加入注意力机制。", 10.5, CJK),
            (227, "关键词：命名实体识别；注意力机制", 10.5, CJK),
            (260, "1 引言", 12, CJK),
            (290, "命名实体识别任务旨在从文本中找出人名、地名和机构名等实体。", 10.5, CJK),
            (306, "早期方法依赖人工特征，近年来神经网络方法成为主流并取得了", 10.5, CJK),
            (322, "很好的效果，例如 Huang 等（2015）与 Ma 和 Hovy（2016）的工作。", 10.5, CJK),
        ],
    )
    parsed = parse_pdf(pdf)
    assert parsed.title == "基于注意力机制的中文命名实体识别"  # was the file name
    assert parsed.authors == ["王小明", "李华"]  # was "F BiLSTM-CRF"
    assert parsed.year == 2019


def test_names_marked_with_chinese_characters_are_still_names(tmp_path):
    """2kenize marks its authors' affiliations with 徒 and 師 glued to the names."""
    pdf = first_page(
        tmp_path / "marked.pdf",
        [
            (80, "Tying Subword Sequences for Script Conversion", 15, "helv"),
            (110, "Pranav A徒and Isabelle Augenstein師", 12, CJK),
            (130, "徒Independent Researcher, Hong Kong", 10, CJK),
            (160, "Abstract", 12, "hebo"),
            (180, "We convert simplified script to traditional script with a subword model.", 10, "helv"),
        ],
    )
    assert parse_pdf(pdf).authors == ["Pranav A", "Isabelle Augenstein"]


def test_only_name_lines_are_authors(tmp_path):
    """A line of an inline abstract made of capitalised pairs is no author line: the
    names end where the abstract starts."""
    pdf = first_page(
        tmp_path / "inline-abstract.pdf",
        [
            (80, "Sequence Labelling with Neural Networks", 15, "helv"),
            (110, "Ada Lovelace and Alan Turing", 12, "helv"),
            (130, "Department of Computing, Example University", 10, "helv"),
            (160, "Abstract: We evaluate a tagger on two treebanks,", 10, "helv"),
            (174, "Stanford Dependencies and Penn Treebank, and", 10, "helv"),
            (188, "report the accuracy for each of their languages.", 10, "helv"),
            (200, "1 Introduction", 12, "hebo"),
        ],
    )
    assert parse_pdf(pdf).authors == ["Ada Lovelace", "Alan Turing"]


PREPRINT = [
    (80, "Tying Subword Sequences for Script Conversion", 15, "helv"),
    (110, "Ada Lovelace", 12, "helv"),
    (140, "Abstract", 12, "hebo"),
    (160, "Conversion between the scripts is a common step (Denisowski, 2019;", 10, "helv"),
    (174, "Chu et al., 2012) that current tools get wrong (Zhang, 2014).", 10, "helv"),
]


def test_a_year_cited_in_the_text_is_not_the_papers_year(tmp_path):
    """No venue or date line on page 1: the PDF's creation date, not the latest citation."""
    created = parse_pdf(first_page(tmp_path / "created.pdf", PREPRINT, created="D:20200507104839Z"))
    assert created.year == 2020  # was 2019, from "(Denisowski, 2019"
    # with no creation date either the year is unknown rather than a cited one
    assert parse_pdf(first_page(tmp_path / "bare.pdf", PREPRINT)).year is None


@pytest.mark.parametrize(
    ("venue_lines", "year"),
    [
        # the publication date, not the date the manuscript was received
        (["Future Internet 2014, 6, 61-75; doi:10.3390/fi6010061",
          "Received: 13 November 2013; in revised form: 1 December 2013 / Accepted: 10 January 2014 /",
          "Published: 22 January 2014"], 2014),
        # the proceedings' year where the copyright line has the year before
        (["Proceedings of NAACL-HLT 2018, pages 84-91",
          "New Orleans, Louisiana, June 1 - 6, 2018. (c) 2017 Association for Computational Linguistics"], 2018),
        # a journal's "volume (year) article" line, not the conference's name
        (["JCRAI-2021", "Journal of Physics: Conference Series 2188 (2022) 012011"], 2022),
        # a Chinese journal: the received date when nothing else is given
        (["收稿日期：2017-03-16；定稿日期：2017-04-13"], 2017),
    ],
)  # fmt: skip
def test_the_year_comes_from_the_venue_and_date_lines(tmp_path, venue_lines, year):
    lines = [(30 + 14 * i, text, 8, CJK) for i, text in enumerate(venue_lines)]
    lines += [(y + 40, text, size, font) for y, text, size, font in PREPRINT]
    lines.append((240, "Later work (Smith et al., 2024) revisits the task.", 10, "helv"))
    assert parse_pdf(first_page(tmp_path / "venue.pdf", lines, created="D:20250101000000Z")).year == year


# read off each PDF's first page: (title, authors, year)
KNOWN = {
    SHARED_PAPERS / "acl2020_2kenize.pdf": (
        "2kenize: Tying Subword Sequences for Chinese Script Conversion",
        ["Pranav A", "Isabelle Augenstein"],
        2020,  # no date on page 1 (ACL 2020); the PDF was made in May 2020
    ),
    SHARED_PAPERS / "mdpi_futureinternet2014_fi6010061.pdf": (
        "Analysis Matrix for Smart Cities",
        ["Pablo E. Branchi", "Carlos Fernández-Valdivielso", "Ignacio R. Matias"],
        2014,
    ),
    SHARED_PAPERS / "iop_jpcs2188_012011.pdf": (
        "SemEAGAT: A Novel Approach by Incorporating Semantic Dependency Graph in Event Detection",
        ["Yuqi Xi", "Jiamin Lu", "Tingting Hang", "Yunfei Zhang", "Zhongyi Wang", "Jun Feng"],
        2022,
    ),
    SHARED_PAPERS / "acl2014_P14-1059.pdf": (
        "How to make words with vectors: Phrase generation in distributional semantics",
        ["Georgiana Dinu", "Marco Baroni"],
        2014,
    ),
    SHARED / "papers-train" / "zh_multichannel-lstm-emotion-jcip.pdf": (
        "基于多通道LSTM 的不平衡情绪分类方法",  # the space after LSTM is in the PDF
        ["殷昊", "李寿山", "贡正仙", "周国栋"],
        2017,  # the manuscript's received and final dates; the issue is left as 201*
    ),
}


@pytest.mark.parametrize("path", list(KNOWN), ids=[p.stem[:24] for p in KNOWN])
def test_known_papers_title_authors_and_year(path):
    if not path.exists():
        pytest.skip(f"{path} is not here")
    parsed = parse_pdf(path)
    assert (parsed.title, parsed.authors, parsed.year) == KNOWN[path]


def test_a_collective_author_is_read_from_the_first_page_where_no_name_line_or_metadata_gives_one(tmp_path):
    """The sample paper's author is "The reader project contributors": no person's name, so the
    name lines found none and its note had `authors: []` (issue 43, item 5)."""
    lines = [
        (80, "Reading Order and Coverage When Ingesting Two-Column Papers", 16, "helv"),
        (110, "The reader project contributors", 11, "helv"),
        (126, "reader, an open-source tool for deep reading of academic papers", 9, "helv"),
        (160, "Abstract", 11, "hebo"),
        (178, "Tools that answer questions about a paper first turn its PDF into text.", 10, "helv"),
        (210, "1 Introduction", 11, "hebo"),
        (228, "Evidence search only works when the stored text is complete and in order.", 10, "helv"),
    ]
    parsed = parse_pdf(first_page(tmp_path / "collective.pdf", lines))  # no author in the metadata
    assert parsed.authors == ["The reader project contributors"]
    people = [lines[0], (110, "Ada Lovelace and Alan Turing", 11, "helv"), *lines[2:]]
    assert parse_pdf(first_page(tmp_path / "people.pdf", people)).authors == ["Ada Lovelace", "Alan Turing"]
    nobody = [lines[0], *lines[3:]]  # no line between the title and the abstract: none made up
    assert parse_pdf(first_page(tmp_path / "nobody.pdf", nobody)).authors == []


def test_the_sample_papers_author_is_read():
    from conftest import SAMPLE_PAPER

    assert parse_pdf(SAMPLE_PAPER).authors == ["The reader project contributors"]
