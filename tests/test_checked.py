"""What a paper lacks, the tool states itself and the audit passes on the rule's finding
(reader.deepread.checked, reader.audit.loop `stated`); the writer puts each sentence under its
heading and keeps it through a rewrite."""

from __future__ import annotations

from dataclasses import dataclass

from reader.audit.decided import STATED
from reader.audit.guards import PaperFacts
from reader.audit.loop import audit_sentences
from reader.audit.verify import EvidenceRef
from reader.checklist.model import Finding
from reader.deepread.checked import (
    checked_facts,
    claimed_presence,
    contradicted_absence,
    paper_checks,
    quoted,
    synthesis_facts,
)
from reader.deepread.material import ABSTRACT, CONCLUSION, OTHER, RESULTS
from reader.deepread.writer import Request, rewrite_document, split_document, write_document
from reader.llm.dryrun import claims_with_evidence
from reader.llm.scripted import ScriptedLLM


@dataclass
class S:
    title: str
    text: str
    priority: int


ABSTRACT_TEXT = "We propose HeadPrune. It keeps 97.2% of accuracy at 40% of the heads on 12 tasks in 2019."
PAPER = [
    S("Abstract", ABSTRACT_TEXT, ABSTRACT),
    S("4 Results", "On MNLI the pruned model reaches 83.97 against 84.27 for the full model.", RESULTS),
    S("5 Conclusion", "Only BERT-base was tested; larger models are future work.", CONCLUSION),
]


def facts_of(sections):
    """heading -> the first sentence the tool states under it (the checklist by the rules alone)."""
    out = {}
    for f in checked_facts(paper_checks(sections)):
        out.setdefault(f.heading, f)
    return out


def test_a_missing_variance_and_a_missing_limitations_section_are_stated_with_the_abstracts_figures():
    facts = facts_of(PAPER)
    assert facts["Weaknesses"].sentence.startswith("The abstract's figures (97.2% and 40%) are given without")
    assert "12" not in facts["Weaknesses"].sentence, "a count is no result figure"
    assert "section title or sentence" in facts["Threats to validity"].finding


def test_nothing_is_stated_when_the_paper_has_it():
    with_sd = PAPER + [S("4.2 Seeds", "Scores are averaged over 5 seeds (± 0.3).", RESULTS)]
    assert "Weaknesses" not in facts_of(with_sd)
    elsewhere = PAPER + [S("3 Data", "Error was significantly higher at 47.2% on the new domain.", OTHER)]
    claimed = facts_of(elsewhere)["Weaknesses"]  # an absence is claimed of the whole paper
    assert "without a standard deviation" not in claimed.sentence
    assert claimed.sentence.startswith(
        "The paper calls a result significant (“Error was significantly higher"
    )
    assert claimed.sentence.endswith(
        "but names no test, p-value, standard deviation or confidence interval for it."
    )
    with_limits = PAPER + [S("6 Limitations", "Only English was tested.", CONCLUSION)]
    assert "Threats to validity" not in facts_of(with_limits)
    # ingest read the heading as the results' last line: the text counts as well as the titles
    unseen_heading = PAPER + [
        S("3 Results", "It is 2x faster. 4 Limitations Only English was tested.", RESULTS)
    ]
    assert "Threats to validity" not in facts_of(unseen_heading)
    no_figures = [S("Abstract", "We propose HeadPrune.", ABSTRACT), PAPER[1]]
    assert facts_of(no_figures)["Weaknesses"].sentence.startswith("No result of the paper")


def test_a_quote_the_passages_split_cut_is_shown_cut():
    assert quoted("pared to other models as it gives the least variance.") == (
        "“…pared to other models as it gives the least variance”"
    )
    assert quoted("Scores are averaged over 5 seeds.") == "“Scores are averaged over 5 seeds”"
    assert quoted("Scores are averaged over 5 seeds.", limit=22) == "“Scores are averaged…”"


