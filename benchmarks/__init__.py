"""Benchmarks: run from the repository root as modules, e.g. `.venv/bin/python -m benchmarks.bench_crag`.
What several of them share is in `benchmarks.common`."""
