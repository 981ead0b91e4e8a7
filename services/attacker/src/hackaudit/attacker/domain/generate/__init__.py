"""Generating candidates: the strategies, where they may put code, the prompt's parts, and which
candidates can behave differently from gold at all."""
