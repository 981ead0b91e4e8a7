"""Adapters of the sandbox: the container backend (Docker, or an in-memory fake), the artifact
store and the reference-timing store, each behind a small `Protocol` port in `ports`."""
