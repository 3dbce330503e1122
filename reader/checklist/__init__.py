"""The rigour checklist of a paper: what a reviewer checks first (datasets and sizes, baselines,
metrics, ablations, variance or significance, runs, hyperparameters, compute, code and data
availability, limitations, ethics, stated contributions), each with the sentence and page it rests
on or "not found" after a search that would have found it. Built from rules (reader.text.rigour*),
the paper's index and one-question extraction prompts (build.py, extract.py); stored with the deep
read (store.py)."""

from reader.checklist.build import build_checklist
from reader.checklist.model import EXTRACTION, NOT_FOUND, RULE, Checklist, ChecklistItem
from reader.checklist.store import checklist_of, paper_passages, save_checklist, stored_checklist

__all__ = [
    "EXTRACTION",
    "NOT_FOUND",
    "RULE",
    "Checklist",
    "ChecklistItem",
    "build_checklist",
    "checklist_of",
    "paper_passages",
    "save_checklist",
    "stored_checklist",
]
