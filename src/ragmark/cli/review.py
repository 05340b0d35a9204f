"""`ragmark review` (being written)."""
