"""`ragmark testset` (being written)."""
