"""Seeded random hyperparameter search on Ray Tune with durable trial records."""
