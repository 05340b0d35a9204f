"""Reading files, for every part of ragmark that reads one: UTF-8 (with an optional BOM)
or a named fallback encoding, JSON with positions, JSONL and TSV lines with line numbers
(:func:`iter_jsonl`, :func:`iter_lines`: the one reader of a file of lines), a repeated
JSON key refused, gzip-compressed files (``.gz``) read as a stream. Every failure is a
DataError naming the file and line."""

from __future__ import annotations

import gzip
import json
import zlib
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

    def short(self) -> str:
        """The file's name and the place, for warnings: ``corpus.jsonl line 4``."""
        return f"{Path(self.file).name} {self.ref()}"


def missing_error(path: Path, what: str = "file or folder") -> DataError:
    return DataError(f"no such {what}", file=str(path))


def is_gzip(path: Path) -> bool:
    return path.suffix.lower() == ".gz"


def base_suffix(path: Path) -> str:
    """The suffix that says the format: ``.jsonl`` for ``x.jsonl`` and ``x.jsonl.gz``."""
    return (path.with_suffix("") if is_gzip(path) else path).suffix.lower()


def _open(path: Path) -> IO[bytes]:
    try:
        if is_gzip(path):
            return gzip.open(path, "rb")  # type: ignore[return-value]
        return path.open("rb")
    except FileNotFoundError:
        raise missing_error(path, "file") from None
    except IsADirectoryError:
        raise DataError("expected a file, found a folder", file=str(path)) from None
    except PermissionError:
        raise DataError("cannot read the file: permission denied", file=str(path)) from None
    except OSError as exc:
        raise DataError(f"cannot read the file: {exc.strerror}", file=str(path)) from None


class NotUTF8Error(DataError):
    """A file that is not UTF-8; ``offset`` is the byte where decoding failed."""

    offset: int = 0


def _utf8_error(file: str, line: int, offset: int, byte: int, start: bytes) -> DataError:
    utf16 = " (it looks like UTF-16)" if start[:2] in (b"\xff\xfe", b"\xfe\xff") else ""
    e = NotUTF8Error(
        f"not valid UTF-8: byte 0x{byte:02x} at offset {offset}; save the file as UTF-8"
        f"{utf16}, or give --encoding NAME",
        file=file,
        line=line,
    )
    e.offset = offset
    return e


def _read_error(path: Path, exc: Exception) -> DataError:
    if isinstance(exc, EOFError | gzip.BadGzipFile | zlib.error):
        return DataError(f"not a readable gzip file: {exc}", file=str(path))
    reason = getattr(exc, "strerror", None) or str(exc)
    return DataError(f"cannot read the file: {reason}", file=str(path))


_GZ_ERRORS = (OSError, EOFError, zlib.error)


def read_text(path: Path, encoding: str | None = None) -> str:
    """The text of a UTF-8 file (a BOM at the start is dropped); a file that is not UTF-8
    is decoded with ``encoding`` when one is given, else it is a DataError giving the
    byte offset."""
    with _open(path) as handle:
        try:
            data = handle.read()
        except _GZ_ERRORS as exc:
            raise _read_error(path, exc) from None
    skip = len(BOM) if data.startswith(BOM) else 0
    try:
        return data[skip:].decode("utf-8")
    except UnicodeDecodeError as exc:
        if encoding is not None:
            return _decode(data, encoding, path)
        offset = skip + exc.start
        line = data.count(b"\n", 0, offset) + 1
        raise _utf8_error(str(path), line, offset, data[offset], data[:2]) from None


def _decode(data: bytes, encoding: str, path: Path, line: int | None = None) -> str:
    try:
        return data.decode(encoding)
    except UnicodeDecodeError as exc:
        raise DataError(f"not valid {encoding} either: byte 0x{data[exc.start]:02x} at "
                        f"offset {exc.start}", file=str(path), line=line) from None


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


def read_json(path: Path, encoding: str | None = None) -> Any:
    """The parsed content of a JSON file; duplicate keys in an object are an error."""
    text = read_text(path, encoding)
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


def iter_lines(path: Path, encoding: str | None = None) -> Iterator[tuple[int, str]]:
    """(line number, text) for every line that is not blank, read as a stream; a line
    that is not UTF-8 is decoded with ``encoding`` when one is given."""
    file = str(path)
    with _open(path) as handle:
        offset = 0
        head = b""
        for number, raw in enumerate(_lines(handle, path), start=1):
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
                if encoding is None:
                    raise _utf8_error(file, number, start + exc.start, raw[exc.start],
                                      head) from None
                text = _decode(raw, encoding, path, number)
            text = text.rstrip("\r\n")
            if text.strip():
                yield number, text


def _lines(handle: IO[bytes], path: Path) -> Iterator[bytes]:
    try:
        yield from handle
    except _GZ_ERRORS as exc:
        raise _read_error(path, exc) from None


def iter_jsonl(path: Path, encoding: str | None = None) -> Iterator[tuple[Where, Any]]:
    """(place, parsed value) for every non-blank line of a JSON Lines file."""
    file = str(path)
    for number, text in iter_lines(path, encoding):
        where = Where(file, line=number)
        yield where, json_line(text, where)


def json_line(text: str, where: Where) -> Any:
    """One line of a JSON Lines file, parsed; a DataError naming the place when it is
    not JSON or repeats a key."""
    try:
        return json.loads(text, object_pairs_hook=_no_duplicate_keys(where.file))
    except json.JSONDecodeError as exc:
        raise _json_error(exc, where) from None
    except DataError as exc:
        raise where.error(exc.reason) from None


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
