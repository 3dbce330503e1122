"""Markdown notes from stored reviews: valid front matter, every flag marked once, nothing raw."""

from __future__ import annotations

import re

import pytest
import yaml
from markdown_it import MarkdownIt

from reader.export import export_notes
from reader.export.markdown import escape_block, escape_title, note_file_name, slugify
from reader.store.db import transaction
from reader.store.tables import (
    Analysis,
    AnalysisIteration,
    Paper,
    SentenceVerdict,
    VerdictEvidence,
)

NASTY_TITLE = 'Attacks on "Reviewers" --- <script>alert(1)</script> and [[Links]]: a #tag $x$'
MARK = "[待验证] "


def add_paper(db, paper_id: str, title: str, *, abstract: str = "We study things.") -> None:
    with transaction(db) as s:
        s.add(
            Paper(
                id=paper_id,
                title=title,
                authors=["Ada Lovelace", "Alan <b>Turing</b>"],
                year=2021,
                abstract=abstract,
                source_path=f"/papers/{paper_id[:4]}.pdf",
                source_kind="pdf",
                pages=9,
            )
        )


def add_analysis(
    db,
    paper_id: str,
    kind: str,
    sentences: list[tuple[str, str]],
    *,
    evidence: dict[str, tuple[str, int]] | None = None,
    regenerations: int = 1,
) -> None:
    """sentences: (text, verdict); unsupported ones are marked in final_text as deep_read does."""
    evidence = evidence or {}
    final = " ".join((MARK + t) if v == "unsupported" else t for t, v in sentences)
    flagged = sum(1 for _, v in sentences if v == "unsupported")
    verdicts = []
    for i, (text, verdict) in enumerate(sentences):
        ev = []
        if text in evidence:
            quote_text, page = evidence[text]
            ev = [
                VerdictEvidence(rank=0, page_start=page, page_end=page, text=quote_text),
                VerdictEvidence(rank=1, page_start=1, page_end=1, text="a farther passage"),
            ]
        verdicts.append(
            SentenceVerdict(
                ordinal=i,
                text=text,
                verdict=verdict,
                llm_answer="NO" if verdict == "unsupported" else "YES",
                reasons=["number 0.3% not in the paper"] if "0.3%" in text else [],
                evidence=ev,
            )
        )
    with transaction(db) as s:
        s.add(
            Analysis(
                paper_id=paper_id,
                kind=kind,
                final_text=final,
                regenerations=regenerations,
                flagged_ratio=flagged / len(sentences),
                generator_model="gen-model",
                verifier_model="check-model",
                left_out_sections=["Appendix B"],
                iterations=[
                    AnalysisIteration(
                        iteration=0,
                        text="draft",
                        n_sentences=len(sentences),
                        n_flagged=len(sentences),
                        flagged_ratio=1.0,
                    ),
                    AnalysisIteration(
                        iteration=1,
                        text=final,
                        n_sentences=len(sentences),
                        n_flagged=flagged,
                        flagged_ratio=flagged / len(sentences),
                        verdicts=verdicts,
                    ),
                ],
            )
        )


def front_matter(text: str) -> dict:
    assert text.startswith("---\n")
    head, _ = text[4:].split("\n---\n", 1)
    return yaml.safe_load(head)


def html_of(text: str) -> str:
    body = text[4:].split("\n---\n", 1)[1]
    return MarkdownIt("commonmark").enable("table").render(body)


@pytest.fixture
def reviewed(db):
    pid = "ab" * 32
    add_paper(db, pid, "Sparse Retrieval for Long Documents")
    add_analysis(
        db,
        pid,
        "critique",
        [
            ("The method improves recall on long documents.", "supported"),
            ("BERT-large only loses 0.3% accuracy, far below NEXUS at 1.2%.", "unsupported"),
            ("The evaluation covers three datasets.", "supported"),
            ("The authors release their code on request.", "unsupported"),
        ],
        evidence={
            "BERT-large only loses 0.3% accuracy, far below NEXUS at 1.2%.": (
                "Accuracy drops by 2.1 points (Table 3).",
                6,
            ),
        },
    )
    add_analysis(
        db,
        pid,
        "synthesis",
        [
            ("Retrieval is split into a sparse and a dense path.", "supported"),
            ("Results hold for every language tested.", "unsupported"),
        ],
        evidence={"Results hold for every language tested.": ("We evaluate on English only.", 4)},
    )
    return pid


