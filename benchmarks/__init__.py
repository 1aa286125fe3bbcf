"""Timings and measurements of the suite, each run from the repository root as
``python -m benchmarks.<name>`` (benchmarks/README.md lists them with their ``make`` targets)."""
