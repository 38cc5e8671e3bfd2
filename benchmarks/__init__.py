"""Benchmarks of the world-state memory (run them as modules, e.g. ``python -m benchmarks.stores``)."""
