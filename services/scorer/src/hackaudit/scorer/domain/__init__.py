"""The scorer's pure logic: sanity of the reference runs, EQS, and the per-task audit steps."""
