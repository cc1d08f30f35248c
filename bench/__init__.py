"""Benchmarks of the platform: `python -m bench.run` (see bench/README.md)."""
