"""Reading evaluation sets and logged outputs in other tools' formats as ragmark's own:
their files (CSV, a JSON document holding the rows, Parquet or a saved Hugging Face
dataset), the cells of their list columns, and each row through its format
(:mod:`ragmark.data.formats`, one module a format: RAGAS, DeepEval, LlamaIndex).

Each row becomes a ragmark item: the question; the expected answer; the gold contexts
as ``ground_truth_contexts``; and, where the row holds the system's response, its
``answer`` and retrieved ``contexts`` (logged outputs). Odd rows whose meaning is clear
load with a counted warning (a list column that is a plain string: one context; an empty
cell: none); a row without a question is an error naming the row and the field.
"""

from __future__ import annotations

import ast
import csv
import io
import json
import tokenize
from pathlib import Path
from typing import Any

from ragmark.data import formats
from ragmark.data.files import Where, base_suffix, describe, read_json, read_text
from ragmark.data.formats import RowFormat
from ragmark.data.leniency import Leniency
from ragmark.data.sets import read_items
from ragmark.errors import DataError

LIST_AS_TEXT = "a plain string where a list of texts belongs, read as one text"


def list_cell(text: str) -> list[str] | None:
    """A list of texts written in a CSV cell: a JSON list, a Python list literal
    (``['a', 'b']``, as pandas writes a list), or numpy's print of a string array
    (``['a' 'b']``, no commas, lines wrapped: as pandas writes an array column, which
    ``ast.literal_eval`` would glue into one text); None when the cell is none of them,
    or mixes them (``['a' 'b', 'c']``) so its texts cannot be told apart."""
    try:
        got = json.loads(text)
    except ValueError:
        got = None
    if isinstance(got, list) and all(isinstance(x, str) for x in got):
        return got
    try:
        tokens = [t for t in tokenize.generate_tokens(io.StringIO(text).readline)
                  if t.type not in (tokenize.NL, tokenize.NEWLINE, tokenize.ENDMARKER,
                                    tokenize.INDENT, tokenize.DEDENT)]
    except (tokenize.TokenError, SyntaxError):
        return None
    if len(tokens) < 2 or tokens[0].string != "[" or tokens[-1].string != "]":
        return None
    items: list[list[tokenize.TokenInfo]] = [[]]
    for t in tokens[1:-1]:
        if t.type == tokenize.OP and t.string == ",":
            items.append([])
        elif t.type == tokenize.STRING:
            items[-1].append(t)
        else:
            return None  # not a list of string literals
    if items[-1] == [] and len(items) > 1:
        items.pop()  # a trailing comma
    if len(items) == 1:  # no comma: numpy's form, each literal one text
        strings = items[0]
    elif all(len(group) == 1 for group in items):  # a Python list literal
        strings = [group[0] for group in items]
    else:
        return None  # adjacent literals beside commas: glued or separate?
    try:
        out = [ast.literal_eval(t.string) for t in strings]
    except (ValueError, SyntaxError):
        return None
    return out if all(isinstance(x, str) for x in out) else None


def cell_list(v: Any, where: Where, name: str, lenient: Leniency, sep: str | None = None
               ) -> list[str] | None:
    """A list column: a list, a list literal in a CSV cell, texts joined by ``sep``
    (DeepEval's CSV and JSONL join them with ``|``), a plain string (one text, counted),
    empty (none)."""
    if v is None or (isinstance(v, float) and v != v) or v == "":
        return None
    if isinstance(v, list):
        bad = next((x for x in v if not isinstance(x, str)), None)
        if bad is not None:
            raise where.error(f"expected a list of strings, got an item {describe(bad)}", name)
        return list(v)
    if isinstance(v, str):
        text = v.strip()
        if text.startswith("[") and text.endswith("]"):
            got = list_cell(text)
            if got is not None:
                return got
            if sep is None:
                raise where.error("a list cell that cannot be read as a list of texts "
                                  "(expected a JSON list, a Python list literal, or numpy's "
                                  "print of an array: ['first' 'second']), got "
                                  f"{describe(v)}", name)
        if sep is not None:
            return [t for t in v.split(sep) if t.strip()]
        lenient.warn(LIST_AS_TEXT, f"{name} ({where.short()})",
                     where.error("expected a list of texts, got a plain string", name))
        return [v]
    raise where.error(f"expected a list of strings, got {describe(v)}", name)


def cell_text(v: Any, where: Where, name: str) -> str | None:
    """A text cell: None when empty."""
    if v is None or (isinstance(v, float) and v != v) or v == "":
        return None
    if not isinstance(v, str):
        raise where.error(f"expected a string, got {describe(v)}", name)
    return v


def native(fmt: RowFormat, items: list[tuple[Where, Any]], lenient: Leniency
           ) -> list[tuple[Where, dict[str, Any]]]:
    """The rows of a foreign format as ragmark items (see the module docstring)."""
    out = []
    for where, row in items:
        if not isinstance(row, dict):
            raise where.error(f"expected an object, got {describe(row)}")
        out.append((where, fmt.row(row, where, lenient)))
    return out


def item_of(fmt: RowFormat, row: dict[str, Any], where: Where, q_key: str,
            expected: str | None, gold: list[str] | None) -> dict[str, Any]:
    """A row of ``fmt`` as a ragmark item: its question (at ``q_key``), ``id``, and the
    expected answer and gold contexts its format read."""
    question = cell_text(row.get(q_key), where, q_key)
    if question is None and q_key not in row:
        has = sorted(row)
        shown = ", ".join(map(repr, has[:8])) + (f" and {len(has) - 8} more" if len(has) > 8
                                                 else "")
        raise where.error(f"no question: read as {fmt.title}, whose question is "
                          f"{fmt.question}; the row has {shown or 'no field'} (is "
                          "the input format right?)", q_key)
    if question is None:
        raise where.error("expected the question, a non-empty string", q_key)
    item: dict[str, Any] = {"question": question}
    if row.get("id") is not None:
        item["id"] = row["id"]
    if expected is not None:
        item["expected_answer"] = expected
    if gold:
        item["ground_truth_contexts"] = gold
    return item