def test_a_tables_row_giving_the_spread_is_quoted_by_its_spreads():
    row = (
        "BC5CDR Li et al. (2016) NER 90.01 90.41 ± 0.06 JNLPBA Collier and Kim (2004) NER 77.28 77.70 ± 0.25"
    )
    checks = paper_checks(PAPER, {"variance": Finding("variance", True, row, "spread", "spread", "pp. 5–6")})
    (spread,) = [f for f in checked_facts(checks) if f.item == "variance"]
    assert (
        spread.sentence
        == "The spread or significance of the results is given as “90.41 ± 0.06” and “77.70 ± 0.25”."
    )
    assert spread.quote == row  # its evidence is still the row


def test_the_audit_passes_a_stated_sentence_on_its_finding_without_the_verifier():
    verifier = ScriptedLLM(lambda prompt: "\n".join(f"[{n}] NO" for n, _, _ in claims_with_evidence(prompt)))
    evidence = [EvidenceRef(chunk_id=1, page_start=1, page_end=1, text=ABSTRACT_TEXT)]
    fact = facts_of(PAPER)["Weaknesses"]
    wrong = fact.sentence.replace("97.2%", "98.5%")
    result = audit_sentences(
        [fact.sentence, wrong],
        verifier=verifier,
        evidence_for=lambda batch: evidence,
        facts=PaperFacts.from_texts([ABSTRACT_TEXT]),
        max_workers=1,
        stated={fact.sentence: fact.finding, wrong: fact.finding},
    )
    first, second = result.sentences
    assert first.verdict == "supported" and f"{STATED}: {fact.finding}" in first.reasons
    assert verifier.calls == 0
    assert second.verdict == "unsupported", "a guard still objects to a number the paper does not give"
    unstated = audit_sentences(
        [fact.sentence], verifier=verifier, evidence_for=lambda b: evidence, max_workers=1
    )
    assert unstated.sentences[0].verdict == "unsupported" and verifier.calls == 1


def test_the_guards_read_a_stated_sentence_without_its_quote_of_the_paper():
    """2kenize's "The number of runs or samples is given as “Table 3: … reported as a mean across
    10 different seeds”" was marked by the averages guard ("the paper gives no average"): the quote
    is the paper's own text. A number of the tool's own words is still checked."""
    quote = "Table 3: Results of the intrinsic evaluation experiments which are reported as a mean across 10 different seeds"
    stated = f"The number of runs or samples is given as “{quote}”."
    wrong = f"The 12 runs or samples are given as “{quote}”."
    verifier = ScriptedLLM(lambda prompt: "\n".join(f"[{n}] NO" for n, _, _ in claims_with_evidence(prompt)))
    result = audit_sentences(
        [stated, wrong],
        verifier=verifier,
        evidence_for=lambda batch: [EvidenceRef(chunk_id=1, page_start=5, page_end=5, text=quote)],
        facts=PaperFacts.from_texts([quote + ".", "Seeds vary the initial weights."]),
        max_workers=1,
        stated={stated: "runs: found (p. 5)", wrong: "runs: found (p. 5)"},
    )
    assert [s.verdict for s in result.sentences] == ["supported", "unsupported"]
    assert verifier.calls == 0


def request(**changes):
    values = dict(
        kind="critique",
        title="HeadPrune",
        language="en",
        context="## 4 Results\nOn MNLI the pruned model reaches 83.97.",
        left_out=[],
        sections=PAPER,
        paper_id="p" * 64,
        words_per_heading=60,
    )
    return Request(**{**values, **changes})


