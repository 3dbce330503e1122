"""Training code for the claim checker and the relevance grader, never imported at run time: the
rule-made claims (rewrites.py, twins.py, claims.py), the paraphrases' prompt and filter
(paraphrase.py), the grader's rule-made questions (questions.py) and the training loop
(train.py). The scripts beside this package (make_*_data.py, train_*.py) run them."""
