"""The attacker service: finds exploits, candidate incorrect patches the task's tests accept."""
