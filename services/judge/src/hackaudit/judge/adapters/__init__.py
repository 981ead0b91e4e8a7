"""The judge's adapters: model backends, the answer cache, and fakes beside them."""
