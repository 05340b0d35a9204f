"""`ragmark inspect` (being written)."""
