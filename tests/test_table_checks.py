"""Numbers bound to their table cell and arithmetic recomputed from the cells, as guard findings
(reader/audit/table_checks.py through check_sentence), and the safe evaluator they use."""

from __future__ import annotations

import pytest

from reader.audit.arithmetic import BEST, DIFFERENCE, RATIO, RELATIVE, ArithmeticClaimError, claims, evaluate
from reader.audit.guards import PaperFacts, check_sentence, table_evidence
from reader.text.grid import Table

TABLE = Table(
    label="Table 2",
    caption="Table 2: Accuracy on SQA and WikiQA, and F1 (P: precision, R: recall).",
    page=5,
    rect=[0.1, 0.2, 0.6, 0.4],
    rows=[
        ["Model", "SQA", "WikiQA", "P", "R"],
        ["BERT", "81.9", "77.2", "0.88", "0.91"],
        ["RoBERTa", "84.0", "79.5", "0.90", "0.93"],
        ["Ours", "85.1", "80.3", "0.94", "0.95"],
    ],
    header_rows=1,
)
TEXT = ["We compare BERT, RoBERTa and our model on SQA and WikiQA; our model reaches 85.1 on SQA."]


@pytest.fixture(scope="module")
def facts():
    return PaperFacts.from_texts(TEXT, [TABLE])


@pytest.mark.parametrize(
    "sentence",
    [
        "The proposed model reaches 85.1 on SQA.",
        "BERT has a recall of 0.91.",
        "On SQA the proposed model reaches 85.1 against 81.9 for BERT.",
        "The proposed model improves on BERT by 3.2 points on SQA.",
        "On WikiQA, the authors' model gains 3.1 points over BERT.",
        "On WikiQA, the authors' model improves on BERT by 4.0%.",
        "The proposed model is the best on WikiQA.",
        "RoBERTa is 1.1 points behind the proposed model on SQA (84.0 vs 85.1).",
    ],
)
def test_a_faithful_sentence_passes(facts, sentence):
    assert check_sentence(sentence, facts) == []


def test_a_number_put_on_the_wrong_row_is_a_finding_that_quotes_the_cell(facts):
    (reason,) = check_sentence("RoBERTa has a recall of 0.91.", facts)
    assert reason == 'number 0.91 is "BERT" × "R" in Table 2 (p. 5); the sentence names "RoBERTa"'


def test_a_number_put_on_the_wrong_column_is_a_finding(facts):
    (reason,) = check_sentence("BERT has a precision of 0.91.", facts)
    assert '"BERT" × "R"' in reason and '"P"' in reason


def test_a_number_for_a_row_the_sentence_leaves_unnamed_passes(facts):
    # the named cell (the proposed model's SQA) is the sentence's other number
    assert (
        check_sentence("The proposed model leads on SQA with 85.1, against 84.0 for the runner-up.", facts)
        == []
    )


def test_wrong_arithmetic_is_unsupported_with_the_computation(facts):
    (reason,) = check_sentence("The proposed model improves on BERT by 3.5 points on SQA.", facts)
    assert reason == "3.5 does not follow from the table it rests on: 85.1 − 81.9 = 3.2 (Table 2, SQA, p. 5)"


def test_a_change_the_table_prints_beside_its_cell_is_the_papers_own_figure():
    # the REALM paper's Table 2: each row's error reduction in parentheses, not what the two
    # areas under the curve give by any formula
    table = Table(
        label="Table 2",
        caption="Table 2: Area under the curve; in parentheses the reduction in error over the strongest baseline.",
        page=7,
        rect=[0.1, 0.2, 0.6, 0.4],
        rows=[["Method", "AUC"], ["PL", "0.733"], ["REALM", "0.851 (39%)"]],
        header_rows=1,
    )
    facts = PaperFacts.from_texts(["REALM is compared with PL."], [table])
    assert check_sentence("REALM reduces the error of PL by 39% on average.", facts) == []
    (reason,) = check_sentence("REALM reduces the error of PL by 52% on average.", facts)
    assert reason.startswith("52 does not follow from the table it rests on")


def test_a_change_the_papers_text_states_with_its_unit_is_not_recomputed():
    # 2kenize: "outperforms previous Chinese Character conversion approaches by 6 points in
    # accuracy" (its abstract), while the closest pair of its table differs by 4
    said = TEXT + ["Our model outperforms previous approaches by 3.5 points on SQA."]
    facts = PaperFacts.from_texts(said, [TABLE])
    assert check_sentence("The proposed model improves on BERT by 3.5 points on SQA.", facts) == []
    (reason,) = check_sentence("The proposed model improves on BERT by 3.5% on SQA.", facts)
    assert reason.startswith("3.5 does not follow from the table it rests on")


def test_a_wrong_best_is_unsupported(facts):
    (reason,) = check_sentence("BERT is the best model on WikiQA.", facts)
    assert "'best' does not hold" in reason and '"Ours" has 80.3' in reason


