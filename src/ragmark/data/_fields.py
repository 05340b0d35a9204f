"""Checking the fields of one input object; each failure names the place and the field."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from ragmark.data.files import Where, describe

if TYPE_CHECKING:
    from ragmark.data.leniency import Leniency

NON_EMPTY_STRING = "a non-empty string"
STRING_LIST = "a non-empty list of non-empty strings"


def as_object(value: Any, where: Where) -> dict[str, Any]:
    if not isinstance(value, dict):
        raise where.error(f"expected an object, got {describe(value)}")
    return value


def _get(obj: dict[str, Any], name: str, where: Where, expected: str, field: str) -> Any:
    if name not in obj:
        raise where.error(f"missing; expected {expected}", field=field)
    return obj[name]


def is_blank(value: Any) -> bool:
    return isinstance(value, str) and not value.strip()


def check_string(value: Any, where: Where, field: str | None, *, allow_empty: bool = False) -> str:
    if not isinstance(value, str) or (not allow_empty and is_blank(value)):
        expected = "a string" if allow_empty else NON_EMPTY_STRING
        raise where.error(f"expected {expected}, got {describe(value)}", field=field)
    return value


def get_string(
    obj: dict[str, Any],
    name: str,
    where: Where,
    *,
    allow_empty: bool = False,
    field: str | None = None,
) -> str:
    """A required string field; ``field`` is its name in messages when not ``name``."""
    expected = "a string" if allow_empty else NON_EMPTY_STRING
    value = _get(obj, name, where, expected, field or name)
    return check_string(value, where, field or name, allow_empty=allow_empty)


def get_optional_string(
    obj: dict[str, Any], name: str, where: Where, *, allow_empty: bool = False
) -> str | None:
    """An optional string field; ``None`` when it is absent or null."""
    value = obj.get(name)
    if value is None:
        return None
    return check_string(value, where, name, allow_empty=allow_empty)


def check_strings(value: Any, where: Where, field: str) -> tuple[str, ...]:
    if not isinstance(value, list) or not value:
        got = "an empty list" if value == [] else describe(value)
        raise where.error(f"expected {STRING_LIST}, got {got}", field=field)
    return tuple(check_string(v, where, f"{field}[{i}]") for i, v in enumerate(value))


def get_strings(obj: dict[str, Any], name: str, where: Where) -> tuple[str, ...]:
    """A required non-empty list of non-empty strings."""
    return check_strings(_get(obj, name, where, STRING_LIST, name), where, name)


def get_optional_strings(obj: dict[str, Any], name: str, where: Where) -> tuple[str, ...] | None:
    """An optional non-empty list of non-empty strings; ``None`` when absent or null."""
    value = obj.get(name)
    return None if value is None else check_strings(value, where, name)


def check_int(value: Any, where: Where, field: str) -> int:
    # bool is a subclass of int in Python, but true is not a number in JSON.
    if not isinstance(value, int) or isinstance(value, bool):
        raise where.error(f"expected an integer, got {describe(value)}", field=field)
    return value


def get_int(obj: dict[str, Any], name: str, where: Where) -> int:
    return check_int(_get(obj, name, where, "an integer", name), where, name)


INTEGER_IDS = "integer ids read as strings"


def check_id(value: Any, where: Where, field: str, lenient: Leniency) -> str:
    """An id: a non-empty string, or an integer (read as its decimal string, with a
    warning: ``"_id": 123`` is common in public collections and means ``"123"``)."""
    if isinstance(value, int) and not isinstance(value, bool):
        text = str(value)
        lenient.warn(INTEGER_IDS, f"{text} ({where.short()})",
                     where.error(f"expected {NON_EMPTY_STRING}, got the integer {text}", field))
        return text
    return check_string(value, where, field)
