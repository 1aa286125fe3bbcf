"""Figures 1-4 and the budget tables, drawn from trial records (ours or the authors' published ones)."""
