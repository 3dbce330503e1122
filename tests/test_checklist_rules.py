"""The rigour checklist's rules (reader.text.rigour*): each item found in the sentence that states it,
and not found in sentences that only look like it."""

from __future__ import annotations

import pytest

from reader.text.rigour import ITEM_KEYS, Passage, paper_sentences
from reader.text.rigour_experiments import data_sizes
from reader.text.rigour_find import CUES, find_all, find_item


def sentences(*texts: str, section: str = "4 Experiments", page: int = 3):
    return paper_sentences([Passage(text, section, page, page) for text in texts])


def found(key: str, *texts: str, section: str = "4 Experiments", title: str = ""):
    return find_item(key, sentences(*texts, section=section), title)


@pytest.mark.parametrize(
    "text",
    [
        "Accuracy was 0.81 (95% CI 0.77-0.85) over the test set.",
        "Mean reaction time was 412 ms (SD = 38).",
        "Bars show the mean and the SEM across subjects.",
        "The median was 12 days (IQR 8-19).",
        "The model reaches 84.2 ± 0.6 F1 over five seeds.",
        "The difference is statistically significant (p < 0.01, two-sampled t-test).",
        "Error bars indicate one standard deviation.",
        "Scores improve from 0.61 to 0.68, CI [0.59, 0.70].",
    ],
)
def test_every_common_spelling_of_a_spread_or_a_test_is_a_variance(text):
    result = found("variance", text)
    assert result is not None and result.kind in ("spread", "test"), text


@pytest.mark.parametrize(
    "text",
    [
        "The growing conditions were maintained at 20:15 ± 0.08 °C and a humidity of 60 ± 0.3%.",
        "Evidence search needs the text in reading order [1, 2].",
        "The headlines were crawled from https://std.stheadline.com and two forums.",
        "A significant challenge to wheat production is high temperature stress.",
        # 2kenize, of its token distribution: variance spoken of, none reported
        "It produces the least skewed distribution, which also reduces variance, a reason why it wins.",
    ],
)
def test_what_only_looks_like_a_variance_is_none(text):
    assert found("variance", text) is None, text


def test_significance_said_without_a_test_is_a_claim_not_a_spread():
    result = found("variance", "cbow significantly outperforms count on the MEN data set.")
    assert result is not None and result.kind == "claim"
    spread = found(
        "variance",
        "cbow significantly outperforms count on the MEN data set.",
        "All results are the mean ± standard deviation of 5 runs with different random seeds.",
    )
    assert spread.kind == "spread" and "5 runs" in spread.sentence.text  # a spread wins over a claim


def test_dataset_sizes_need_a_count_of_data_in_a_sentence_about_data():
    assert data_sizes("We sanity-check the spaces on MEN, a 3,000 items word similarity data set.") == [
        "3,000 items"
    ]
    assert data_sizes("The resulting text corpus consisted of about three million sentences.")
    assert data_sizes("Six wheat genotypes were used for the study.") == ["Six wheat genotypes"]
    assert data_sizes("The model was trained for 24 hours on one machine.") == []  # no data
    assert data_sizes("DI: 24 hours") == []
    assert data_sizes("Each pot had 3 plants.") == []  # a count, not a study's sample


def test_the_size_of_one_class_is_not_the_size_of_the_data():
    one_class = (
        "The most populated category is Neoplasms (cancer) with 5.4K instances (23.3% of the total dataset)."
    )
    assert found("datasets", one_class) is None
    whole = found(
        "datasets", "We construct a dataset of 25K papers, almost evenly split over the 19 classes."
    )
    assert whole is not None and whole.value == "25K papers"


def test_baselines_must_be_named():
    assert found("baselines", "For completeness, additional baselines are also included.") is None
    assert found("baselines", "We compare with the state-of-the-art models in three classes.") is None
    named = found("baselines", "REALM outperforms the TEXTRUNNER and PL baselines for all relations.")
    assert named is not None and "TEXTRUNNER" in named.value
    assert found("baselines", "Our baseline model is a Maximum Entropy (MaxEnt) classifier over the tags.")
    # a comparison told in the related work is someone else's
    assert found("baselines", "Compared to DMCNN [3], GCN-ED uses syntax.", section="2 Related work") is None
    # a comparison by name is the baselines where the experiments tell it, not in a paper's methods
    compared = "The peaks found by ClusterFinder were compared against the IROA library of compounds."
    assert found("baselines", compared, section="2 Materials and methods") is None
    assert found("baselines", "We compare SemEAGAT with MOGANED [10] on ACE 2005.", section="4 Experiments")
    # "outperforms" alone is no baseline, even in the results
    assert found("baselines", "CBOW outperforms COUNT on the MEN set.", section="5 Results") is None


def test_the_papers_own_system_and_a_metric_are_no_baseline():
    # SemEAGAT's baselines had read "GAT-based, MOGANED, SemEAGAT, F1"
    sentence = (
        "Furthermore, comparing with the GAT-based MOGANED, SemEAGAT surpasses it on both three metrics "
        "and improves by 1.1% on F1."
    )
    title = "SemEAGAT: A Novel Approach by Incorporating Semantic Dependency Graph in Event Detection"
    assert found("baselines", sentence, section="4.2 Results", title=title).value == "GAT-based, MOGANED"
    assert "SemEAGAT" in found("baselines", sentence, section="4.2 Results").value  # no title: no own name


