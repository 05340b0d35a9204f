"""The LLM endpoint's fields as a user gives them, made from their one declaration
(:class:`~ragmark.llm.config.LLMSettings`: type, default, limits, help, and where each
can be given): the ``RAGMARK_LLM_*`` variable names, the ``[llm]`` table's model, the
keys of an ``llm`` component's table, and :func:`resolve`, the one place a flag, a table
and the environment become the settings a model is called with. The only module that
writes the variables' names."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any, Literal, get_args, get_origin

from pydantic import TypeAdapter, ValidationError
from pydantic.fields import FieldInfo

from ragmark.errors import ConfigError, validation_problems
from ragmark.llm.config import ENV, FLAG, TABLE, LLMSettings

ENV_PREFIX = "RAGMARK_LLM_"
SECRET = frozenset({"api_key_env", "prices"})
"""Fields whose value an error never shows (a key pasted by mistake; a long table)."""


@dataclass(frozen=True)
class EndpointField:
    """One field of the endpoint: its ``name`` (the config key), its declaration
    (``info``) and where it can be given (``on``: flag, env, table, component)."""

    name: str
    info: FieldInfo
    on: frozenset[str]

    @property
    def flag(self) -> str:
        return "--llm-" + self.name.replace("_", "-")

    @property
    def env(self) -> str:
        return ENV_PREFIX + self.name.upper()

    def origin(self, where: str) -> str:
        """How an error names where a value came from."""
        return {FLAG: self.flag, ENV: self.env, TABLE: f"[llm] {self.name}"}.get(
            where, self.name)


def _declared() -> tuple[EndpointField, ...]:
    out = []
    for name, info in LLMSettings.model_fields.items():
        extra = info.json_schema_extra if isinstance(info.json_schema_extra, dict) else {}
        on = extra.get("on") or []
        out.append(EndpointField(name, info, frozenset(str(w) for w in on)))  # type: ignore[union-attr]
    return tuple(out)


FIELDS = _declared()
BY_NAME = {f.name: f for f in FIELDS}


def given_on(where: str) -> tuple[EndpointField, ...]:
    """The fields a user can give ``where`` (FLAG, ENV, TABLE or COMPONENT)."""
    return tuple(f for f in FIELDS if where in f.on)


def env_var(name: str) -> str:
    """The environment variable of field ``name`` (which must have one)."""
    if ENV not in BY_NAME[name].on:
        raise KeyError(f"the LLM endpoint's {name!r} has no environment variable")
    return BY_NAME[name].env


BASE_URL_ENV = env_var("base_url")
MODEL_ENV = env_var("model")
SET_ENDPOINT = f"set {BASE_URL_ENV} and {MODEL_ENV}"
"""The end of a message telling a user how to name an endpoint in the environment."""


def read_env(environ: Mapping[str, str], scope: str = TABLE) -> dict[str, Any]:
    """The ``RAGMARK_LLM_*`` variables that are set (not blank) of the fields ``scope``
    (TABLE: the judges; COMPONENT: an llm generator or reranker) takes, as values of
    the fields' types; a value of the wrong type is a ConfigError naming the variable."""
    out: dict[str, Any] = {}
    for f in given_on(ENV):
        raw = environ.get(f.env, "").strip()
        if not raw or scope not in f.on:
            continue
        if f.info.annotation in (str, str | None):
            out[f.name] = raw
            continue
        try:
            out[f.name] = TypeAdapter[Any](f.info.annotation or str).validate_strings(raw)
        except ValidationError:
            raise ConfigError(f"{f.env}: expected {_kind(f.info.annotation)}, got "
                              f"{raw!r}") from None
    return out


def _kind(annotation: Any) -> str:
    """What a variable of this type must hold, for messages."""
    if get_origin(annotation) is Literal:
        return "one of " + ", ".join(map(str, get_args(annotation)))
    if annotation in (int, int | None):
        return "a whole number"
    return "a number" if annotation in (float, float | None) else "a value of its type"


def origins(layers: Mapping[str, Mapping[str, Any]]) -> dict[str, str]:
    """Field -> where its value came from, the later layers (FLAG, TABLE, ENV ...)
    winning: the names an error gives."""
    out: dict[str, str] = {}
    for where, values in layers.items():
        out.update({k: BY_NAME[k].origin(where) for k in values if k in BY_NAME})
    return out


def settings_error(e: ValidationError, origin: Mapping[str, str],
                   head: str = "LLM settings") -> str:
    """One line per problem, naming where the value came from (the flag, the ``[llm]``
    key, the variable, the component's key): the one formatter of an endpoint's errors."""
    parts = []
    for p in validation_problems(e, SECRET):
        field = str(p.loc[0]) if p.loc else ""
        shown = f" {p.shown}" if p.shown else ""
        parts.append(f"{origin.get(field, field)}{shown}: {p.msg}")
    return f"{head}: " + "; ".join(parts)


def resolve(given: Mapping[str, Any], environ: Mapping[str, str], *, scope: str = TABLE,
            origin: Mapping[str, str] | None = None, no_model: str = ""
            ) -> LLMSettings | None:
    """The settings a model is called with: ``given`` (flags over tables, merged by the
    caller) over the ``RAGMARK_LLM_*`` variables of the fields ``scope`` takes. None when
    no base URL is set anywhere; a ConfigError (``no_model`` its advice) when a base URL
    is set but no model, or a value is not allowed, naming where it came from."""
    env = read_env(environ, scope)
    values = {**env, **{k: v for k, v in given.items() if v is not None}}
    if not values.get("base_url"):
        return None
    if not values.get("model"):
        raise ConfigError(no_model or f"an LLM endpoint is set but no model: give "
                          f"--llm-model, [llm] model, or {MODEL_ENV}")
    where = {**origins({ENV: env}), **(origin or {})}
    try:
        return LLMSettings.model_validate(values)
    except ValidationError as e:
        raise ConfigError(settings_error(e, where)) from None


def endpoint_settings(component: str, **given: object) -> LLMSettings:
    """Settings of a component that calls a model behind an API other than the chat LLM
    (an embedding or rerank endpoint): ``base_url`` and ``model`` must be in its own
    config table (``RAGMARK_LLM_*`` names the chat model, not this one)."""
    given = {k: v for k, v in given.items() if v is not None}
    for key in ("base_url", "model"):
        if key not in given:
            raise ConfigError(f"the {component} needs '{key}' in its config table")
    try:
        return LLMSettings.model_validate(given)
    except ValidationError as e:
        raise ConfigError(settings_error(e, {}, head=component)) from None


def timed_out(s: LLMSettings) -> str:
    """Why a call timed out, with where to give it more time: a local model that is slow
    needs a longer timeout than a hosted one (a 1.5B model on two cores takes minutes
    for a judge call)."""
    t = BY_NAME["timeout"]
    return (f"timeout: no answer from {s.display_url} within {s.timeout:g} s (a slow "
            f"model needs more: {t.flag} SECONDS, {t.env} or timeout in the [llm] table)")
