"""ragmark's argument rules (``tool_args_match: rules``) against the Berkeley Function
Calling Leaderboard's own checker (``bfcl-eval``'s AST checker) on BFCL's public
categories where the semantics are the same: simple (Python), multiple and parallel.

    python benchmarks/bfcl_args.py --bfcl-python /path/to/venv/bin/python [--seed 0]

bfcl-eval pins numpy 1.26.4 and a dozen provider SDKs, so it runs as the oracle in an
environment of its own (``python -m venv V && V/bin/pip install bfcl-eval soundfile``);
its data (BFCL v4's questions with their function schemas, and the possible answers;
Apache-2.0) is read from that installation, not committed.

For every item, calls are made from its possible answers, each then judged by both: the
first acceptable value of every argument (an optional one left out); the same with every
string restyled (upper case, spaces and punctuation BFCL ignores); one value wrong; one
required argument dropped; an argument nobody declared added; a number given as a
string; a whole number given as the other numeric type (5 as 5.0, 2.0 as 2); and, for
parallel items, the calls in reverse order. ragmark judges them as an
item expecting the possible answer's calls with ``tool_args_match: rules``
(``trajectory_unordered``: the same calls in any order; a simple or multiple item
expects one call); BFCL with ``ast_checker``. Reported: the share of verdicts on which
they agree, per category and kind of call, and every disagreement with BFCL's reason.
The difference by design: BFCL checks each value's type against the function's schema,
which an evaluation item does not give, so ragmark compares numbers by value (5 and
5.0 are equal) where BFCL refuses an integer parameter given 5.0.
"""

from __future__ import annotations

import argparse
import json
import random
import subprocess
import sys
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(Path(__file__).resolve().parent))
from _env import RESULTS, header_lines, machine_info, md_table, write_results  # noqa: E402

CATEGORIES = {"simple": "BFCL_v4_simple_python.json", "multiple": "BFCL_v4_multiple.json",
              "parallel": "BFCL_v4_parallel.json"}
MODEL = "gpt-5-mini-2025-08-07"
"""A model whose function names BFCL's checker keeps as they are (dots too)."""

ORACLE = r"""
import json, sys
from bfcl_eval.constants.enums import Language
from bfcl_eval.eval_checker.ast_eval.ast_checker import ast_checker
for line in sys.stdin:
    c = json.loads(line)
    got = ast_checker(c["functions"], c["output"], c["answer"], Language.PYTHON,
                      c["category"], c["model"])
    print(json.dumps([bool(got["valid"]), got.get("error_type", "")]), flush=True)
"""


def _data(python: str) -> Path:
    got = subprocess.run([python, "-c", "import bfcl_eval, os; "
                          "print(os.path.dirname(bfcl_eval.__file__))"],
                         capture_output=True, text=True, check=True)
    return Path(got.stdout.strip()) / "data"


def _lines(path: Path) -> list[dict[str, Any]]:
    return [json.loads(x) for x in path.read_text().splitlines() if x.strip()]


def _restyled(v: Any) -> Any:
    if isinstance(v, str):
        return v.upper().replace(" ", " _ ") if v.strip() else v
    if isinstance(v, list):
        return [_restyled(x) for x in v]
    return v


def _wrong(v: Any) -> Any:
    if isinstance(v, bool):
        return not v
    if isinstance(v, int | float):
        return v + 7
    if isinstance(v, str):
        return v + " zzz"
    if isinstance(v, list):
        return [*v, "zzz"]
    if isinstance(v, dict):
        return {**v, "zzz": 1}
    return "zzz"


def _first(answer: dict[str, list[Any]]) -> dict[str, Any]:
    return {k: next(v for v in opts if v != "") for k, opts in answer.items()
            if any(v != "" for v in opts)}


def _variants(answers: list[dict[str, Any]], parallel: bool, rng: random.Random
              ) -> list[tuple[str, list[dict[str, Any]]]]:
    """(kind, the calls made) for one item's possible answers."""
    calls = [(name, _first(args)) for a in answers for name, args in a.items()]
    out = [("first values", calls),
           ("restyled strings", [(n, {k: _restyled(v) for k, v in a.items()})
                                 for n, a in calls])]
    n, args = calls[0]
    if args:
        key = rng.choice(sorted(args))
        out.append(("one value wrong", [(n, {**args, key: _wrong(args[key])}), *calls[1:]]))
        numbers = [k for k, v in args.items() if isinstance(v, int | float)
                   and not isinstance(v, bool)]
        if numbers:
            k = rng.choice(numbers)
            out.append(("a number as a string", [(n, {**args, k: str(args[k])}), *calls[1:]]))
        whole = [k for k in numbers if float(args[k]).is_integer()]
        if whole:  # 5 as 5.0, 2.0 as 2: a schema's integer or float type, not its value
            k = rng.choice(whole)
            other = float(args[k]) if isinstance(args[k], int) else int(args[k])
            out.append(("a whole number as the other type",
                        [(n, {**args, k: other}), *calls[1:]]))
    required = [k for k, opts in answers[0][n].items() if "" not in opts]
    if required:
        drop = rng.choice(required)
        out.append(("a required argument dropped",
                    [(n, {k: v for k, v in args.items() if k != drop}), *calls[1:]]))
    out.append(("an undeclared argument", [(n, {**args, "undeclared_arg": 1}), *calls[1:]]))
    if parallel and len(calls) > 1:
        out.append(("in reverse order", list(reversed(calls))))
    return [(kind, [{name: a} for name, a in made]) for kind, made in out]


