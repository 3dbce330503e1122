"""Pure pieces of ingest: text rules, plain-text parsing and chunking."""

import pytest

from reader.errors import IngestError
from reader.ingest.chunk import chunk_paper
from reader.ingest.model import Block, ParsedPaper
from reader.ingest.text import (
    caption_label,
    detect_language,
    join_lines,
    normalize_heading,
    parse_text,
    split_references,
)
from reader.text.tokens import estimate_tokens


@pytest.mark.parametrize(
    "text, expected",
    [
        ("Figure 2: Results on the test set.", ("figure", "Figure 2")),
        ("Fig. 3. Accuracy by length", ("figure", "Figure 3")),
        ("Fig 1. Heat stress", ("figure", "Figure 1")),
        ("TABLE IV: Ablations", ("table", "Table IV")),
        ("Table 1. Scores", ("table", "Table 1")),
        ("Table 1 shows the results", None),
        ("Figures are drawn", None),
    ],
)
def test_caption_label(text, expected):
    assert caption_label(text) == expected


def test_join_lines_dehyphenates_and_keeps_cjk_tight():
    assert join_lines(["distri-", "butional vectors", " are "]) == "distributional vectors are"
    assert join_lines(["state-of-the-", "Art"]) == "state-of-the- Art"
    assert join_lines(["中文", "句子"]) == "中文句子"


def test_detect_language():
    assert detect_language("A paper about sentence splitting in English. " * 20) == "en"
    assert detect_language("我们提出了一种新的方法来评估科学文本的句子切分。" * 5 + " BERT F1") == "zh"
    # an English paper quoting a few Chinese characters stays English
    assert detect_language("English text " * 200 + "繁體中文") == "en"


def test_token_estimate_counts_latin_by_four_characters_and_cjk_and_kana_one_each():
    assert estimate_tokens("") == 1
    assert estimate_tokens("plain English text of some length") == 33 // 4 + 1
    assert estimate_tokens("中文和 English 混合") == 5 + 9 // 4 + 1
    assert estimate_tokens("ひらがなカタカナ") == 8 + 1


def test_normalize_heading():
    assert normalize_heading("3.1 Related Work") == "related work"
    assert normalize_heading("IV. EXPERIMENTS") == "experiments"


def test_split_references_numbered_and_author_year():
    numbered = split_references(
        [
            ("[1] A. Author. 2020. A title that", 9, True),
            ("continues here. Venue.", 9, False),
            ("[2] B. Author. 2021. Another title. Venue.", 9, True),
            ("[3] C. Author. 2019. Third. Venue.", 10, False),
        ]
    )
    assert [(r.marker, r.page) for r in numbered] == [("[1]", 9), ("[2]", 9), ("[3]", 10)]
    assert numbered[0].text == "A. Author. 2020. A title that continues here. Venue."
    author_year = split_references(
        [
            ("Smith, J. 2019. Something long", 8, True),
            ("and more. Journal 3(1).", 8, False),
            ("Zhang, L. (2020) Other work. Proc.", 8, True),
        ]
    )
    assert [r.text[:5] for r in author_year] == ["Smith", "Zhang"]
    assert all(r.marker == "" for r in author_year)


def _write(tmp_path, name, text):
    path = tmp_path / name
    path.write_text(text, encoding="utf-8")
    return path


def test_parse_markdown(tmp_path):
    md = _write(
        tmp_path,
        "note.md",
        (
            "# A Study of Splitting\n\n## Abstract\n\nWe split sentences.\n\n"
            "## 1 Introduction\n\nSentence splitting matters.\n\nTable 1: Scores by method.\n\n"
            "\f## References\n\n[1] A. Author. 2020. Title. Venue.\n\n[2] B. Author. 2021. Title. Venue.\n"
        ),
    )
    parsed = parse_text(md)
    assert parsed.title == "A Study of Splitting"
    assert parsed.source_kind == "md"
    assert parsed.pages == 2
    assert parsed.abstract == "We split sentences."
    assert [s["title"] for s in parsed.sections] == ["Abstract", "1 Introduction", "References"]
    assert parsed.captions[0].label == "Table 1"
    assert [r.marker for r in parsed.references] == ["[1]", "[2]"]
    assert parsed.references[0].page == 2


def test_parse_plain_text_headings(tmp_path):
    txt = _write(
        tmp_path,
        "paper.txt",
        ("Splitting Sentences in Papers\n\nAbstract\n\nWe study it.\n\n1 Introduction\n\nIt matters.\n"),
    )
    parsed = parse_text(txt)
    assert parsed.title == "Splitting Sentences in Papers"
    assert [s["title"] for s in parsed.sections] == ["Abstract", "1 Introduction"]
    assert parsed.language == "en"


def test_parse_chinese_text(tmp_path):
    txt = _write(
        tmp_path, "zh.txt", "科学文本的句子切分\n\n" + "我们评估了一种用于科学文本的句子切分方法。" * 10
    )
    assert parse_text(txt).language == "zh"


