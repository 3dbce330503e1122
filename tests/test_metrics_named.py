"""A method named as a metric (reader/audit/metrics_named.py): a name a sentence lists as an
evaluation metric that the paper uses otherwise (ranks by it, or measures it as a table's row)."""

from __future__ import annotations

from reader.audit.guards import PaperFacts, check_sentence
from reader.audit.metrics_named import method_as_metric_reasons
from reader.text.grid import Table

# as the sparse-extraction paper uses BM25 (to rank), and evaluates by the area under the curve
RANKED = [
    "While there are many potential methods for determining similarity, in this work we rank "
    "extractions by decreasing values of the BM25 distance metric.",
    "We evaluate each method by the missing area under the precision/recall curve.",
    "We report TEDS on PubTabNet for the table structure.",
]
# as the long-summary evaluation paper's Table 4 compares alignment algorithms
ALIGNERS = Table(
    label="Table 4",
    caption="Table 4: A comparison of algorithms finding the source sentences of summary units.",
    page=6,
    rect=[0.1, 0.2, 0.6, 0.4],
    rows=[["Algorithm", "R@3", "R@5"], ["BM25 (1995)", "0.38", "0.46"], ["SuperPAL (2021)", "0.61", "0.68"]],
    header_rows=1,
)


def test_a_method_listed_as_an_evaluation_metric_is_a_guard_finding():
    facts = PaperFacts.from_texts(RANKED)
    reasons = check_sentence(
        "The evaluation metrics used (e.g., BM25 distance) may not suit every relation.", facts
    )
    assert any(r.startswith("names BM25 as a metric, but the paper never evaluates with it") for r in reasons)
    tabled = PaperFacts.from_texts(["We align summary units to the source."], [ALIGNERS])
    (reason,) = method_as_metric_reasons(
        "The authors report metrics such as ROUGE, BM25 and SuperPAL.", tabled
    )
    assert "BM25 and SuperPAL" in reason and "Table 4, a row; its columns: R@3, R@5" in reason


def test_the_papers_own_metrics_and_names_it_does_not_print_pass():
    facts = PaperFacts.from_texts(RANKED)
    # a known metric's name, a name the paper reports, a list that names nothing, an unprinted name
    assert method_as_metric_reasons("The evaluation metrics are BLEU and TER.", facts) == []
    assert method_as_metric_reasons("The metrics include TEDS.", facts) == []
    assert (
        method_as_metric_reasons("The evaluation metrics used are based on a subset of PubMed.", facts) == []
    )
    assert method_as_metric_reasons("The metrics such as SacreROUGE are used.", facts) == []
    # BM25 spoken of without calling it a metric
    assert method_as_metric_reasons("Extractions are ranked by BM25.", facts) == []


def test_a_metric_the_paper_names_only_of_other_work_is_a_guard_finding():
    # as SPECTER speaks of AUC: of earlier evaluations only, and reports MAP and nDCG itself
    earlier = [
        "Previous evaluations focus on small datasets, and extremely high (99%+) AUC scores are already "
        "possible on these data (Chen et al., 2019; Wang et al., 2019).",
        "We report MAP and nDCG on each task.",
    ]
    facts = PaperFacts.from_texts(earlier)
    (reason,) = method_as_metric_reasons(
        "The evaluation metrics used (e.g., AUC) might not suit every task.", facts
    )
    assert reason.startswith("names AUC as the paper's metric, but the paper speaks of it only of other work")
    assert "auc scores are already possible" in reason  # the text as the guards read it, lower case
    assert method_as_metric_reasons("The evaluation metrics used (e.g., MAP) suit the tasks.", facts) == []
    own = PaperFacts.from_texts([*earlier, "Table 3 gives the AUC of each model."])
    assert (
        method_as_metric_reasons("The evaluation metrics used (e.g., AUC) might not suit every task.", own)
        == []
    )
    tabled = Table(
        label="Table 2", caption="Table 2: Results.", page=5, rect=[0.1, 0.2, 0.6, 0.4],
        rows=[["Model", "AUC"], ["Ours", "0.91"]], header_rows=1,
    )  # fmt: skip
    in_table = PaperFacts.from_texts(earlier, [tabled])
    assert method_as_metric_reasons("The metrics such as AUC are used.", in_table) == []
