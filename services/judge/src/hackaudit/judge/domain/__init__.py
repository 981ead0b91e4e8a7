"""The judge's pure part: prompts, answers, the vote, the budget. No broker, no model SDK."""
