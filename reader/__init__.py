"""reader: deep reading of academic papers with a self-audit of every sentence it writes.

    from reader import Reader

See reader/facade.py. The import is lazy so that `reader --help` stays instant.
"""

__version__ = "0.1.0"
__all__ = ["Reader"]


def __getattr__(name: str):
    if name == "Reader":
        from reader.facade import Reader

        return Reader
    raise AttributeError(f"module 'reader' has no attribute {name!r}")
