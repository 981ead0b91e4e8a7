"""Meta-analysis of how much weak tests inflate resolved rates across leaderboard submissions.

Each submission (a model or agent) is one study: within it, the Mantel–Haenszel risk difference
compares resolved rates on flagged (weak-test) tasks with robust tasks inside difficulty strata.
The studies are then pooled with random effects, tested with a sign test and with a stratified
permutation of the flags, split by subgroup, and drawn as a forest plot.

Layers: ``effects``, ``pooling``, ``permutation``, ``design`` and ``subgroups`` are pure domain
code (numbers in, numbers out); ``inputs``, ``labels`` and ``shared_data`` read files;
``plot``, ``report`` and ``console`` render; ``service`` wires them; ``cli`` is the entry point.
"""