def test_the_writer_puts_each_stated_sentence_first_under_its_heading_and_keeps_it_in_a_rewrite():
    generator = ScriptedLLM(lambda prompt: "Only MNLI is reported for HeadPrune.")
    critique = request()
    parts = dict(split_document(write_document(generator, critique).text))
    facts = facts_of(PAPER)
    assert parts["Weaknesses"].startswith(facts["Weaknesses"].sentence)
    assert parts["Threats to validity"].startswith(facts["Threats to validity"].sentence)
    assert facts["Weaknesses"].sentence not in parts["Strengths"]
    # the writer is shown what the checklist found, never the absences the tool states itself
    shown = [
        h["prompt"].split("<facts>")[1].split("</facts>")[0]
        for h in generator.history
        if "<facts>" in h["prompt"]
    ]
    assert shown and any("Metrics" in facts and "97.2%" in facts for facts in shown)
    assert not any("without a standard deviation" in facts or "limitations" in facts for facts in shown)

    draft = write_document(generator, critique).text
    rewritten = rewrite_document(generator, critique, draft, ["Only MNLI is reported for HeadPrune."])
    again = dict(split_document(rewritten.text))
    assert again["Weaknesses"].startswith(facts["Weaknesses"].sentence)
    assert again["Weaknesses"].count(facts["Weaknesses"].sentence) == 1

    chinese = dict(split_document(write_document(generator, request(output_language="zh")).text))
    synthesis = dict(split_document(write_document(generator, request(kind="synthesis")).text))
    assert facts["Weaknesses"].sentence not in chinese.get("Weaknesses", "") + synthesis.get(
        "Key results", ""
    )


TRAINED = PAPER + [
    S("3 Setup", "We train with a learning rate of 0.001 on one V100 GPU.", OTHER),
]


def test_missing_runs_and_baselines_are_said_of_the_abstracts_figures_else_its_metrics():
    said = {f.item: f.sentence for f in checked_facts(paper_checks(TRAINED))}
    assert said["runs"] == (
        "The paper does not say over how many runs or random seeds its results "
        "(the abstract's 97.2% and 40%) were obtained."
    )
    assert "that its results (the abstract's 97.2% and 40%) are compared with." in said["baselines"]
    bare = [
        S("Abstract", "We propose HeadPrune.", ABSTRACT),
        *TRAINED[1:],
        S("4", "We report accuracy.", RESULTS),
    ]
    assert (
        "random seeds its results in accuracy were obtained."
        in {f.item: f.sentence for f in checked_facts(paper_checks(bare))}["runs"]
    )


SETUP = [
    S("Abstract", "We propose HeadPrune for BERT.", ABSTRACT),
    S("3 Data", "We evaluate on GLUE, a benchmark of 9 tasks with 1.2 million training examples.", OTHER),
    S(
        "4 Results",
        "We report accuracy on each task. We compare HeadPrune with the MagPrune and LayerDrop baselines.",
        RESULTS,
    ),
]


def test_the_synthesis_quotes_the_papers_data_metrics_and_comparison_with_their_pages():
    facts = synthesis_facts(paper_checks(SETUP), SETUP)
    by_item = {f.item: f for f in facts}
    assert by_item["datasets"].heading == "Method"
    assert (
        "“We evaluate on GLUE, a benchmark of 9 tasks with 1.2 million training examples”"
        in by_item["datasets"].sentence
    )
    assert by_item["baselines"].heading == "Key results"
    assert "with the MagPrune and LayerDrop baselines" in by_item["baselines"].sentence
    # the abstract's sentences the synthesis restates are not quoted again
    in_abstract = [S("Abstract", SETUP[1].text, ABSTRACT), *SETUP[2:]]
    assert "datasets" not in {f.item for f in synthesis_facts(paper_checks(in_abstract), in_abstract)}
    # a fragment the passage split cut, a table's row and a tool used are no setup to quote
    cut = [SETUP[0], S("3 Data", "aluate on GLUE, a benchmark of 9 tasks with 1.2 million examples.", OTHER)]
    row = [SETUP[0], S("4 Results", "Accuracy 84.1 83.2 90.1 91.3 92.0 88.7 85.5 on 9 tasks.", RESULTS)]
    assert paper_checks(cut).has("datasets") and paper_checks(row).has("metrics"), "the rules find both"
    assert "datasets" not in {f.item for f in synthesis_facts(paper_checks(cut), cut)}
    assert "metrics" not in {f.item for f in synthesis_facts(paper_checks(row), row)}
    used = "For the changed metabolites, pathway analysis was performed using MetaboAnalyst 3.0."
    checks = paper_checks(SETUP)
    checks.findings["baselines"] = Finding("baselines", True, used, "MetaboAnalyst 3.0", "", "p. 6")
    assert "baselines" not in {f.item for f in synthesis_facts(checks, SETUP)}


