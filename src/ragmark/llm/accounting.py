"""LLM accounting: what one component's calls cost (calls, cache hits, retries,
failures, tokens, estimated cost), and the run's total over the judges and the
components that call models."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from ragmark.llm.client import LLMClient
from ragmark.llm.config import LLMSettings
from ragmark.llm.window import known_window

COMPONENTS = ("generator", "reranker", "embeddings", "refusal")
"""The pipeline components whose model calls a run accounts for, each in its own block."""


def llm_summary(settings: LLMSettings, client: LLMClient, counts: Any = None
                ) -> dict[str, Any]:
    """The LLM accounting of one component, for reports: endpoint, model, calls, cache
    hits, retries, failures, tokens, estimated cost, and (for judges) re-asks and items
    without a verdict."""
    st = client.stats
    out = {
        "endpoint": settings.display_url, "model": settings.model,
        "calls": st.calls, "cache_hits": st.cache_hits, "retries": st.retries,
        "failures": st.failures, "prompt_tokens": st.prompt_tokens,
        "completion_tokens": st.completion_tokens, "estimated_cost": st.estimated_cost(),
    }
    if counts is not None:
        out.update(judge_reasks=counts.reasked, judge_failures=counts.failed)
        if counts.cut:
            out["judge_cut_to_fit"] = counts.cut
        window = counts.window or known_window(client)
        if window:  # the window the calls were fitted in
            out["context_window"] = window
        if getattr(counts, "guidance_cut", 0):
            out.update(alignment_cut_to_fit=counts.guidance_cut,
                       alignment_examples_shortened=counts.examples_shortened,
                       alignment_examples_dropped=counts.examples_dropped)
    if st.format_refusals:
        out["format_refusals"] = st.format_refusals
    if st.hard:  # answers that asked for log-probabilities and came without
        out["hard_verdict_answers"] = st.hard
    if client.batcher is not None:
        out.update(batch_calls=st.batch_calls, batch_jobs=list(client.batcher.jobs),
                   batch_jobs_resumed=client.batcher.resumed,
                   batch_discount=settings.batch_discount)
    return out




def llm_total(llm: dict[str, Any]) -> dict[str, Any]:
    """Every LLM call of a run summed over the judges and the components: calls, cache
    hits, tokens, and the estimated cost (None when a part that made calls has no
    price)."""
    parts = [llm] if "calls" in llm else []
    parts += [llm[c] for c in COMPONENTS if isinstance(llm.get(c), dict) and llm[c]]
    return sum_accounting(parts, ("calls", "cache_hits", "prompt_tokens",
                                  "completion_tokens"))


def sum_accounting(parts: Sequence[dict[str, Any]], keys: Sequence[str]) -> dict[str, Any]:
    """LLM accounting blocks added up: each count in ``keys``, and the estimated cost
    (None when a part that made calls has no price)."""
    total: dict[str, Any] = {k: sum(int(p.get(k, 0)) for p in parts) for k in keys}
    costs = [p.get("estimated_cost") for p in parts if p.get("calls")]
    total["estimated_cost"] = (None if any(c is None for c in costs)
                               else float(sum(c for c in costs if c is not None)))
    return total