def _ragmark(answers: list[dict[str, Any]], made: list[dict[str, Any]]) -> bool:
    from ragmark.case import Case, Output
    from ragmark.metrics.names import catalogue
    from ragmark.trajectory import Call, Expected, Trajectory, Turn
    from ragmark.types import Sample

    expected = Expected(tuple(Call(n, a) for x in answers for n, a in x.items()), "rules")
    calls = tuple(Call(n, a) for x in made for n, a in x.items())
    case = Case(Sample("q", "q", expected_calls=expected), "a",
                output=Output("a", trajectory=Trajectory((Turn("", calls),))))
    return catalogue()["trajectory_unordered"].compute(case).value == 1.0  # type: ignore[misc]


def _grouped(differ: list[Any]) -> dict[tuple[str, bool, bool, str], list[str]]:
    out: dict[tuple[str, bool, bool, str], list[str]] = {}
    for c, mine, valid, why in differ:
        out.setdefault((c["kind"], mine, valid, why), []).append(c["id"])
    return out


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--bfcl-python", required=True,
                    help="The Python of an environment with bfcl-eval installed.")
    ap.add_argument("--seed", type=int, default=0)
    ap.add_argument("--out", default=str(RESULTS / "bfcl_args.md"))
    args = ap.parse_args()
    data = _data(args.bfcl_python)
    rng = random.Random(args.seed)
    cases, ours = [], []
    for category, file in CATEGORIES.items():
        questions = {q["id"]: q for q in _lines(data / file)}
        for a in _lines(data / "possible_answer" / file):
            q = questions[a["id"]]
            for kind, made in _variants(a["ground_truth"], category == "parallel", rng):
                cases.append({"category": category, "kind": kind, "id": a["id"],
                              "functions": q["function"], "output": made,
                              "answer": a["ground_truth"], "model": MODEL})
                ours.append(_ragmark(a["ground_truth"], made))
    oracle = subprocess.run([args.bfcl_python, "-c", ORACLE], capture_output=True,
                            text=True, check=True,
                            input="\n".join(json.dumps(c) for c in cases) + "\n")
    theirs = [json.loads(x) for x in oracle.stdout.splitlines()]
    assert len(theirs) == len(cases)
    by: dict[tuple[str, str], list[int]] = {}
    differ = []
    for c, mine, (valid, why) in zip(cases, ours, theirs, strict=True):
        cell = by.setdefault((c["category"], c["kind"]), [0, 0, 0])
        cell[0] += 1
        cell[1] += mine == valid
        cell[2] += valid
        if mine != valid:
            differ.append((c, mine, valid, why))
    agree = sum(v[1] for v in by.values())
    kept = [v for (_, kind), v in by.items() if kind != "a whole number as the other type"]
    rest = (sum(v[0] for v in kept), sum(v[1] for v in kept))
    info = machine_info(["ragmark", "agentevals"])
    info["bfcl-eval"] = subprocess.run(
        [args.bfcl_python, "-c", "from importlib.metadata import version; "
         "print(version('bfcl-eval'))"], capture_output=True, text=True).stdout.strip()
    lines = header_lines("Argument rules against the BFCL checker", info,
                         "python benchmarks/bfcl_args.py --bfcl-python BFCL_VENV/bin/python"
                         + (f" --seed {args.seed}" if args.seed else ""))
    lines += [
        f"{len(cases)} calls made from the possible answers of BFCL v4's simple (Python), "
        "multiple and parallel categories (Apache-2.0, read from the bfcl-eval "
        "installation), each judged by BFCL's `ast_checker` (the oracle) and by ragmark's "
        "`trajectory_unordered` under `tool_args_match: rules`.",
        "",
        f"Agreement: {agree} of {len(cases)} verdicts ({agree / len(cases):.4f}); "
        f"without the calls that give a whole number as the other numeric type (the "
        f"difference by design: BFCL checks the schema's type, an item gives none): "
        f"{rest[1]} of {rest[0]} ({rest[1] / max(rest[0], 1):.4f}).",
        "",
        *md_table(["category", "calls made", "verdicts", "agree", "BFCL: valid"],
                  [[cat, kind, str(n), f"{a} ({a / n:.3f})", str(v)]
                   for (cat, kind), (n, a, v) in by.items()]),
        "",
        f"Disagreements ({len(differ)}), by kind of call and BFCL's reason:",
        "",
        *md_table(["calls made", "ragmark", "BFCL", "BFCL's reason", "verdicts", "e.g."],
                  [[kind, str(m), str(v), why, str(len(ids)), ", ".join(ids[:3])]
                   for (kind, m, v, why), ids in _grouped(differ).items()]),
    ]
    write_results(Path(args.out), lines)
    print("\n".join(lines[-40:]))


if __name__ == "__main__":
    main()
