"""The reader's own annotations of a paper: a judgement of a sentence the audit gave a verdict
(judgements.py) and highlights with notes on the PDF (highlights.py); and the accounts of a
shared `reader serve --accounts`, each with its own judgements and highlights (accounts.py)."""
