"""The claim checker trained for papers: its weights loaded on first use and scored (model.py).
Its training data rules and loop are outside the runtime, in scripts/training/. The audit uses
it through reader.audit.checking."""
