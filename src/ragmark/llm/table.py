"""The ``[llm]`` table of a config file: the LLM endpoint its judges (and its ``llm``
generator and reranker) use, every field optional. Made from the endpoint's declaration
(:class:`~ragmark.llm.config.LLMSettings`): its keys are the fields declared on TABLE,
with their types and limits."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from pydantic import BaseModel, ConfigDict, Field, create_model, field_validator
from pydantic.fields import FieldInfo

from ragmark.llm.config import COMPONENT, TABLE, VALIDATORS
from ragmark.llm.fields import given_on


class _Table(BaseModel):
    """The ``[llm]`` table: the endpoint of the judges, and of the ``llm`` generator and
    reranker for what their own tables do not give. Command-line flags override it; it
    overrides ``RAGMARK_LLM_*``. ``prices``: model -> [prompt, completion] $ per million
    tokens."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    def values(self) -> dict[str, Any]:
        """The keys that are set."""
        return self.model_dump(exclude_none=True)

    def endpoint(self) -> dict[str, Any]:
        """The keys that are set and an ``llm`` component takes (the batch settings, the
        judges' answer cap and the window they are fitted in are the judges' alone: the
        generator and rerankers stay interactive)."""
        keys = {f.name for f in given_on(COMPONENT)}
        return {k: v for k, v in self.values().items() if k in keys}


def _optional(info: FieldInfo) -> tuple[Any, FieldInfo]:
    copy = FieldInfo.merge_field_infos(info, default=None, description=info.description)
    copy.json_schema_extra = None
    kind: Any = info.annotation
    return kind | None, copy


if TYPE_CHECKING:
    LLMTable = _Table
else:
    LLMTable = create_model(
        "LLMTable", __base__=_Table, __doc__=_Table.__doc__,
        __validators__={f"_check_{name}": field_validator(name)(
            classmethod(lambda cls, v, _c=check: _c(v))) for name, check in VALIDATORS.items()},
        **{f.name: _optional(f.info) for f in given_on(TABLE)})


class SimulatorTable(LLMTable):
    """A config's ``[simulator]`` table (``ragmark simulate``'s simulated user): the
    ``[llm]`` table's keys, set over the judges' endpoint, and its sampling
    ``temperature``."""

    temperature: float | None = Field(default=None, ge=0)
