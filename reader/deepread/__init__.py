"""The deep read: the paper's material and context (material.py, context.py), the writer
(writer.py), the tool's own sentences from the checklist (checked.py), tidying (tidy.py), and
the read itself with its audit and storing (read.py)."""