def test_the_writer_puts_the_synthesis_setup_after_its_account_unless_the_account_quotes_it():
    generator = ScriptedLLM(lambda prompt: "HeadPrune removes attention heads.")
    synthesis = request(kind="synthesis", sections=SETUP)
    parts = dict(split_document(write_document(generator, synthesis).text))
    data = next(f for f in synthesis.checked if f.item == "datasets")
    assert parts["Method"].startswith("HeadPrune removes attention heads.")
    assert parts["Method"].endswith(data.sentence)
    assert (
        data.sentence
        not in write_document(generator, request(kind="synthesis", sections=SETUP, output_language="zh")).text
    )
    said = "We compare HeadPrune with the MagPrune and LayerDrop baselines."
    restating = dict(split_document(write_document(ScriptedLLM(lambda prompt: said), synthesis).text))
    assert restating["Key results"].count("MagPrune") == 1, "the comparison is not quoted again"
    assert restating["Method"].endswith(data.sentence)


def test_a_claimed_absence_the_papers_text_contradicts_is_objected_to():
    limits = PAPER + [
        S("4 Results", "Scores vary by 0.3 (± 0.1). 4 Limitations Only English was tested.", RESULTS)
    ]
    no_limits = "The paper does not mention any limitations of HeadPrune."
    no_variance = "HeadPrune's 97.2% comes without a standard deviation."
    assert contradicted_absence(no_limits, paper_checks(limits))[0].startswith(
        "the paper does discuss limitations: “4 Limitations"
    )
    assert "± 0.1" in contradicted_absence(no_variance, paper_checks(limits))[0]
    doubted = "This makes it difficult to determine whether the gains are statistically significant."
    assert "± 0.1" in contradicted_absence(doubted, paper_checks(limits))[0]
    assert contradicted_absence(doubted, paper_checks(PAPER)) == []
    compared = PAPER + [
        S("4 Results", "HeadPrune beats the BERT-base baseline and LayerDrop on MNLI.", RESULTS)
    ]
    no_comparison = "The paper does not provide any comparative analysis between different pruning methods."
    assert (
        "the paper does give its baselines" in contradicted_absence(no_comparison, paper_checks(compared))[0]
    )
    assert contradicted_absence(no_comparison, paper_checks(PAPER)) == []  # none named: it may be true
    assert (
        contradicted_absence("Yet, existing corpora are not without their limitations.", paper_checks(limits))
        == []
    )
    importance = "The paper does not discuss the significance of the results for practitioners."
    assert contradicted_absence(importance, paper_checks(limits)) == []
    # a note on acl2007_P07-1088 (p < 0.01, two-sampled t-test) said both of these, unmarked
    for said in (
        "This makes it difficult to compare the results with other methods and determine if they are "
        "statistically significant.",
        "The paper does not provide any information about the variability of the performance across relations.",
        "The variance is not reported for these datasets either.",  # the longeval note
        # another longeval note (its spread across annotators and bootstrap intervals are given)
        "Finally, the paper does not provide any information about the significance of inter-annotator "
        "agreement on faithfulness scores for SQuALITY or PubMed datasets.",
    ):
        assert "± 0.1" in contradicted_absence(said, paper_checks(limits))[0]
    # the acl2012 note: the baselines are 75 characters after the negation
    compared = limits + [
        S("4.1 Setup", "We compare HeadPrune with two baselines: random pruning and L0 pruning.", RESULTS)
    ]
    far = "Additionally, the paper does not compare the performance of its method (HeadPrune) against any other baseline."
    (reason,) = contradicted_absence(far, paper_checks(compared))
    assert reason.startswith("the paper does give its baselines")
    # the s2orc note asked for what its Table 1 gives, and the verifier passed it (P(YES) 0.19)
    sized = PAPER + [S("3 Data", "The corpus holds 81.1M papers from 19 fields of study.", OTHER)]
    asked = "They would also need information about the datasets and sizes used in the paper's experiments."
    assert contradicted_absence(asked, paper_checks(sized))[0].startswith("the paper does give its datasets")
    assert contradicted_absence(asked, paper_checks(PAPER)) == []
    assert (
        contradicted_absence(no_limits, paper_checks(PAPER)) == []
        and contradicted_absence(no_variance, paper_checks(PAPER)) == []
    )
    assert (
        contradicted_absence("The paper discusses its limitations in Section 4.", paper_checks(limits)) == []
    )

    verifier = ScriptedLLM(lambda prompt: "[1] YES")
    result = audit_sentences(
        [no_limits],
        verifier=verifier,
        evidence_for=lambda batch: [EvidenceRef(chunk_id=1, page_start=1, page_end=1, text=ABSTRACT_TEXT)],
        max_workers=1,
        objections=lambda sentence: contradicted_absence(sentence, paper_checks(limits)),
    )
    assert result.sentences[0].verdict == "unsupported", "the verifier's YES does not outweigh the text"
    assert any(r.startswith("the paper does discuss limitations") for r in result.sentences[0].reasons)


