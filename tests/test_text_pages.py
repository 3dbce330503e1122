"""One page-range formatter (reader.text.pages) for every place that writes page numbers."""

import pytest

from reader.text.pages import page_range


@pytest.mark.parametrize(
    "start, end, bare, prose",
    [
        (3, 3, "3", "p. 3"),
        (3, 4, "3-4", "pp. 3–4"),
        (3, None, "3", "p. 3"),
        (3, 0, "3", "p. 3"),
        (None, None, "", ""),
        (0, 0, "", ""),
    ],
)
def test_a_page_or_a_range_bare_or_in_prose(start, end, bare, prose):
    assert page_range(start, end) == bare
    assert page_range(start, end, prose=True) == prose


def test_every_caller_writes_its_pages_through_it():
    from reader.audit.verify import EvidenceRef
    from reader.crag.evidence import Candidate
    from reader.index.hits import SearchHit
    from reader.web.paper_page import page_label

    assert EvidenceRef(1, 2, 3, "t").pages == SearchHit(1, "p", "t", "S", 2, 3, 1.0).pages == "2-3"
    assert Candidate("k", "t", None, None).pages == "" and Candidate("k", "t", "p", 1, 4, 4).pages == "4"
    assert page_label(2, 3) == "pp. 2–3" and page_label(4, 4) == "p. 4"
