"""The judge's adapters: model backends and fakes beside them (the answer cache is
`hackaudit.shared.content_cache`)."""
