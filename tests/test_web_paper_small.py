"""The paper page's smaller faults, as the server renders them (FastAPI's test client): an empty
analysis said to be empty, sentences that are named buttons, the analyses' own headings as
headings, citation markers the keyboard reaches, no warning colour on a zero count, and a count
of one in the singular. tests/test_web_browser_paper_small.py checks what the page's script does."""

from __future__ import annotations

import re
from html.parser import HTMLParser

from test_citations import _paper_with_citing_review
from test_web import SYNTH, add_analysis, add_paper, client_for, synth_text  # noqa: F401 - the fixture

from reader.web import paper_page


class Elements(HTMLParser):
    """Every start tag of a page as (tag, attributes), and the text inside each heading."""

    def __init__(self, html: str):
        super().__init__(convert_charrefs=True)
        self.tags: list[tuple[str, dict]] = []
        self.headings: list[tuple[str, str]] = []
        self._open: list[str] = []
        self.feed(html)

    def handle_starttag(self, tag, attrs):
        self.tags.append((tag, dict(attrs)))
        if re.fullmatch(r"h[1-6]", tag):
            self.headings.append((tag, ""))
            self._open.append(tag)

    def handle_endtag(self, tag):
        if self._open and tag == self._open[-1]:
            self._open.pop()

    def handle_data(self, data):
        if self._open:
            tag, text = self.headings[-1]
            self.headings[-1] = (tag, text + data)

    def with_id(self, element_id: str) -> dict:
        return next(attrs for _, attrs in self.tags if attrs.get("id") == element_id)


def flagged_list(html: str) -> str:
    return html.split('id="flagged-list"', 1)[1].split("</nav>", 1)[0]


# ---- (a) an empty analysis ------------------------------------------------------------------


def test_an_empty_analysis_is_said_to_be_empty_not_all_supported(db, client_for):  # noqa: F811
    pid = add_paper(db, title="Nothing written")
    add_analysis(db, pid, "synthesis", "", [])
    html = client_for().get(f"/paper/{pid}").text
    listed = flagged_list(html)
    assert "every sentence was found supported" not in listed
    assert 'id="nothing-checked"' in listed and "the analysis is empty" in listed
    section = html.split('id="synthesis"', 1)[1].split("</section>", 1)[0]
    assert "This synthesis is empty: the review wrote no text for it" in section


def test_an_analysis_whose_sentences_were_not_audited_is_not_called_supported(db, client_for):  # noqa: F811
    pid = add_paper(db, title="Text, no verdicts")
    add_analysis(db, pid, "critique", "The evaluation is thin. The baselines are old.", [])
    html = client_for().get(f"/paper/{pid}").text
    listed = flagged_list(html)
    assert "every sentence was found supported" not in listed
    assert "no sentence of the analyses was audited" in listed
    assert "No sentence of this critique was audited" in html


def test_a_checked_analysis_without_flags_still_says_every_sentence_was_supported(db, client_for):  # noqa: F811
    pid = add_paper(db, title="All fine")
    add_analysis(db, pid, "synthesis", "All fine.", [("All fine.", "supported", [(1, 1, "All fine.")])])
    html = client_for().get(f"/paper/{pid}").text
    assert "every sentence was found supported by the paper" in flagged_list(html)
    assert 'id="nothing-checked"' not in html and "empty-analysis" not in html


def test_the_page_model_counts_audited_sentences(db):
    pid = add_paper(db, title="Counted")
    add_analysis(db, pid, "synthesis", synth_text(), SYNTH)
    add_analysis(db, pid, "critique", "  \n", [])
    with db() as session:
        view = paper_page.paper_of(session, pid)
    by_kind = {a.kind: a for a in view.analyses}
    assert (by_kind["synthesis"].n_audited, by_kind["synthesis"].empty) == (3, False)
    assert (by_kind["critique"].n_audited, by_kind["critique"].empty) == (0, True)
    assert view.n_audited == 3


# ---- (e) accessibility ------------------------------------------------------------------------


def test_a_flagged_sentence_is_a_named_button_described_by_its_tooltip(db, client_for):  # noqa: F811
    pid = add_paper(db, title="Named sentences")
    add_analysis(db, pid, "synthesis", synth_text(), SYNTH)
    page = Elements(client_for().get(f"/paper/{pid}").text)
    flagged = [attrs for tag, attrs in page.tags if "flagged" in attrs.get("class", "").split()]
    assert len(flagged) == 1
    [sentence] = flagged
    assert sentence["tabindex"] == "0" and sentence["role"] == "button"
    assert sentence["aria-label"] == f"Flagged, to be verified: {SYNTH[1][0]}"
    assert sentence["aria-expanded"] == "false"
    tip = page.with_id(sentence["aria-describedby"])
    assert "tip" in tip["class"]
    # a sentence out of the Tab order is no button (the page's script makes it one with every
    # verdict shown)
    passed = next(a for _, a in page.tags if "verdict-supported" in a.get("class", ""))
    assert passed["tabindex"] == "-1" and "role" not in passed


