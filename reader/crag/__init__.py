"""Question answering with Corrective RAG: retrieve, grade, route, correct, refine,
generate from kept evidence only, and check the answer's groundedness.

`reader.crag.pipeline.ask` is the entry point; each stage is its own module.
"""

from reader.crag.generate import NOT_FOUND, NOT_FOUND_ZH, is_not_found, not_found_sentinel

__all__ = ["NOT_FOUND", "NOT_FOUND_ZH", "is_not_found", "not_found_sentinel"]
