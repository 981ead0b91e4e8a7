"""`python -m hackaudit.repairer`: the repairer as a standalone service (NATS_URL names the bus)."""

from hackaudit.repairer.app import build
from hackaudit.shared.service import serve

if __name__ == "__main__":
    serve(build)