def test_what_the_papers_restated_sentence_prints_stands_against_a_reading_of_its_tables(facts):
    # HMM-T's "reduces the error … by 46% on average" (an average of per-row gains), 2kenize's
    # "the best existing converter, OpenCC" (best in an error density), s2orc's "GROBID … an F1
    # of 0.89" (not Table 6's 0.89): the paper's sentence prints it, so a table does not overrule it
    cases = [
        (
            "The proposed model improves on BERT by 3.5 points on SQA.",
            "by 3.5 points over BERT",
            "by 3.6 points",
        ),
        ("BERT is the best model on WikiQA.", "BERT was the best system on WikiQA.", "BERT is bestowed."),
        ("RoBERTa has a recall of 0.91.", "RoBERTa's recall is 0.91 in our rerun.", "a recall of 0.915"),
    ]
    for sentence, printing, not_printing in cases:
        (reason,) = check_sentence(sentence, facts)
        assert check_sentence(sentence, facts, restates=printing) == []
        assert check_sentence(sentence, facts, restates=not_printing) == [reason]
    # any other guard still speaks
    cited = "RoBERTa has a recall of 0.91 (Smith et al., 2019)."
    (reason,) = check_sentence(cited, facts, restates="RoBERTa's recall is 0.91.")
    assert reason.startswith("citation 'Smith et al., 2019") and reason.endswith("not found in the paper")


def test_each_superlative_of_a_sentence_is_read_against_its_own_clauses_column(facts):
    # the litgraph note's Key results turned the material's "Recall 98.0 (the best of 6)" round
    right = "Table 2 (p. 5): Ours has SQA 85.1 (the best of 3), WikiQA 80.3 (the best of 3), R 0.95 (the best of 3)."
    assert check_sentence(right, facts) == []
    (reason,) = check_sentence(right.replace("WikiQA 80.3 (the best", "WikiQA 80.3 (the lowest"), facts)
    assert reason.startswith("'lowest' does not hold: Table 2 (p. 5), WikiQA:")


def test_a_derived_number_confirmed_by_the_cells_is_no_number_missing_from_the_paper(facts):
    without_tables = PaperFacts.from_texts(TEXT)
    sentence = "The proposed model improves on BERT by 3.2 points on SQA."
    assert check_sentence(sentence, without_tables) == ["number 3.2 not found in the paper"]
    assert check_sentence(sentence, facts) == []


def test_the_computation_is_the_evidence(facts):
    (finding,) = table_evidence("The proposed model improves on BERT by 3.2 points on SQA.", facts)
    assert finding.reason is None and finding.page == 5
    assert finding.evidence == "85.1 − 81.9 = 3.2 (Table 2, SQA, p. 5)"
    (cell,) = table_evidence("BERT has a recall of 0.91.", facts)
    assert cell.evidence == 'Table 2 (p. 5): "BERT" × "R" = 0.91'


def test_without_tables_the_guards_are_as_they_were():
    facts = PaperFacts.from_texts(TEXT)
    assert facts.tables == [] and table_evidence("RoBERTa has a recall of 0.91.", facts) == []
    assert PaperFacts.from_texts(TEXT, None).numbers == facts.numbers


@pytest.mark.parametrize(
    "expression, value",
    [("85.1 − 81.9", 3.2), ("(85.1 - 81.9) ÷ 81.9 × 100", 3.907), ("-2 * (3 + 4)", -14.0), ("1/4", 0.25)],
)
def test_the_evaluator_computes(expression, value):
    assert evaluate(expression) == pytest.approx(value, abs=1e-3)


@pytest.mark.parametrize(
    "expression, words",
    [
        ("__import__('os')", "cannot read"),
        ("2 ** 10", "unexpected"),
        ("1 / 0", "division by zero"),
        ("(1 + 2", "not closed"),
        ("1 +", "missing"),
        ("1" * 300, "longer than"),
    ],
)
def test_the_evaluator_refuses_anything_else(expression, words):
    with pytest.raises(ArithmeticClaimError, match=words):
        evaluate(expression)


@pytest.mark.parametrize(
    "sentence, kind, value",
    [
        ("It improves on BERT by 3.2 points.", DIFFERENCE, 3.2),
        ("a 15% relative reduction of the error", RELATIVE, 15.0),
        ("It is 2.5× faster than the baseline.", RATIO, 2.5),
        ("It is twice as fast.", RATIO, 2.0),
        ("a gain of 1.1 over MOGANED", DIFFERENCE, 1.1),
        ("It is the best of the five.", BEST, None),
    ],
)
def test_arithmetic_claims_are_read(sentence, kind, value):
    (claim,) = claims(sentence)
    assert (claim.kind, claim.value) == (kind, value)


def test_a_range_and_the_best_baseline_claim_nothing():
    assert claims("Deviation rises by 30-40% on half the units.") == []
    assert claims("It beats the best baseline.") == []


def test_1_best_output_claims_no_best_and_fewer_than_is_a_difference():
    assert claims("It reaches 85.3 on 1-best output.") == []
    (claim,) = claims("Linked entries are 8.3 fewer than bibliography entries.")
    assert (claim.kind, claim.value) == (DIFFERENCE, 8.3)


def test_a_sentence_naming_a_table_is_checked_against_that_table_only(facts):
    other = Table(
        "Table 3",
        "Table 3: More.",
        6,
        [0, 0, 1, 1],
        [["Model", "WikiQA"], ["BERT", "90.0"], ["RoBERTa", "80.0"], ["Ours", "70.0"]],
        1,
    )
    both = PaperFacts.from_texts(TEXT, [TABLE, other])
    assert check_sentence("BERT is the best model on WikiQA.", both) == []  # Table 3 has it so
    (reason,) = check_sentence("BERT is the best model on WikiQA in Table 2.", both)
    assert "'best' does not hold: Table 2" in reason