def test_a_claim_that_the_paper_has_what_its_checklist_did_not_find_is_objected_to():
    checks = paper_checks(PAPER)  # no spread, no baselines, no ablation
    # the tutorial's note, of a paper without experiments
    (reason,) = claimed_presence(
        "The authors provide variance or significance results for their experiments.", checks
    )
    assert reason.startswith("checklist item variance: not found — the sentence says the paper has it")
    assert claimed_presence(
        "The paper reports on several baselines and compares them with HeadPrune.", checks
    )
    # an absence, a suggestion or a hedge claims nothing there
    assert claimed_presence("The paper reports no baselines.", checks) == []
    assert claimed_presence("The paper should compare HeadPrune with stronger baselines.", checks) == []
    # no size of data in the paper: the tutorial's "The datasets used for the experiments are diverse …"
    assert not checks.findings["datasets"].found
    assert claimed_presence("The datasets used for the experiments are diverse.", checks)
    with_sd = paper_checks(PAPER + [S("4.2 Seeds", "Scores are averaged over 5 seeds (± 0.3).", RESULTS)])
    assert claimed_presence("The authors provide variance results for their experiments.", with_sd) == []


def test_only_a_papers_own_participants_ask_for_an_ethics_statement():
    reviewed = PAPER + [S("2 Evidence", "Detection improved across subjects in three studies.", RESULTS)]
    own = PAPER + [S("3 Data", "We asked three annotators to label the pruned heads.", RESULTS)]
    assert not paper_checks(reviewed).human
    assert paper_checks(own).human
    assert any(f.item == "ethics" for f in checked_facts(paper_checks(own)))
    assert not any(f.item == "ethics" for f in checked_facts(paper_checks(reviewed)))


