"""`python -m hackaudit.scorer`: the scorer as a standalone service (NATS_URL names the bus)."""

from hackaudit.scorer.app import build
from hackaudit.shared.service import serve

if __name__ == "__main__":
    serve(build)