def with_logged(item: dict[str, Any], row: dict[str, Any], where: Where, lenient: Leniency,
                answer_key: str, ctx_key: str, sep: str | None = None) -> dict[str, Any]:
    """``item`` with the answer its row logged (at ``answer_key``) and the contexts it
    was made from (at ``ctx_key``; texts joined by ``sep`` in a cell), when it has one."""
    answer = cell_text(row.get(answer_key), where, answer_key)
    if answer is None:
        return item
    return {**item, "answer": answer,
            "contexts": cell_list(row.get(ctx_key), where, ctx_key, lenient, sep) or []}


def read_foreign(path: Path, encoding: str | None = None, data: Any = None
                 ) -> list[tuple[Where, Any]] | None:
    """The rows of a CSV file (each row an object, list columns as their text) or of a
    JSON document holding them (LlamaIndex's ``examples``, DeepEval's ``goldens`` or
    ``test_cases``); None for any other file (a JSON list or JSONL: ragmark's reader)."""
    suffix = base_suffix(path)
    if suffix == ".csv":
        text = read_text(path, encoding)
        reader = csv.DictReader(io.StringIO(text))
        # each row named by the line it starts on (a quoted cell may hold line breaks)
        rows = []
        start = reader.line_num + 1 if reader.fieldnames else 1  # after the header
        for r in reader:
            rows.append((Where(str(path), line=start), dict(r)))
            start = reader.line_num + 1
        if not rows:
            raise DataError("no rows (the CSV file is empty or has only a header)",
                            file=str(path))
        return rows
    if suffix == ".json":
        data = read_json(path, encoding) if data is None else data
        if isinstance(data, list) and data:
            return [(Where(str(path), item=i), v) for i, v in enumerate(data)]
        if isinstance(data, dict) and isinstance(data.get("examples"), list):
            return [(Where(str(path), item=f"examples[{i}]"), v)
                    for i, v in enumerate(data["examples"])]
        if isinstance(data, dict) and isinstance(data.get("test_cases"), list):
            return [(Where(str(path), item=f"test_cases[{i}]"), v)
                    for i, v in enumerate(data["test_cases"])]
        if isinstance(data, dict) and isinstance(data.get("goldens"), list):
            return [(Where(str(path), item=f"goldens[{i}]"), v)
                    for i, v in enumerate(data["goldens"])]
    return None


def is_arrow(path: Path) -> bool:
    """A Parquet file, or a folder ``datasets.Dataset.save_to_disk`` wrote (``state.json``
    and its ``.arrow`` files), as RAGAS's ``to_hf_dataset`` gives them."""
    if path.is_dir():
        return (path / "state.json").is_file() and any(path.glob("*.arrow"))
    return path.suffix.lower() == ".parquet"


def read_arrow(path: Path) -> list[tuple[Where, Any]]:
    """The rows of a Parquet file or a saved Hugging Face dataset folder (needs
    pyarrow: ``ragmark-eval[arrow]``)."""
    try:
        import pyarrow as pa
        import pyarrow.parquet as pq
    except ImportError:
        raise DataError("reading Parquet or a saved Hugging Face dataset needs pyarrow: "
                        "pip install 'ragmark-eval[arrow]'", file=str(path)) from None
    try:
        if path.is_dir():
            state = read_json(path / "state.json")
            names = [f["filename"] for f in state.get("_data_files", [])
                     if isinstance(f, dict) and "filename" in f] if isinstance(
                         state, dict) else []
            rows: list[Any] = []
            for name in names or sorted(p.name for p in path.glob("*.arrow")):
                with pa.memory_map(str(path / name)) as source:
                    rows += pa.ipc.open_stream(source).read_all().to_pylist()
        else:
            rows = pq.read_table(str(path)).to_pylist()
    except (OSError, pa.ArrowException) as e:
        raise DataError(f"cannot read it as Arrow/Parquet: {e}", file=str(path)) from None
    if not rows:
        raise DataError("no rows", file=str(path))
    return [(Where(str(path), item=i), r) for i, r in enumerate(rows)]


def read_rows(path: Path, lenient: Leniency, data: Any = None
              ) -> tuple[list[tuple[Where, Any]], str | None]:
    """The items of a set or outputs file in any format read here, as ragmark items,
    and the foreign format they were in (None: ragmark's own); ``data``: the JSON file
    already parsed."""
    items = (read_arrow(path) if is_arrow(path) else
             read_foreign(path, lenient.encoding, data) or read_items(path, lenient.encoding))
    given = lenient.input_format
    fmt = formats.detect(_keys(items), path) if given is None else (
        None if given == formats.NATIVE else formats.which(given))
    if fmt is None:
        if base_suffix(path) == ".csv":
            raise DataError("a CSV file whose columns are not those of a format ragmark "
                            f"reads ({formats.telling_fields()})", file=str(path))
        return items, None
    return list(native(fmt, items, lenient)), fmt.name


def _keys(items: list[tuple[Where, Any]]) -> set[str]:
    """The field names of the first rows, that tell their format."""
    keys: set[str] = set()
    for _, v in items[:50]:
        if isinstance(v, dict):
            keys |= set(v)
    return keys
