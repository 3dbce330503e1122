"""The relevance grader: a cross-encoder (question, passage) -> P(relevant), trained here."""
