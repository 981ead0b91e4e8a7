"""sandbox: grades candidate patches exactly as a task's verifier would, in locked-down containers.

Entry points: `bootstrap()` builds a `Runner`; `handlers.handle_run_requested(request, runner)`
serves one `RunRequested`; `bench.benchmark(...)` measures the run overhead.
"""
