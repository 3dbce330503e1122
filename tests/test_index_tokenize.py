from reader.index.tokenize import cjk_bigrams, tokenize


def test_english_is_lower_cased_stemmed_and_stop_words_dropped():
    assert tokenize("The Networks are Running in the studies") == ["network", "run", "studi"]


def test_chinese_runs_become_character_bigrams():
    assert tokenize("注意力机制") == ["注意", "意力", "力机", "机制"]
    assert cjk_bigrams("中") == ["中"]


def test_mixed_chinese_and_english():
    tokens = tokenize("BERT模型的注意力 mechanisms")
    assert tokens == ["bert", "模型", "型的", "的注", "注意", "意力", "mechan"]


def test_punctuation_splits_chinese_runs_and_full_width_is_normalized():
    assert tokenize("中文，分类") == ["中文", "分类"]
    assert tokenize("ＢＥＲＴ　２０２０") == ["bert", "2020"]


def test_empty_and_symbol_only_text_has_no_tokens():
    assert tokenize("") == []
    assert tokenize("— , . ; ()") == []


def test_the_shared_word_tokenizer_is_what_search_attribution_and_lookup_read():
    from reader.audit.citations import content_stems
    from reader.export.lookup import title_words
    from reader.text.words import runs, stems, words

    assert words("Self-Attention, ＢＥＲＴ and Müller's 2020 模型") == [
        "self",
        "attention",
        "bert",
        "and",
        "müller",
        "s",
        "2020",
    ]
    assert runs("BERT模型") == [("bert", False), ("模型", True)]
    assert stems(["networks", "running"]) == ["network", "run"] and stems([]) == []
    assert content_stems("The networks outperform 2020 baselines") == {"network", "outperform", "baselin"}
    assert title_words("Long Short-Term Memory of LSTM") == ["long", "short", "term", "memory", "lstm"]
