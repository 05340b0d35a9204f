"""Reading files for the loaders: UTF-8 (with an optional BOM), JSON with positions,
JSONL and TSV lines with line numbers. Every failure is a DataError naming the file."""

from __future__ import annotations

import json
from collections.abc import Iterator, Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import IO, Any

from ragmark.errors import DataError

BOM = b"\xef\xbb\xbf"


@dataclass(frozen=True, slots=True)
class Where:
    """A place in an input file: the file, and an item index or key, or a line number."""

    file: str
    item: int | str | None = None
    line: int | None = None

    def error(self, message: str, field: str | None = None) -> DataError:
        return DataError(message, file=self.file, item=self.item, line=self.line, field=field)

    def ref(self) -> str:
        """How another message refers to this place: ``item 0`` or ``line 3``."""
        if self.line is not None:
            return f"line {self.line}"
        return f"item {self.item}"


def missing_error(path: Path, what: str = "file or folder") -> DataError:
    return DataError(f"no such {what}", file=str(path))


def _open(path: Path) -> IO[bytes]:
    try:
        return path.open("rb")
    except FileNotFoundError:
        raise missing_error(path, "file") from None
    except IsADirectoryError:
        raise DataError("expected a file, found a folder", file=str(path)) from None
    except PermissionError:
        raise DataError("cannot read the file: permission denied", file=str(path)) from None
    except OSError as exc:
        raise DataError(f"cannot read the file: {exc.strerror}", file=str(path)) from None


def _utf8_error(file: str, line: int, offset: int, byte: int, start: bytes) -> DataError:
    utf16 = " (it looks like UTF-16)" if start[:2] in (b"\xff\xfe", b"\xfe\xff") else ""
    return DataError(
        f"not valid UTF-8: byte 0x{byte:02x} at offset {offset}; save the file as UTF-8{utf16}",
        file=file,
        line=line,
    )


def read_text(path: Path) -> str:
    """The text of a UTF-8 file; a BOM at the start is dropped."""
    with _open(path) as handle:
        try:
            data = handle.read()
        except OSError as exc:
            raise DataError(f"cannot read the file: {exc.strerror}", file=str(path)) from None
    skip = len(BOM) if data.startswith(BOM) else 0
    try:
        return data[skip:].decode("utf-8")
    except UnicodeDecodeError as exc:
        offset = skip + exc.start
        line = data.count(b"\n", 0, offset) + 1
        raise _utf8_error(str(path), line, offset, data[offset], data[:2]) from None


def _no_duplicate_keys(file: str) -> Any:
    def hook(pairs: list[tuple[str, Any]]) -> dict[str, Any]:
        obj = dict(pairs)
        if len(obj) != len(pairs):
            seen: set[str] = set()
            for key, _ in pairs:
                if key in seen:
                    raise DataError(f"duplicate key {quote(key)} in an object", file=file)
                seen.add(key)
        return obj

    return hook


def _json_error(exc: json.JSONDecodeError, where: Where, hint: str = "") -> DataError:
    message = f"invalid JSON: {exc.msg} at column {exc.colno}{hint}"
    return DataError(message, file=where.file, item=where.item, line=where.line)


def read_json(path: Path) -> Any:
    """The parsed content of a JSON file; duplicate keys in an object are an error."""
    text = read_text(path)
    file = str(path)
    if not text.strip():
        raise DataError("the file is empty", file=file)
    try:
        return json.loads(text, object_pairs_hook=_no_duplicate_keys(file))
    except json.JSONDecodeError as exc:
        hint = ""
        if exc.msg == "Extra data" and path.suffix.lower() == ".json":
            hint = " (for one JSON object a line, name the file .jsonl)"
        raise _json_error(exc, Where(file, line=exc.lineno), hint) from None


def iter_lines(path: Path) -> Iterator[tuple[int, str]]:
    """(line number, text) for every line that is not blank, read as a stream."""
    file = str(path)
    with _open(path) as handle:
        offset = 0
        head = b""
        for number, raw in enumerate(handle, start=1):
            if number == 1:
                head = raw[:2]
            start = offset
            offset += len(raw)
            if number == 1 and raw.startswith(BOM):
                raw = raw[len(BOM) :]
                start += len(BOM)
            try:
                text = raw.decode("utf-8")
            except UnicodeDecodeError as exc:
                raise _utf8_error(file, number, start + exc.start, raw[exc.start], head) from None
            text = text.rstrip("\r\n")
            if text.strip():
                yield number, text


def iter_jsonl(path: Path) -> Iterator[tuple[Where, Any]]:
    """(place, parsed value) for every non-blank line of a JSON Lines file."""
    file = str(path)
    hook = _no_duplicate_keys(file)
    for number, text in iter_lines(path):
        where = Where(file, line=number)
        try:
            value = json.loads(text, object_pairs_hook=hook)
        except json.JSONDecodeError as exc:
            raise _json_error(exc, where) from None
        except DataError as exc:
            raise where.error(exc.reason) from None
        yield where, value


def quote(text: str) -> str:
    """An id or a name in a message, quoted in full."""
    return json.dumps(text, ensure_ascii=False)


def kind_of(value: Any) -> str:
    """The kind of a JSON value in words (``a string``, ``an object``...), for errors about
    values that may be long or private, such as a service's response."""
    if value is None:
        return "null"
    if isinstance(value, bool):
        return "a boolean"
    if isinstance(value, str):
        return "an empty string" if not value.strip() else "a string"
    if isinstance(value, int | float):
        return "a number"
    if isinstance(value, list | tuple):
        return "a list"
    if isinstance(value, Mapping):
        return "an object"
    return f"a {type(value).__name__}"


def describe(value: Any) -> str:
    """A short rendering of a JSON value for an error message."""
    if value is None:
        return "null"
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, int | float):
        return json.dumps(value)
    if isinstance(value, str):
        short = value if len(value) <= 40 else value[:37] + "..."
        return json.dumps(short, ensure_ascii=False)
    if isinstance(value, list | tuple):
        return "a list"
    if isinstance(value, dict):
        return "an object"
    return type(value).__name__
