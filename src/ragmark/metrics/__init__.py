"""Metrics: names parsed in one place, retrieval metrics over flat arrays, answer metrics."""
