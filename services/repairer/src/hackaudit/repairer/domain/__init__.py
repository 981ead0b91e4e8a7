"""The repairer's pure rules: test patch editing, regression tests, capture, gates, the loop."""
