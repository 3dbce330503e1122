"""Text helpers every layer shares: sentence splitting, token estimates, content digests.

A leaf: nothing here imports from the rest of reader.
"""
