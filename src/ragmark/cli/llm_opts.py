"""LLM endpoint flags shared by the commands that call a judge."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import click

from ragmark.errors import ConfigError


def endpoint_options(f: Callable[..., Any]) -> Callable[..., Any]:
    """The LLM endpoint flags alone (``--llm-base-url`` ... ``--llm-prices``), for commands
    that always need an endpoint."""
    for o in reversed(_endpoint_opts()):
        f = o(f)
    return f


def llm_options(f: Callable[..., Any]) -> Callable[..., Any]:
    """Judge metrics and the LLM endpoint (flags override RAGMARK_LLM_* variables)."""
    opts = [
        click.option("--judge-metrics", help="Comma-separated LLM judge metrics: faithfulness, "
                     "answer_relevance, context_relevance, answer_correctness."),
        *_endpoint_opts(),
        click.option("--require-llm", is_flag=True,
                     help="Fail (exit 2) when no endpoint is configured or it does not answer."),
    ]
    for o in reversed(opts):
        f = o(f)
    return f


def _endpoint_opts() -> list[Callable[..., Any]]:
    return [
        click.option("--llm-base-url", help="OpenAI-compatible or Ollama base URL "
                     "(default: $RAGMARK_LLM_BASE_URL)."),
        click.option("--llm-model", help="Model name (default: $RAGMARK_LLM_MODEL)."),
        click.option("--llm-api-key-env", help="NAME of the variable holding the API key "
                     "(default: $RAGMARK_LLM_API_KEY_ENV)."),
        click.option("--llm-provider", type=click.Choice(["openai", "ollama"]),
                     help="Protocol of the endpoint (default: openai)."),
        click.option("--llm-prices", help="'PROMPT,COMPLETION': $ per million tokens of the "
                     "model, for the cost estimate."),
    ]


def llm_settings(base_url: str | None, model: str | None, api_key_env: str | None,
                  provider: str | None, prices: str | None = None) -> Any:
    """LLMSettings from the flags, each falling back to its RAGMARK_LLM_* variable; None
    when no base URL is given either way."""
    import os

    from ragmark.llm import LLMSettings

    def pick(flag: str | None, var: str) -> str | None:
        return flag or os.environ.get(var, "").strip() or None

    url = pick(base_url, "RAGMARK_LLM_BASE_URL")
    if url is None:
        return None
    values: dict[str, Any] = {"base_url": url, "model": pick(model, "RAGMARK_LLM_MODEL"),
              "api_key_env": pick(api_key_env, "RAGMARK_LLM_API_KEY_ENV"),
              "provider": pick(provider, "RAGMARK_LLM_PROVIDER") or "openai"}
    for field, var, kind in (("concurrency", "RAGMARK_LLM_CONCURRENCY", int),
                             ("timeout", "RAGMARK_LLM_TIMEOUT", float)):
        raw = os.environ.get(var, "").strip()
        if raw:
            try:
                values[field] = kind(raw)
            except ValueError:
                raise ConfigError(f"{var}: expected a number, got {raw!r}") from None
    if not values["model"]:
        raise ConfigError("an LLM endpoint is set but no model: give --llm-model or set "
                          "RAGMARK_LLM_MODEL")
    if prices:
        try:
            a, b = (float(x) for x in prices.split(","))
        except ValueError:
            raise ConfigError(f"--llm-prices: expected 'PROMPT,COMPLETION' dollars per "
                              f"million tokens, e.g. '0.15,0.60'; got {prices!r}") from None
        values["prices"] = {values["model"]: (a, b)}
    try:
        return LLMSettings.model_validate(values)
    except ValueError as e:
        raise ConfigError(f"LLM settings: {e}") from None


def dry_run_text(estimates: dict[str, dict[str, Any]], what: str = "judge") -> str:
    """What a dry run found, for the console: one line per config (the config name is
    left out when there is one), and the total when there are several."""
    first = next(iter(estimates.values()))
    if first.get("endpoint") is None:
        return f"dry run: {first['note']}"
    lines = []
    for name, est in estimates.items():
        who = f"{name}: " if len(estimates) > 1 else ""
        lines.append(
            f"dry run: {who}{est['calls']} {what} calls to {est['model']} at {est['endpoint']} "
            f"({est['cached']} more already cached), about {est['estimated_prompt_tokens']:,} "
            f"prompt tokens (characters / 4); estimated cost {_cost(est['estimated_cost'])}.")
    if len(estimates) > 1:
        costs = [e["estimated_cost"] for e in estimates.values()]
        total = None if any(c is None for c in costs) else sum(costs)
        lines.append(
            f"dry run: all configs: {sum(e['calls'] for e in estimates.values())} calls, about "
            f"{sum(e['estimated_prompt_tokens'] for e in estimates.values()):,} prompt tokens, "
            f"estimated cost {_cost(total)} (calls the configs share are counted for each, "
            "so this is an upper bound).")
    lines.append("Nothing was called and no results were written.")
    return "\n".join(lines)


def _cost(cost: float | None) -> str:
    return "unknown (give --llm-prices)" if cost is None else f"${cost:.4f} (prompt tokens)"
