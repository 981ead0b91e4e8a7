"""The programs that run inside a task's container, kept as real modules.

Each `*_program.py` here is the text of one part of the probe file the attacker adds to the
task's repository: `probe_source` and `replay_source` read it as package data and write this
task's data and the call that runs it after it. Here they are modules like any other, so the
linters, the type checker and the unit tests see them; there they run under the image's own
interpreter, which can be as old as Python 3.5 (each module's docstring says what that rules out).
Nothing in this package imports them at run time on the attacker's side.
"""
