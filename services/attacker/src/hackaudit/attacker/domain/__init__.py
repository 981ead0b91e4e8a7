"""The attacker's pure core: diff editing, strategies, round planning and confirmation rules.

Nothing here imports a broker, Docker, an LLM SDK or a database; the outside world is reached
through the ports in `ports`.
"""
