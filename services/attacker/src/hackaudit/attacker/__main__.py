"""`python -m hackaudit.attacker`: the attacker as a standalone service (NATS_URL names the bus)."""

from hackaudit.attacker.app import build
from hackaudit.shared.service import serve

if __name__ == "__main__":
    serve(build)