def test_empty_and_binary_text_files(tmp_path):
    empty = tmp_path / "empty.txt"
    empty.write_text("  \n\n")
    with pytest.raises(IngestError, match="empty text file"):
        parse_text(empty)
    binary = tmp_path / "blob.txt"
    binary.write_bytes(b"\x00\x01\x02" * 100)
    with pytest.raises(IngestError, match="not a text file"):
        parse_text(binary)
    latin = tmp_path / "latin.txt"
    latin.write_bytes("caf\xe9 na\xefve".encode("latin-1"))
    with pytest.raises(IngestError, match="not UTF-8"):
        parse_text(latin)


def _paper(blocks):
    return ParsedPaper(
        sha256="0" * 64,
        source_path="x.pdf",
        source_kind="pdf",
        title="T",
        authors=[],
        year=None,
        abstract="",
        pages=max(b.page for b in blocks),
        language="en",
        blocks=blocks,
    )


def _sentences(n, start=0):
    return " ".join(
        f"Sentence number {i} says something about the method and its results."
        for i in range(start, start + n)
    )


def test_chunks_respect_sections_pages_and_overlap():
    blocks = [Block("T", 1, "", "title"), Block("1 Introduction", 1, "1 Introduction", "heading")]
    blocks += [Block(_sentences(10, i * 10), 1 + i // 3, "1 Introduction", "body") for i in range(9)]
    blocks += [Block("2 Method", 4, "2 Method", "heading"), Block(_sentences(30, 100), 4, "2 Method", "body")]
    blocks += [Block("Figure 1: Overview of the method.", 4, "Figure 1 caption", "caption")]
    blocks += [Block("References", 5, "References", "heading")]
    blocks += [
        Block(f"[{i}] Author {i}. 2020. Title {i}. Venue.", 5, "References", "reference")
        for i in range(1, 40)
    ]
    chunks = chunk_paper(_paper(blocks), target_tokens=200, overlap_tokens=40)

    intro = [c for c in chunks if c.section == "1 Introduction"]
    method = [c for c in chunks if c.section == "2 Method"]
    assert len(intro) > 3 and len(method) >= 2
    assert all("Sentence number 9" not in c.text for c in method)  # no passage spans two sections
    assert intro[0].page_start == 1 and intro[-1].page_end == 3
    for a, b in zip(intro, intro[1:]):
        tail = a.text.split("\n")[-1].split(". ")[-1]
        assert tail and tail in b.text  # the end of one passage opens the next
        assert a.page_start <= b.page_start
    assert all(c.n_tokens <= 200 + 40 + 30 for c in chunks)
    caption = [c for c in chunks if c.section == "Figure 1 caption"]
    assert [c.text for c in caption] == ["Figure 1: Overview of the method."]
    refs = [c for c in chunks if c.section == "References"]
    assert refs and refs[0].text.startswith("References\n[1] Author 1.")
    assert sum(c.text.count("[") for c in refs) == 39  # each entry exactly once, no overlap
    assert [c.ordinal for c in chunks] == list(range(len(chunks)))


def test_tiny_section_joins_the_next():
    blocks = [
        Block("3 Experiments", 2, "3 Experiments", "heading"),
        Block("Short intro.", 2, "3 Experiments", "body"),
        Block("3.1 Data", 2, "3.1 Data", "heading"),
        Block(_sentences(8), 3, "3.1 Data", "body"),
    ]
    chunks = chunk_paper(_paper(blocks), target_tokens=300)
    assert len(chunks) == 1
    assert chunks[0].text.startswith("3 Experiments\nShort intro.\n3.1 Data")
    assert (chunks[0].page_start, chunks[0].page_end) == (2, 3)


def test_a_short_section_of_its_own_stands_alone_under_its_name():
    blocks = [
        Block("3 Results", 1, "3 Results", "heading"),
        Block(_sentences(8), 1, "3 Results", "body"),
        Block("4 Limitations", 1, "4 Limitations", "heading"),
        Block("Captions are found only when they start a text block.", 1, "4 Limitations", "body"),
        Block("5 Conclusion", 1, "5 Conclusion", "heading"),
        Block(_sentences(8), 1, "5 Conclusion", "body"),
        Block("6 Experiments", 2, "6 Experiments", "heading"),
        Block("6.1 Data", 2, "6.1 Data", "heading"),
        Block(_sentences(8), 2, "6.1 Data", "body"),
    ]
    chunks = chunk_paper(_paper(blocks), target_tokens=300)
    limitations = [c for c in chunks if c.section == "4 Limitations"]
    assert len(limitations) == 1 and limitations[0].text.startswith("4 Limitations\nCaptions are found")
    assert not any("Captions are found" in c.text for c in chunks if c.section == "5 Conclusion")
    assert not any(c.section == "6 Experiments" for c in chunks), "a bare heading still joins its subsection"
    assert any(c.section == "6.1 Data" and c.text.startswith("6 Experiments\n6.1 Data") for c in chunks)
