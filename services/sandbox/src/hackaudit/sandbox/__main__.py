"""`python -m hackaudit.sandbox`: a sandbox worker (NATS_URL names the bus; run several)."""

from hackaudit.sandbox.app import build
from hackaudit.shared.service import serve

if __name__ == "__main__":
    serve(build)
