"""Programs that run inside a task's container, kept as real modules.

Each `*_program.py` here is sent into the container as text (read as package data) and run by
the image's own interpreter, which can be as old as Python 3.6; here it is a module like any
other, so the linters, the type checker and the unit tests see it. Nothing on the sandbox's side
imports them at run time.
"""
