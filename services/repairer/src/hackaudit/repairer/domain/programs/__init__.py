"""The program that runs inside a task's container, kept as a real module.

`capture_program.py` is the text of the capture module the repairer adds beside the task's test
patch: `capture.source` reads it as package data and writes this run's cases and the call that
names them after it. Here it is a module like any other, so the linters, the type checker and the
unit tests see it; there it runs under the image's own interpreter, which can be as old as
Python 3.5 (the module's docstring says what that rules out). Nothing in the repairer imports it
at run time.
"""
