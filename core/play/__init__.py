"""Simulated players: random legal agents (sim), strategic ones (agents), the balance
estimate they feed (balance) and setups as played (setups)."""
