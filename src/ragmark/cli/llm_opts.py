"""LLM endpoint flags shared by the commands that call a judge."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any, Literal, get_args, get_origin

import click

from ragmark.cli.shared import option
from ragmark.llm.config import ENV, FLAG
from ragmark.llm.fields import EndpointField, given_on
from ragmark.llm.providers import names as provider_names

_META = "ragmark.llm_flags"  # the flags are kept in the click context, not passed on


def _keep(ctx: click.Context, param: click.Parameter, value: Any) -> None:
    if value is not None and param.name:
        ctx.meta.setdefault(_META, {})[param.name.removeprefix("llm_")] = value


def endpoint_options(f: Callable[..., Any]) -> Callable[..., Any]:
    """The LLM endpoint flags (``--llm-base-url`` ... ``--llm-prices``). They override the
    config's ``[llm]`` table, which overrides ``RAGMARK_LLM_*``; a command passes them
    (:func:`llm_flags`) in its request, and ``plan/`` resolves the endpoint."""
    for o in reversed(endpoint_opts()):
        f = o(f)
    return f


def llm_options(f: Callable[..., Any]) -> Callable[..., Any]:
    """Judge metrics, ``--require-llm`` and the LLM endpoint flags."""
    opts = [
        option("--judge-metrics"),
        *endpoint_opts(),
        click.option("--require-llm", is_flag=True,
                     help="Fail (exit 2) when no endpoint is configured or it does not answer."),
        click.option("--human-labels", metavar="FILE|store:QUEUE",
                     help="People's labels of some answers: a review CSV (`ragmark review "
                     "export` or `ragmark annotate --export`, 'human' column filled in) or "
                     "store:QUEUE, a queue of `ragmark annotate` read from the label store; "
                     "report the judge metrics they label corrected by them (PPI++, with a "
                     "95% interval)."),
        option("--store", metavar="PATH"),
    ]
    for o in reversed(opts):
        f = o(f)
    return f


def endpoint_opts() -> list[Callable[..., Any]]:
    """One click option per endpoint field declared on FLAG
    (:class:`~ragmark.llm.config.LLMSettings`), its help and limits from there."""
    return [_option(f) for f in given_on(FLAG)]


def _option(f: EndpointField) -> Callable[..., Any]:
    kind: Any = None
    ann = f.info.annotation
    limits = {k: getattr(m, k) for m in f.info.metadata for k in ("ge", "gt", "le")
              if hasattr(m, k)}
    if f.name == "provider":
        kind = click.Choice(provider_names())
    elif get_origin(ann) is Literal:
        kind = click.Choice(get_args(ann))
    elif ann in (int, int | None):
        kind = click.IntRange(min=limits["ge"] if "ge" in limits else limits.get("gt", -1) + 1,
                              max=limits.get("le"))
    elif ann in (float, float | None):
        kind = click.FloatRange(min=limits.get("ge", limits.get("gt")),
                                min_open="gt" in limits, max=limits.get("le"))
    extra: dict[str, Any] = {"is_flag": True, "default": None} if ann is bool else {}
    return click.option(f.flag, "llm_" + f.name, type=kind, expose_value=False,
                        callback=_keep, help=_help(f), **extra)


def _help(f: EndpointField) -> str:
    where = [f"[llm] {f.name}"] + ([f"${f.env}"] if ENV in f.on else [])
    default = f.info.default
    if not f.info.is_required() and default not in (None, False):
        where.append(str(default).removesuffix(".0"))
    return f"{f.info.description} Else: {', else '.join(where)}."


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
