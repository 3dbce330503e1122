"""The claim checker trained for papers: its model (model.py), training data rules (rewrites.py,
data.py) and training loop (train.py). The audit uses it through reader.audit.checking."""
