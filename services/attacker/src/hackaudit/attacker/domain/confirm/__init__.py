"""Confirming an accepted candidate: probes, replayed tests, the issue's examples, and what the
evidence says (task exploit or harness finding)."""
