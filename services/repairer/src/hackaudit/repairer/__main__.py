"""`python -m hackaudit.repairer`: the repairer service is not built yet, and says so instead of idling."""

import sys

if __name__ == "__main__":
    sys.stderr.write("hackaudit.repairer is not built yet: audits run without it and say so.\n")
    sys.exit(2)
