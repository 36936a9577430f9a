"""Benchmarks: `make bench` (python -m bench). See docs/performance.md."""
