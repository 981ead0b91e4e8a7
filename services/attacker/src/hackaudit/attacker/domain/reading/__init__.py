"""What the task's patches and tests say: diffs, Python fragments, the repository's layout and
the literals the tests use. Read by generation, confirmation and the reference pool alike."""
