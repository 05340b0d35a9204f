"""The LLM endpoint a plan calls: the ``--llm-*`` flags (or the Python API's settings),
over the configs' ``[llm]`` tables, over the ``RAGMARK_LLM_*`` environment variables."""

from __future__ import annotations

import os
from collections.abc import Mapping, Sequence
from typing import TYPE_CHECKING, Any

from pydantic import ValidationError

from ragmark.errors import ConfigError

if TYPE_CHECKING:
    from ragmark.config import RunConfig
    from ragmark.llm import LLMSettings

_ENV = {"base_url": "RAGMARK_LLM_BASE_URL", "model": "RAGMARK_LLM_MODEL",
        "api_key_env": "RAGMARK_LLM_API_KEY_ENV", "provider": "RAGMARK_LLM_PROVIDER",
        "concurrency": "RAGMARK_LLM_CONCURRENCY", "timeout": "RAGMARK_LLM_TIMEOUT",
        "max_retries": "RAGMARK_LLM_MAX_RETRIES", "structured": "RAGMARK_LLM_STRUCTURED",
        "batch_poll": "RAGMARK_LLM_BATCH_POLL", "max_tokens": "RAGMARK_LLM_MAX_TOKENS",
        "context_window": "RAGMARK_LLM_CONTEXT_WINDOW"}


def _env_values() -> dict[str, Any]:
    out: dict[str, Any] = {}
    for field, var in _ENV.items():
        raw = os.environ.get(var, "").strip()
        if not raw:
            continue
        if field in ("concurrency", "max_retries", "timeout", "batch_poll", "max_tokens",
                     "context_window"):
            try:
                out[field] = (float if field in ("timeout", "batch_poll") else int)(raw)
            except ValueError:
                raise ConfigError(f"{var}: expected a number, got {raw!r}") from None
        else:
            out[field] = raw
    return out


def _prices(text: str, model: str | None
            ) -> tuple[dict[str, tuple[float, float]], float | None]:
    """The prices of ``--llm-prices`` and its batch discount, when given."""
    try:
        values = [float(x) for x in text.split(",")]
        if len(values) not in (2, 3) or (len(values) == 3 and not 0 <= values[2] <= 1):
            raise ValueError
    except ValueError:
        raise ConfigError(f"--llm-prices: expected 'PROMPT,COMPLETION' dollars per million "
                          f"tokens, e.g. '0.15,0.60', optionally with the batch discount "
                          f"(0 to 1), e.g. '0.15,0.60,0.5'; got {text!r}") from None
    return {model or "": (values[0], values[1])}, values[2] if len(values) == 3 else None


def resolve_llm(configs: Sequence[RunConfig], flags: Mapping[str, Any] | None = None, *,
                need: bool = True, model: str | None = None
                ) -> tuple[LLMSettings | None, list[RunConfig]]:
    """The judges' endpoint and the configs with the flags folded into their ``[llm]``
    tables (so an ``llm`` generator or reranker uses them too).

    Per field: the flag, else the configs' ``[llm]`` table (configs compared together
    must not disagree), else ``RAGMARK_LLM_*``. The settings are None when no base URL is
    set anywhere, or when ``need`` is false (nothing asks a judge): then an incomplete
    environment is not an error. ``model`` is used when nothing else names one.
    """
    from ragmark.llm import LLMSettings
    from ragmark.llm.table import LLMTable

    flags = dict(flags or {})
    price_flag = flags.pop("prices", None)
    tables = {c.name: c.llm for c in configs if c.llm is not None}
    distinct = {t.model_dump_json() for t in tables.values()}
    if len(distinct) > 1:
        raise ConfigError(f"configs {', '.join(tables)} have different [llm] tables; runs "
                          "judged together need one endpoint: give the same table, or the "
                          "--llm-* flags")
    table = next(iter(tables.values()), None)
    if price_flag:  # into the table, so the llm generator and reranker are priced too
        model = flags.get("model") or (table.model if table else None) or _env_values().get(
            "model")
        prices, discount = _prices(price_flag, model)
        flags["prices"] = {**((table.prices or {}) if table else {}), **prices}
        if discount is not None:
            flags["batch_discount"] = discount
    env = _env_values() if need else {}
    origin = {**{f: _ENV[f] for f in env}, **{f: f"[llm] {f}" for f in (
        table.model_dump(exclude_none=True) if table else {})},
        **{f: _flag(f) for f in flags}}
    if flags:
        merged = {**(table.model_dump(exclude_none=True) if table else {}), **flags}
        try:
            table = LLMTable.model_validate(merged)
        except ValidationError as e:
            raise ConfigError(settings_error(e, origin)) from None
        configs = [c.model_copy(update={"llm": table}) for c in configs]
    if not need:
        return None, list(configs)
    values = {**env, **(table.model_dump(exclude_none=True) if table else {})}
    if model and not values.get("model"):  # a model the command names (judge-eval's)
        values["model"] = model
    if not values.get("base_url"):
        return None, list(configs)
    if not values.get("model"):
        raise ConfigError("an LLM endpoint is set but no model: give --llm-model, [llm] "
                          "model, or RAGMARK_LLM_MODEL")
    try:
        return LLMSettings.model_validate(values), list(configs)
    except ValidationError as e:
        raise ConfigError(settings_error(e, origin)) from None


def _flag(field: str) -> str:
    return "--llm-" + field.replace("_", "-")


def settings_error(e: ValidationError, origin: dict[str, str]) -> str:
    """One line per problem, naming where the value came from (the flag, the ``[llm]``
    table or the environment variable), in ragmark's words, not pydantic's."""
    lines = []
    for err in e.errors():
        field = str(err["loc"][0]) if err["loc"] else ""
        msg = str(err["msg"]).removeprefix("Value error, ")
        where = origin.get(field, field)
        value = err.get("input")
        # never echo api_key_env: it may be a key pasted by mistake
        shown = f" {value!r}" if isinstance(value, str | int | float) and field not in (
            "prices", "api_key_env") else ""
        lines.append(f"{where}{shown}: {msg}")
    return "LLM settings: " + "; ".join(lines)
