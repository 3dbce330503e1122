"""reader: deep reading of academic papers with a self-audit of every sentence it writes."""

__version__ = "0.1.0"