def test_metrics_ablations_runs_hyperparameters_compute():
    assert found("metrics", "SPECTER achieves a MAP score of 83.8 on the co-view task.").value == "MAP"
    assert found("metrics", "The method has the potential to improve type checking accuracy.") is None
    # minimum error rate training (MERT) is a way of tuning, not a metric
    assert found("metrics", "Minimum error rate training is run on 2,000 tuning sentences.") is None
    assert found("metrics", "The word error rate was 47.2% on the WLM corpus.").value == "error rate"
    assert found("ablations", "Ablation Study We remove each component in turn.")
    assert found("ablations", "Removing the abstract from the input results in a large drop in performance.")
    assert found("runs", "Results are a mean across 10 different seeds.")
    assert found("runs", "Triplicate samples were collected for each genotype.")
    assert found("runs", "The 10 most frequent extractions served as bootstrapped seeds.") is None
    assert (
        "batch size"
        in found("hyperparameters", "We set the batch size to 32 and the learning rate to 1e-3.").value
    )
    assert found("hyperparameters", "Neural networks have gained rapid momentum in NLP.") is None
    assert found("compute", "We train the model on a single Titan V GPU (12G memory) for 2 epochs.")
    # dyer12: "a single computer" and "a 30 node hadoop Map/Reduce cluster"
    assert found("compute", "All experiments for training on dev sets were carried out on a single computer.")
    assert found("compute", "For the full data set we used a 30 node hadoop Map/Reduce cluster.")
    assert found("compute", "Each of the two nodes of the tree holds one label.") is None


def test_the_metrics_told_in_the_results_come_before_a_metric_word_in_the_introduction():
    # acl2012: the introduction's "hard to beat in terms of accuracy" is said of a tuning method
    intro = Passage(
        "If only a handful of dense features need tuning, minimum error rate training is hard to beat "
        "in terms of accuracy and efficiency.",
        "1 Introduction",
        1,
        1,
    )
    results = Passage(
        "Figure 4 gives a boxplot of BLEU-4 results for 100 runs of MIRA.", "5.2 Experimental Results", 6, 6
    )
    chosen = find_item("metrics", paper_sentences([intro, results]))
    assert chosen.value == "BLEU" and chosen.sentence.passage.page_start == 6


def test_code_and_data_availability():
    title = "SPECTER: Document-level Representation Learning using Citation-informed Transformers"
    assert found("code", "1 https://github.com/allenai/specter", title=title)  # its own repository
    assert found("code", "Available at https://code.google.com/p/word2vec/", title=title) is None  # a tool's
    assert found("code", "Our software is freely available as a part of the cdec framework.")
    assert found("data", "8This dataset is available at http://clic.cimec.unitn.it/composes")
    assert found("data", "Data Availability Statement: All relevant data are within the paper.")
    assert (
        found("data", "We extract phrase pairs from subtitles available at http://opus.lingfil.uu.se/.")
        is None
    )


def test_limitations_ethics_and_contributions():
    limitations = found(
        "limitations", "Captions are found only when they start a text block.", section="4 Limitations"
    )
    assert limitations is not None and "Limitations" in limitations.value
    assert found("limitations", "We acknowledge the ERC grant n. 283554.", section="Acknowledgments") is None
    assert found("ethics", "All experiments were exempt under institutional IRB review.", section="Ethics")
    assert found("ethics", "Researchers at the Oregon Health & Science University scored the tests.") is None
    contributions = find_item(
        "contributions",
        sentences("Author Contributions: Conceptualization: M. A. Babar.", section="Author Contributions")
        + sentences("The contributions of the paper are as follows: a new model.", section="1 Introduction"),
    )
    assert contributions is not None and contributions.sentence.text.startswith("The contributions")


def test_the_references_and_headings_are_not_read_and_a_sentence_keeps_a_single_page():
    passages = [
        Passage("3.3 Baselines and Ablations", "3 Experiments", 4, 4),
        Passage("We compare against BERT [4]. The test set has 2,000 questions.", "3 Experiments", 4, 5),
        Passage("We compare against BERT [4].", "3 Experiments", 5, 5),
        Passage("[4] J. Devlin. BERT. 2019. We compare with ELMo [5].", "References", 9, 9),
    ]
    all_found = find_all(paper_sentences(passages))
    assert set(all_found) == set(ITEM_KEYS) == set(CUES)
    baselines = all_found["baselines"]
    assert (
        baselines.sentence.text == "We compare against BERT [4]."
        and baselines.sentence.passage.page_start == 5
    )
    assert all_found["ablations"] is None  # the heading "3.3 Baselines and Ablations" is no sentence


def test_key_results_get_a_results_figure_with_its_metric_and_data_when_nothing_gives_one():
    """The held-out paper's Key results carried none of its accuracy figures: its abstract has
    none, so the results' sentences that give a figure with its metric are added, the one naming
    its data first (reader.deepread.material.missing_headlines)."""
    from types import SimpleNamespace

    from reader.deepread.material import ABSTRACT, RESULTS, missing_headlines

    sections = [
        SimpleNamespace(
            title="Abstract", text="We study tagging of tweets with a new model.", priority=ABSTRACT
        ),
        SimpleNamespace(
            title="4 Results",
            text="The model was trained for three days on the machine. "
            "Accuracy rises to 91.4% when the character encoder is added to the tagger. "
            "On the WNUT-17 test set the tagger reaches 84.2 F1 against 80.1 for the CRF.",
            priority=RESULTS,
        ),
    ]
    added = missing_headlines("The model tags tweets well.", sections)
    assert added[0].startswith("On the WNUT-17 test set the tagger reaches 84.2 F1")  # names its data
    assert any("91.4%" in s for s in added) and len(added) == 2
    # a body that already gives a figure with its metric gets nothing more from the results
    assert missing_headlines("It reaches 84.2 F1 on WNUT-17.", sections) == []
