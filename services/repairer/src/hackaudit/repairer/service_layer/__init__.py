"""The repairer's use case: the repair loop, driving the sandbox and the augmenters."""