def test_note_has_yaml_front_matter_and_marks_every_flag_once(db, tmp_path, reviewed):
    result = export_notes(db, [reviewed], tmp_path / "notes")
    (path,) = result.notes
    assert path.name == "sparse-retrieval-for-long-documents-abababab.md"
    text = path.read_text(encoding="utf-8")

    meta = front_matter(text)
    assert meta["title"] == "Sparse Retrieval for Long Documents"
    assert meta["authors"] == ["Ada Lovelace", "Alan <b>Turing</b>"]
    assert meta["year"] == 2021 and meta["sha256"] == reviewed
    assert meta["generator_model"] == "gen-model" and meta["verifier_model"] == "check-model"
    assert (meta["sentences"], meta["flagged"], meta["regenerations"]) == (6, 3, 2)
    assert meta["flagged_ratio"] == 0.5
    assert "reader/has-unverified" in meta["tags"]
    assert meta["reviewed_at"] and meta["source"].endswith(".pdf")

    flagged = [
        "BERT-large only loses 0.3% accuracy, far below NEXUS at 1.2%.",
        "The authors release their code on request.",
        "Results hold for every language tested.",
    ]
    assert text.count("> [!warning] 待验证") == len(flagged)
    for sentence in flagged:
        assert text.count(sentence) == 1, sentence
        assert f"\n> {sentence}\n" in text, "the flagged sentence sits inside its callout"
    # nearest evidence (rank 0) with its page, never the farther one
    assert "> Nearest evidence (p. 6): “Accuracy drops by 2.1 points (Table 3).”" in text
    assert "> Nearest evidence (p. 4): “We evaluate on English only.”" in text
    assert "a farther passage" not in text
    assert "> No evidence passage was found in the paper." in text
    assert "Why: number 0.3% not in the paper" in text
    # supported sentences stay plain text, each followed by how it was decided; synthesis comes before critique
    assert "\nThe method improves recall on long documents. ⟨verifier⟩\n" in text
    assert "> Decided by: verifier" in text  # a flagged sentence says it in its callout
    assert text.index("## Synthesis") < text.index("## Critique") < text.index("## Verification summary")
    assert "| Critique | 4 | 3 | 1 | 0 | 0 | 2 | 50.0% | 1 | 0 |" in text  # model, guard, restated, tool
    assert "How the 6 sentences were decided: 5 checked by a model" in text
    assert "Every sentence was checked" not in text
    assert "iteration 0: 4 of 4 flagged (100.0%) → iteration 1: 2 of 4 flagged (50.0%)" in text
    assert "Appendix B" in text


def test_export_is_idempotent_and_indexes_every_note(db, tmp_path, reviewed):
    other = "cd" * 32
    add_paper(db, other, "存储与检索：一个中文标题")
    add_analysis(db, other, "synthesis", [("一句有依据的话。", "supported")], regenerations=0)
    unreviewed = "ef" * 32
    add_paper(db, unreviewed, "Not Read Yet")

    out = tmp_path / "vault"
    first = export_notes(db, None, out)
    snapshot = {p.name: p.read_bytes() for p in out.iterdir()}
    second = export_notes(db, None, out)
    assert {p.name: p.read_bytes() for p in out.iterdir()} == snapshot
    assert [p.name for p in first.notes] == [p.name for p in second.notes]
    assert first.not_reviewed == [(unreviewed, "Not Read Yet")]
    assert "存储与检索-一个中文标题-cdcdcdcd.md" in snapshot

    index = (out / "index.md").read_text(encoding="utf-8")
    meta = front_matter(index)
    assert meta["papers"] == 2 and meta["flagged"] == 3 and meta["sentences"] == 7
    links = re.findall(r"\]\(([^)]+\.md)\)", index)
    assert sorted(links) == sorted(p.name for p in first.notes)
    assert all((out / link).is_file() for link in links)
    assert "Not Read Yet" not in index

    # exporting one paper later keeps the other's note in the index
    export_notes(db, [other], out)
    assert sorted(re.findall(r"\]\(([^)]+\.md)\)", (out / "index.md").read_text())) == sorted(links)


