"""`python -m hackaudit.judge`: the judge service on its own, until SIGINT or SIGTERM."""

from hackaudit.judge.app import build
from hackaudit.shared.service import serve

if __name__ == "__main__":
    serve(build)
