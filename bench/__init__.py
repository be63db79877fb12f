"""Benchmarks: `python -m bench.run [--smoke] [--json out.json]` (see README, Performance).

One run measures the engine, the Discord layer end to end through the test
harness (tests/harness) on SQLite on disk, the durable-commit floor, REST calls
per game, memory per live game and restart time, and prints one table.
"""
