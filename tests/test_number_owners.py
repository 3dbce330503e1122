"""A figure the paper gives for one named system, said of another (reader/deepread/number_owners.py)."""

from __future__ import annotations

from reader.deepread.number_owners import NumberOwners

# acl2007_P07-1088's own sentences (its note said "REALM reduces error by 46% on average")
PAPER = [
    "Table 1: Type Checking Performance.",
    "HMM-T outperforms N-GRAMS for all relations, and reduces the error in terms of missing area under the curve by 46% on average.",
    "REALM outperforms the TEXTRUNNER and PL baselines for all relations, and reduces the missing area under the curve by an average of 39% relative to the strongest baseline.",
    "The average area under the curve is 0.851 in Table 2.",
    "4.2 Results on CRF-CI",
    "The CRF-CI model reaches 94.6.",
]
OWNERS = NumberOwners.of(PAPER)


def test_a_figure_said_of_another_named_system_is_contradicted_with_its_sentence():
    (reason,) = OWNERS.contradicting(
        "The type checking experiments show that REALM reduces error by 46% on average."
    )
    assert reason.startswith("the paper gives 46% for HMM-T, N-GRAMS, not for REALM: “HMM-T outperforms")


def test_the_right_owner_a_nameless_figure_a_name_part_and_a_section_number_are_left_alone():
    assert (
        OWNERS.contradicting("REALM reduces the missing area by 39% relative to the strongest baseline.")
        == []
    )
    assert OWNERS.contradicting("HMM-T cuts the error by 46%.") == []
    assert OWNERS.contradicting("REALM reaches an area of 0.851.") == []  # its sentence names no system
    assert OWNERS.contradicting("The CRF reaches 94.6.") == []  # "CRF-CI" is also "CRF"
    assert OWNERS.contradicting("REALM gains 4.2 points.") == []  # 4.2 only numbers a section
    assert OWNERS.contradicting("The model reduces error by 46%.") == []  # no name to compare
