"""The claim diagnostics' verdict on a question (``--metrics claims``): which part of
the pipeline its claims blame, and the advice ``inspect --failures`` gives for each."""

from __future__ import annotations

from typing import Any

from ragmark.results.model import QueryRecord


def claim_blame(q: QueryRecord) -> dict[str, Any] | None:
    """The question's blame from the claim diagnostics (the same on each claim metric)."""
    for m in q.metrics.values():
        told = m.details.get("blame") if m.details else None
        if isinstance(told, dict) and "label" in told:
            return told
    return None


BLAME_ADVICE = {  # the part of the pipeline blamed, and what to do
    "retrieval_missed": ("retrieval", "the evidence for {claims} is in no retrieved passage: "
                         "a retrieval problem: check chunking, the embedding model and top_k"),
    "generator_ignored": ("generation", "the retrieved passages hold {claims} but the answer "
                          "leaves it out: make the prompt ask for a complete answer from the "
                          "context, and check how many passages it gets and in what order"),
    "generator_unsupported": ("generation", "the answer claims {claims}, which neither the "
                              "passages nor the expected answer support: ask the generator "
                              "to answer only from the context"),
    "generator_noise": ("generation", "the answer repeats {claims} from a retrieved passage "
                        "though the expected answer does not say so: wrong or off-topic "
                        "passages mislead the generator; raise precision (rerank, fewer "
                        "passages)"),
}


def quoted(claims: list[Any], n: int = 2) -> str:
    shown = "; ".join(f"'{c}'" for c in claims[:n])
    return shown + (f" and {len(claims) - n} more" if len(claims) > n else "")
