"""Adapters of the scorer: the results store."""
