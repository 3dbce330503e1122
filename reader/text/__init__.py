"""Text helpers every layer shares: sentence splitting, token estimates, content digests,
control characters taken out of outside text.

A leaf: nothing here imports from the rest of reader.
"""