def test_hostile_title_and_text_export_to_a_valid_note(db, tmp_path):
    pid = "0f" * 32
    add_paper(
        db, pid, NASTY_TITLE, abstract="---\n<script>steal()</script> see [[Other]] and 50% == $5 %%hidden%%"
    )
    add_analysis(
        db,
        pid,
        "critique",
        [
            ("Intro line.\n---\nA claim with <script>alert(2)</script> inside.", "supported"),
            ('It cites [[Wiki Page]] and "quotes" --- boldly.', "unsupported"),
        ],
        evidence={
            'It cites [[Wiki Page]] and "quotes" --- boldly.': ("<img src=x onerror=alert(3)> text", 2)
        },
    )

    (path,) = export_notes(db, [pid], tmp_path).notes
    text = path.read_text(encoding="utf-8")
    assert front_matter(text)["title"] == NASTY_TITLE
    assert re.fullmatch(r"[\w-]+-0f0f0f0f\.md", path.name)

    html = html_of(text)
    assert "<script" not in html and "<img" not in html and "<b>" not in html
    assert "&lt;script&gt;" in html
    assert "[[" not in re.sub(r"\\\[", "", text.split("\n---\n", 1)[1]), "no live wikilink"
    # the title shows literally as the note's heading
    heading = re.search(r"<h1>(.*?)</h1>", html).group(1)
    assert heading == NASTY_TITLE.replace("&", "&amp;").replace("<", "&lt;").replace(">", "&gt;").replace(
        '"', "&quot;"
    )
    # no stray headings or rules made from the generated text's '---' line
    assert html.count("<h1>") == 1 and "<hr" not in html
    assert text.count("> [!warning] 待验证") == 1
    assert "$" not in re.sub(r"\\\$", "", text.split("\n---\n", 1)[1])
    assert "%%" not in text

    index_html = html_of((tmp_path / "index.md").read_text(encoding="utf-8"))
    assert "<script" not in index_html
    assert f'<a href="{path.name}">' in index_html


def test_renamed_paper_replaces_its_old_note(db, tmp_path, reviewed):
    export_notes(db, [reviewed], tmp_path)
    with transaction(db) as s:
        s.get(Paper, reviewed).title = "A Better Title"
    result = export_notes(db, [reviewed], tmp_path)
    assert [p.name for p in result.notes] == ["a-better-title-abababab.md"]
    assert sorted(p.name for p in tmp_path.glob("*.md")) == ["a-better-title-abababab.md", "index.md"]


@pytest.mark.parametrize(
    "title, expected",
    [
        ("Attention Is All You Need", "attention-is-all-you-need"),
        ("  ---  ", "paper"),
        ("BERT: Pre-training (v2)", "bert-pre-training-v2"),
        ("中文 标题", "中文-标题"),
        ('a/b\\c:d*e?f"g<h>i|j', "a-b-c-d-e-f-g-h-i-j"),
    ],
)
def test_slugs_are_file_name_safe(title, expected):
    assert slugify(title) == expected
    assert note_file_name(title, "1234567890abcdef").endswith("-12345678.md")


def test_escapes_keep_text_literal():
    md = MarkdownIt("commonmark")
    assert md.renderInline(escape_title("*bold* _it_ [x](y) `c` #t")) == "*bold* _it_ [x](y) `c` #t"
    rendered = md.render(escape_block("para\n---\n===\n<div>x</div> and [[w]]"))
    assert "<hr" not in rendered and "<h2>" not in rendered and "<div>" not in rendered


def test_export_command(db, tmp_path, reviewed):
    from click.testing import CliRunner

    from reader.cli import cli

    runner = CliRunner()
    out = tmp_path / "cli-notes"
    result = runner.invoke(cli, ["export", "--all", "--out", str(out), "--json"])
    assert result.exit_code == 0, result.output
    data = __import__("json").loads(result.output)
    assert [p.rsplit("/", 1)[1] for p in data["notes"]] == ["sparse-retrieval-for-long-documents-abababab.md"]
    assert data["index"].endswith("index.md")

    both = runner.invoke(cli, ["export", reviewed[:8], "--all", "--out", str(out)])
    assert both.exit_code != 0 and "not both" in both.output
    add_paper(db, "12" * 32, "Unread")
    unread = runner.invoke(cli, ["export", "12" * 32, "--out", str(out)])
    assert unread.exit_code != 0 and "not reviewed yet (Unread)" in unread.output


def test_generated_headings_sit_below_the_notes_own():
    assert escape_block("## Strengths\nGood.\n# Top\n### Deep") == "### Strengths\nGood.\n### Top\n#### Deep"


def test_export_command_resolves_titles_and_rejects_unknown_papers(db, tmp_path, reviewed):
    from click.testing import CliRunner

    from reader.cli import cli

    out = tmp_path / "by-title"
    ok = CliRunner().invoke(cli, ["export", "sparse retrieval", "--out", str(out)])
    assert ok.exit_code == 0, ok.output
    assert (out / "sparse-retrieval-for-long-documents-abababab.md").is_file()
    missing = CliRunner().invoke(cli, ["export", "no such paper", "--out", str(out)])
    assert missing.exit_code == 1 and "no such paper" in missing.output


