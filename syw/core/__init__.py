"""The bottom layer every other layer may import: errors, paths, units, trial records, settings, the
trial context and the command-line entry helpers. It imports nothing of the suite above it."""
