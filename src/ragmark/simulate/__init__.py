"""Conversations with simulated users (``ragmark simulate``): scenarios played by an LLM
as the user against a system ragmark can ask in turns, written as a conversation log
that every metric reads."""
