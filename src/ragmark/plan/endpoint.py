"""The LLM endpoint a plan calls: the ``--llm-*`` flags (or the Python API's settings),
over the configs' ``[llm]`` tables, over the ``RAGMARK_LLM_*`` environment variables."""

from __future__ import annotations

import os
from collections.abc import Mapping, Sequence
from typing import TYPE_CHECKING, Any

from pydantic import ValidationError

from ragmark.errors import ConfigError
from ragmark.llm.config import COMPONENT, FLAG, TABLE
from ragmark.llm.factory import check_endpoint
from ragmark.llm.fields import origins, read_env, resolve, settings_error
from ragmark.llm.table import LLMTable
from ragmark.registry import registry

if TYPE_CHECKING:
    from ragmark.config import RunConfig
    from ragmark.llm import LLMSettings

def model_at(text: str, flag: str) -> dict[str, str]:
    """``MODEL`` or ``MODEL@BASE_URL`` (``--judge-llm``, ``--simulator``) as the
    endpoint fields it sets.

    >>> model_at("qwen@http://127.0.0.1:8080/v1", "--simulator")
    {'model': 'qwen', 'base_url': 'http://127.0.0.1:8080/v1'}
    """
    model, _, url = text.strip().partition("@")
    if not model.strip() or (text.count("@") and not url.strip()):
        raise ConfigError(f"{flag} {text!r}: expected MODEL or MODEL@BASE_URL")
    return {"model": model.strip(), **({"base_url": url.strip()} if url else {})}


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
        have = table.values() if table else {}
        model = flags.get("model") or have.get("model") or read_env(os.environ).get("model")
        prices, discount = _prices(price_flag, model)
        flags["prices"] = {**(have.get("prices") or {}), **prices}
        if discount is not None:
            flags["batch_discount"] = discount
    origin = origins({TABLE: table.values() if table else {}, FLAG: flags})
    if flags:
        merged = {**(table.values() if table else {}), **flags}
        try:
            table = LLMTable.model_validate(merged)
        except ValidationError as e:
            raise ConfigError(settings_error(e, origin)) from None
        configs = [c.model_copy(update={"llm": table}) for c in configs]
    configs = [component_endpoints(c) for c in configs]
    if not need:
        return None, list(configs)
    given = table.values() if table else {}
    if model and not given.get("model") and not read_env(os.environ).get("model"):
        given = {**given, "model": model}  # a model the command names (judge-eval's)
    return resolve(given, os.environ, scope=TABLE, origin=origin), list(configs)


def component_endpoints(cfg: RunConfig) -> RunConfig:
    """``cfg`` with each ``llm`` generator's and reranker's endpoint completed from the
    ``RAGMARK_LLM_*`` variables now, for the keys neither its own table nor the
    ``[llm]`` table gives: the plan holds what the component will call, and the results
    file records it. A component without any endpoint is left as it is (it says so
    when it is built, and only if it is)."""
    env = read_env(os.environ, COMPONENT)
    if not env:
        return cfg
    update = {}
    for kind in ("generator", "reranker"):
        comp = getattr(cfg, kind, None)
        if comp is None or comp.name != "llm":
            continue
        given = cfg.llm_params(comp)
        if not (given.get("base_url") or env.get("base_url")):
            continue
        more = {k: v for k, v in env.items() if given.get(k) is None}
        if more:
            update[kind] = comp.model_copy(update=more)
    return cfg.model_copy(update=update) if update else cfg


def check_generators(configs: Sequence[Any]) -> None:
    """Each LLM generator's endpoint answers (a ConfigError naming the config and the
    endpoint otherwise), asked before any config runs (a run, a compare, a probe): a
    dead endpoint would otherwise cost a retried call for every question."""
    seen: set[tuple[str | None, str | None]] = set()
    for cfg in configs:
        if cfg.pipeline is not None or cfg.generator.name != "llm":
            continue
        settings = registry("generator").create("llm", **cfg.llm_params(cfg.generator)).settings
        if (settings.base_url, settings.model) not in seen:
            seen.add((settings.base_url, settings.model))
            check_endpoint(settings, f"config {cfg.name!r}: the llm generator's endpoint")