def test_the_headings_inside_an_analysis_are_headings(db, client_for):  # noqa: F811
    text = "## Strengths\nThe evaluation is thin.\n### Minor points\nThe baselines are old.\n"
    pid = add_paper(db, title="Headed critique")
    add_analysis(
        db,
        pid,
        "critique",
        text,
        [("The evaluation is thin.", "supported", []), ("The baselines are old.", "supported", [])],
    )
    html = client_for().get(f"/paper/{pid}").text
    headings = Elements(html).headings
    # under the analysis's own h2: its "##" an h3, its "###" an h4, no "#" left in the text
    at = headings.index(("h2", "Critique"))
    assert headings[at + 1 : at + 3] == [("h3", "Strengths"), ("h4", "Minor points")]
    section = html.split('id="critique"', 1)[1].split("</section>", 1)[0]
    assert "##" not in section


def test_a_citation_marker_is_a_link_the_keyboard_reaches_to_its_reference(db, client_for):  # noqa: F811
    pid = _paper_with_citing_review(db)
    page = Elements(client_for().get(f"/paper/{pid}").text)
    markers = [attrs for tag, attrs in page.tags if tag == "a" and "cite" in attrs.get("class", "")]
    assert markers, "no citation marker is a link"
    for marker in markers:
        # a link with an address is in the Tab order; it leads to its row of the references cited
        assert marker["href"].startswith("#critique-cite-") and "tabindex" not in marker
        row = page.with_id(marker["href"][1:])
        assert "citation" in row["class"] and marker["aria-describedby"] == marker["href"][1:]
    assert not [tag for tag, _ in page.tags if tag == "abbr"]


# ---- (f) a zero count in a neutral colour -----------------------------------------------------


def test_a_zero_unchecked_count_is_not_marked_as_a_warning(db, client_for):  # noqa: F811
    none = add_paper(db, title="None unchecked")
    add_analysis(db, none, "synthesis", "Fine.", [("Fine.", "supported", [])])
    some = add_paper(db, title="Some unchecked")
    add_analysis(
        db,
        some,
        "synthesis",
        f"{paper_page.MARK}Unread one. {paper_page.MARK}Unread two.",
        [("Unread one.", "unchecked", []), ("Unread two.", "unchecked", [])],
    )
    html = client_for().get("/library").text

    def cell(pid):
        row = html.split(f'data-paper="{pid}"', 1)[1].split("</tr>", 1)[0]
        return re.search(r'<td class="([^"]*\bunchecked\b[^"]*)">([^<]*)</td>', row).groups()

    assert cell(none) == ("num unchecked", "0")
    assert cell(some) == ("num unchecked warn", "2")


# ---- (g) one, not "1 sentences" ---------------------------------------------------------------


def test_one_sentence_is_counted_in_the_singular(db, client_for):  # noqa: F811
    pid = add_paper(db, title="One sentence")
    add_analysis(db, pid, "synthesis", "All fine.", [("All fine.", "supported", [])])
    stats = client_for().get(f"/paper/{pid}").text.split('class="stats"', 1)[1].split("</p>", 1)[0]
    assert re.search(r"\b1 sentence ·", stats) and "1 sentences" not in stats


def test_a_one_sentence_answer_is_not_all_1_sentences(monkeypatch):
    from controls import record_controls
    from crag_fakes import PAPER_A, TITLES, CragLLM, FakeSearch

    from reader.crag.grounded import audit_grounded
    from reader.crag.pipeline import CragConfig, ask
    from reader.llm.dryrun import claims_with_evidence
    from reader.llm.scripted import ScriptedLLM

    controls = record_controls(monkeypatch)

    def grounded(answer, verdict="YES"):
        def reply(prompt):  # `verdict` to the answer's sentence, NO to the check's control claim
            asked = claims_with_evidence(prompt)
            return "\n".join(f"[{n}] {'NO' if claim in controls else verdict}" for n, claim, _ in asked)

        return ask(
            "Which baselines do they compare against?",
            paper_id=PAPER_A,
            generator=CragLLM(relevant_words=["baselines"], answer=answer),
            verifier=ScriptedLLM(reply),
            search=FakeSearch(),
            check_grounded=audit_grounded,
            titles=TITLES,
            config=CragConfig(ungrounded="keep"),
        )

    one = grounded("They compare against LDA and TF-IDF [1].")
    assert one.grounded and one.grounded_reason == "its one sentence supported by the kept evidence"
    unsupported = grounded("They compare against LDA and TF-IDF [1].", "NO")
    assert not unsupported.grounded
    assert unsupported.grounded_reason.startswith("1 of 1 sentence unsupported"), unsupported.grounded_reason
