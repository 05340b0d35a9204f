"""LLM endpoint flags shared by the commands that call a judge."""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import TYPE_CHECKING, Any

import click

from ragmark.llm.providers import names as provider_names

if TYPE_CHECKING:
    from ragmark.config import RunConfig
    from ragmark.llm import LLMSettings


_META = "ragmark.llm_flags"
# flag -> LLMSettings field; the flags are kept in the click context, not passed to commands
_FLAGS = {"llm_base_url": "base_url", "llm_model": "model", "llm_api_key_env": "api_key_env",
          "llm_provider": "provider", "llm_concurrency": "concurrency",
          "llm_timeout": "timeout", "llm_max_retries": "max_retries",
          "llm_prices": "prices", "llm_structured": "structured", "llm_batch": "batch",
          "llm_max_tokens": "max_tokens", "llm_context_window": "context_window"}



def _keep(ctx: click.Context, param: click.Parameter, value: Any) -> None:
    if value is not None and param.name:
        ctx.meta.setdefault(_META, {})[_FLAGS[param.name]] = value


def endpoint_options(f: Callable[..., Any]) -> Callable[..., Any]:
    """The LLM endpoint flags (``--llm-base-url`` ... ``--llm-prices``). They override the
    config's ``[llm]`` table, which overrides ``RAGMARK_LLM_*``; read them with
    :func:`resolve_llm`."""
    for o in reversed(_endpoint_opts()):
        f = o(f)
    return f


def llm_options(f: Callable[..., Any]) -> Callable[..., Any]:
    """Judge metrics, ``--require-llm`` and the LLM endpoint flags."""
    opts = [
        click.option("--judge-metrics", help="Comma-separated LLM judge metrics: faithfulness, "
                     "answer_relevance, context_relevance, answer_correctness, context_recall, "
                     "context_entity_recall, context_precision, citation_correctness."),
        *_endpoint_opts(),
        click.option("--require-llm", is_flag=True,
                     help="Fail (exit 2) when no endpoint is configured or it does not answer."),
        click.option("--human-labels", type=click.Path(exists=True, dir_okay=False),
                     help="A review CSV with people's labels of some answers (`ragmark "
                     "review export`, 'human' column filled in): report the judge metrics "
                     "they label corrected by them (PPI++, with a 95% interval)."),
    ]
    for o in reversed(opts):
        f = o(f)
    return f


def _endpoint_opts() -> list[Callable[..., Any]]:
    def opt(*args: str, **kw: Any) -> Callable[..., Any]:
        return click.option(*args, expose_value=False, callback=_keep, **kw)

    return [
        opt("--llm-base-url", help="OpenAI-compatible or Ollama base URL (default: the "
            "config's [llm] base_url, else $RAGMARK_LLM_BASE_URL)."),
        opt("--llm-model", help="Model name (default: [llm] model, else $RAGMARK_LLM_MODEL)."),
        opt("--llm-api-key-env", help="NAME of the variable holding the API key (default: "
            "[llm] api_key_env, else $RAGMARK_LLM_API_KEY_ENV)."),
        opt("--llm-provider", type=click.Choice(provider_names()),
            help="Protocol of the endpoint (default: openai, any OpenAI-compatible "
            "server)."),
        opt("--llm-concurrency", type=click.IntRange(min=1),
            help="Calls in flight at once (default: 8)."),
        opt("--llm-timeout", type=click.FloatRange(min=0, min_open=True),
            help="Seconds per call before it is retried (default: 60)."),
        opt("--llm-max-retries", type=click.IntRange(min=0),
            help="Retries of a call after a timeout, 429 or 5xx (default: 4)."),
        opt("--llm-prices", help="'PROMPT,COMPLETION[,BATCH_DISCOUNT]': $ per million "
            "tokens of the model, for the cost estimate, and the share a provider batch "
            "job takes off (default 0.5)."),
        opt("--llm-batch", is_flag=True, default=None,
            help="Send the judge calls not in the cache as OpenAI Batch API jobs (about "
            "half the price, answers within 24 h); stop and rerun to pick a job up."),
        opt("--llm-max-tokens", type=click.IntRange(min=1),
            help="Cap on each judge's JSON answer, in tokens (default: 1024; lowered to "
            "what the context window leaves after the prompt)."),
        opt("--llm-context-window", type=click.IntRange(min=1),
            help="The model's context window in tokens, when the server does not say it "
            "(/models, /props, Ollama's num_ctx); judge calls are fitted in it, their "
            "texts cut when needed (counted in a note)."),
        opt("--llm-structured", type=click.Choice(["auto", "off"]),
            help="Send the judges' output schema in the form the endpoint takes, falling "
            "back when it refuses (auto, the default), or never (off)."),
    ]


