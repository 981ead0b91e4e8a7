"""Rebuilds a corpus of real SWE-bench tasks from public git mirrors and the shared task data.

The committed selection and labels name tasks only; every row (upstream code, patches, tests)
is derived at run time from the mirrors and written outside git.
"""
