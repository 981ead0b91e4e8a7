"""Adapters behind the repairer's ports, each with an in-memory fake beside it."""