def test_results_called_consistent_of_a_paper_that_says_they_vary_are_objected_to():
    from reader.deepread.checked import contradicted_stability

    # dyer12's note: "The variance … are reported in Figure 4, indicating that the results are
    # reliable and consistent across multiple runs", of a paper that says "We see a high variance"
    varying = PAPER + [
        S(
            "4 Results",
            "Figure 4 shows 100 runs. We see a high variance around a median of 27.2 BLEU.",
            RESULTS,
        )
    ]
    claim = "The variance is reported in Figure 4, indicating that the results are reliable and consistent across multiple runs."
    (reason,) = contradicted_stability(claim, paper_checks(varying))
    assert reason.startswith("the paper says its results vary: “We see a high variance")
    assert contradicted_stability("The results show a low variance.", paper_checks(varying))
    # nothing to object to: a paper that does not say so, a negated claim, a paper that calls its
    # own results stable too, a variation that is not of results, or one it negates
    assert contradicted_stability(claim, paper_checks(PAPER)) == []
    assert contradicted_stability("The results are not consistent across runs.", paper_checks(varying)) == []
    stable_too = varying + [S("5 Analysis", "Our method is stable across seeds.", RESULTS)]
    assert contradicted_stability(claim, paper_checks(stable_too)) == []
    life = PAPER + [S("1 Introduction", "Vulnerability to iron deficiency varies greatly with age.", OTHER)]
    assert contradicted_stability(claim, paper_checks(life)) == []
    negated = PAPER + [S("4 Results", "The rate constants of the runs do not vary greatly.", RESULTS)]
    assert contradicted_stability(claim, paper_checks(negated)) == []


def test_the_deep_read_objects_to_results_called_consistent_of_a_paper_that_says_they_vary():
    from types import SimpleNamespace

    from reader.audit.citations import ReferenceList
    from reader.deepread.absence import PaperStatements
    from reader.deepread.assumed import PaperAssumptions
    from reader.deepread.number_owners import NumberOwners
    from reader.deepread.polarity import PaperPolarity
    from reader.deepread.read import _objections

    texts = ["Figure 4 shows 100 runs of the tuner.", "We see a high variance around a median of 27.2 BLEU."]
    sections = PAPER + [S("4 Results", " ".join(texts), RESULTS)]
    read = SimpleNamespace(
        checks=paper_checks(sections),
        statements=PaperStatements.of(texts),
        owners=NumberOwners.of(texts),
        polarity=PaperPolarity.of(texts),
        assumptions=PaperAssumptions.of(texts),
        references=ReferenceList.build(references=[], body=texts),
    )
    reasons = _objections(
        "Figure 4 indicates that the results are reliable and consistent across multiple runs.", read
    )
    assert reasons == [
        "the paper says its results vary: “We see a high variance around a median of 27.2 BLEU.”"
    ]


def test_an_evaluation_called_subjective_of_a_paper_that_computes_its_metrics_is_objected_to():
    from reader.deepread.checked import claimed_subjectivity

    # SemEAGAT's note, of a paper that uses "Precision (P), Recall (R), and F measure (F1)"
    metrics = PAPER + [
        S("4 Experiments", "We use Precision (P), Recall (R), and F1 as evaluation metrics.", RESULTS)
    ]
    claim = "The evaluation criteria used (e.g., precision, recall, F1) are subjective and may vary."
    (reason,) = claimed_subjectivity(claim, paper_checks(metrics))
    assert reason.startswith(
        "checklist item metrics: the paper reports its metrics and never calls them subjective"
    )
    assert claimed_subjectivity(
        "The evaluation of the coverage metrics is subjective.", paper_checks(metrics)
    )
    # a denial, a paper that speaks of subjectivity itself, or one that reports no metric
    assert claimed_subjectivity("The metrics are not subjective.", paper_checks(metrics)) == []
    judged = metrics + [S("5 Analysis", "Faithfulness ratings are inherently subjective.", RESULTS)]
    assert claimed_subjectivity(claim, paper_checks(judged)) == []
    no_metric = [S("Abstract", "We discuss smart cities and their technologies.", ABSTRACT)]
    assert claimed_subjectivity(claim, paper_checks(no_metric)) == []