def resolve_llm(configs: Sequence[RunConfig], need: bool = True, model: str | None = None
                ) -> tuple[LLMSettings | None, list[RunConfig]]:
    """:func:`ragmark.plan.endpoint.resolve_llm` with the ``--llm-*`` flags of this
    command."""
    from ragmark.plan.endpoint import resolve_llm as resolve

    return resolve(configs, llm_flags(), need=need, model=model)


def llm_flags() -> dict[str, Any]:
    """The ``--llm-*`` flags given to this command (LLMSettings field -> value)."""
    ctx = click.get_current_context(silent=True)
    return dict(ctx.meta.get(_META, {})) if ctx is not None else {}


def dry_run_text(estimates: dict[str, dict[str, Any]], what: str = "judge") -> str:
    """What a dry run found, for the console: one line per config (the config name is
    left out when there is one) for its embedding endpoint, if any, and its judge calls,
    and the total when there are several."""
    lines = []
    for name, est in estimates.items():
        who = f"{name}: " if len(estimates) > 1 else ""
        emb = est.get("embeddings") or {}
        if emb:
            lines.append(
                f"dry run: {who}embeddings: {emb['calls']} calls for {emb['texts']:,} texts "
                f"to {emb['model']} at {emb['endpoint']}, {emb['cached']:,} more texts in "
                f"the cache; about {emb['estimated_prompt_tokens']:,} tokens (characters / "
                f"4); estimated cost {_cost(emb['estimated_cost'], 'input tokens')}.")
        if emb.get("calls"):
            lines.append(f"dry run: {who}{what} calls: not estimated until the embeddings "
                         "are in the cache (the contexts they judge depend on them).")
        elif est.get("endpoint") is None:
            lines.append(f"dry run: {who}{est['note']}")
        else:
            lines.append(_calls_line(who, est, what))
    judged = [e for e in estimates.values()
              if e.get("endpoint") is not None and not (e.get("embeddings") or {}).get("calls")]
    if len(judged) > 1:
        costs = [e["estimated_cost"] for e in judged]
        total = None if any(c is None for c in costs) else sum(costs)
        lines.append(
            f"dry run: all configs: {sum(e['calls'] for e in judged)} calls, about "
            f"{sum(e['estimated_prompt_tokens'] for e in judged):,} prompt tokens, "
            f"estimated cost {_cost(total)} (calls the configs share are counted for each, "
            "so this is an upper bound).")
    lines.append("Nothing was called and no results were written.")
    return "\n".join(lines)


def _calls_line(who: str, est: dict[str, Any], what: str) -> str:
    most = est.get("at_most", est["calls"])
    return (
        f"dry run: {who}{est['calls']} {what} calls"
        + (f" (at most {most} with re-asks)" if most != est["calls"] else "")
        + f" to {est['model']} at {est['endpoint']}, {est['cached']} more served from "
        f"the cache; about {est['estimated_prompt_tokens']:,} prompt tokens"
        + _at_most(est, "at_most_prompt_tokens", "estimated_prompt_tokens", "{:,}")
        + f" (characters / 4); estimated cost {_cost(est['estimated_cost'])}"
        + (_at_most(est, "at_most_cost", "estimated_cost", "${:.4f}")
           if est["estimated_cost"] is not None else "") + "."
        + (f" That is {est['calls'] / est['questions']:.1f} calls a question."
           if est.get("questions") else "")
        + (f"\nwarning: {est['cut_to_fit']} of those prompts do not fit the model's context "
           f"window of {est['context_window']:,} tokens with their whole texts: the run will "
           "cut the texts they judge to fit" if est.get("cut_to_fit") else ""))


def _at_most(est: dict[str, Any], most: str, sure: str, fmt: str) -> str:
    if est.get(most) is None or est[most] == est[sure]:
        return ""
    return f" (at most {fmt.format(est[most])})"


def _cost(cost: float | None, of: str = "prompt tokens") -> str:
    return "unknown (give --llm-prices)" if cost is None else f"${cost:.4f} ({of})"
