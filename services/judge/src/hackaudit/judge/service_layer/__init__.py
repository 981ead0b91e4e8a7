"""The judge's use case: one request in, every sample asked (or not, and why), one answer out."""