def test_split_marked_handles_adjacent_and_repeated_flags():
    from reader.export.markdown import Flag, split_marked

    a, b = "Claim A is made up.", "Claim B is made up too."
    text = f"## Strengths\n[待验证] {a} [待验证] {b} Fine sentence.\n\nFine again. {a}\n\n[待验证] 未知的说法。后面的句子。"
    blocks = split_marked(text, [Flag(sentence=a), Flag(sentence=b)])
    kinds = [("flag:" + blk.flag.sentence) if blk.flag else blk.text for blk in blocks]
    assert kinds == [
        "## Strengths",
        f"flag:{a}",
        f"flag:{b}",
        "Fine sentence.",
        f"Fine again. {a}",
        "flag:未知的说法。",
        "后面的句子。",
    ]


def test_a_flagged_sentence_that_was_a_whole_bullet_leaves_no_empty_bullet():
    from reader.export.markdown import Flag, split_marked

    a = "The paper ignores speed."
    text = f"## Strengths\n- Fast on 14 papers.\n- [待验证] {a}\n- Hyphen - kept inline."
    blocks = split_marked(text, [Flag(sentence=a)])
    kinds = [("flag:" + blk.flag.sentence) if blk.flag else blk.text for blk in blocks]
    assert kinds == ["## Strengths\n- Fast on 14 papers.", f"flag:{a}", "- Hyphen - kept inline."]


def test_quoted_evidence_and_numbered_starts_read_as_written(db, tmp_path):
    """A passage that begins with a section number is quoted as it is ("3.2 Citation …", no
    backslash before the digit); a line that would start an ordered list is escaped so that it
    still renders as the text ("1. Introduction …", not a list and no backslash shown)."""
    pid = "3c" * 32
    add_paper(db, pid, "Numbered Sections", abstract="1. Introduction We study citation graphs.")
    claim = "The model predicts citations with 99% accuracy."
    add_analysis(
        db,
        pid,
        "critique",
        [("The graph has two parts.", "supported"), (claim, "unsupported")],
        evidence={claim: ("3.2 Citation Prediction We predict links between papers.", 5)},
    )
    (path,) = export_notes(db, [pid], tmp_path).notes
    text = path.read_text(encoding="utf-8")
    assert "(p. 5): “3.2 Citation Prediction We predict links between papers.”" in text

    html = html_of(text)
    assert "“3.2 Citation Prediction We predict links between papers.”" in html
    assert "<p>1. Introduction We study citation graphs.</p>" in html
    assert "<ol" not in html and "\\" not in re.sub(r"<[^>]+>", "", html)


def test_a_flagged_sentence_that_starts_in_bold_reads_as_written(db, tmp_path):
    """The writer's "**Author lists** …" in a warning callout is bold, with no stray backslash;
    a sentence that would start a bullet or a rule still renders as its text."""
    pid = "3d" * 32
    add_paper(db, pid, "Bold Starts")
    bold, bullet, rule = "**Author lists** are parsed by rule.", "- Not a bullet here.", "---"
    add_analysis(
        db, pid, "synthesis", [(bold, "unsupported"), (bullet, "unsupported"), (rule, "unsupported")]
    )
    (path,) = export_notes(db, [pid], tmp_path).notes
    html = html_of(path.read_text(encoding="utf-8"))
    assert "<strong>Author lists</strong> are parsed by rule." in html
    assert "\\" not in re.sub(r"<[^>]+>", "", html)
    callouts = "".join(re.findall(r"<blockquote>.*?</blockquote>", html, re.S))
    assert "- Not a bullet here." in callouts and "<ul" not in callouts and "<hr" not in callouts


def test_the_summary_has_an_unanswered_column_only_for_a_review_that_recorded_one(db, tmp_path):
    """Today's audit never gives "unanswered"; a review stored by an earlier version may have it."""
    today, earlier = "3e" * 32, "3f" * 32
    add_paper(db, today, "Audited Today")
    add_analysis(db, today, "critique", [("Fast on 14 papers.", "supported"), ("It is slow.", "unsupported")])
    add_paper(db, earlier, "Audited Earlier")
    add_analysis(db, earlier, "critique", [("Fast on 14 papers.", "supported"), ("Left out.", "unanswered")])
    notes = {
        p.read_text(encoding="utf-8").split("\n# ", 1)[1].split("\n", 1)[0]: p
        for p in export_notes(db, [today, earlier], tmp_path).notes
    }
    summary = {
        title: html_of(path.read_text(encoding="utf-8"))
        .split("Verification summary", 1)[1]
        .split("</table>")[0]
        for title, path in notes.items()
    }
    assert ">Unchecked</th>" in summary["Audited Today"] and "Unanswered" not in summary["Audited Today"]
    assert summary["Audited Today"].count("<tr>") == 3  # header, the critique, the total
    assert ">Unanswered</th>" in summary["Audited Earlier"]
    assert summary["Audited Earlier"].count('<td style="text-align:right">1</td>') >= 2
