"""`ragmark label` (being written)."""
