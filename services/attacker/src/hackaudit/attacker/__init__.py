"""attacker"""
