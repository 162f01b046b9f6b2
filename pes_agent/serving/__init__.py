"""Serving an instance to other programs over a protocol (A2A)."""
