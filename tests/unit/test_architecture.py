"""The shape of the house (issue 21), measured on every run of the suite with the import
graph of src/ragmark (tests/support/import_graph.py): no import circle; the imports that
run up a layer and the package pairs that import each other: none today (issue 21 allows
at most 5 imports up a layer and no pair)."""

from __future__ import annotations

import ast
import dataclasses
import inspect
import re
from pathlib import Path

import pytest
from support import import_graph as ig

from ragmark.metrics.names import split_names
from ragmark.results.model import Aggregate, QueryRecord, RunReport

UPWARD_AT_MOST = 0
MUTUAL_AT_MOST = 0
THIN_COMMANDS = {"ragmark.cli.run": "run_cmd", "ragmark.cli.compare": "compare_cmd",
                 "ragmark.cli.label": "label_cmd", "ragmark.cli.monitor": "monitor_cmd",
                 "ragmark.cli.testset": "testset_cmd",
                 "ragmark.cli.judge_eval": "judge_eval_cmd",
                 "ragmark.cli.annotate": "annotate_cmd", "ragmark.cli.duel": "duel_cmd",
                 "ragmark.cli.probe": "probe_cmd", "ragmark.cli.simulate": "simulate_cmd"}
"""Commands that are adapters of a plan (parse, build the plan, call, print, exit code);
their Request and Plan live in ragmark.plan (issue 34: monitor, testset and judge-eval
too)."""
PLANNED = {"ragmark.cli.monitor": "ragmark.plan.monitor",
           "ragmark.cli.testset": "ragmark.plan.testset",
           "ragmark.cli.judge_eval": "ragmark.plan.judge_eval",
           "ragmark.cli.label": "ragmark.plan.label",
           "ragmark.cli.annotate": "ragmark.plan.annotate",
           "ragmark.cli.duel": "ragmark.plan.duel",
           "ragmark.cli.simulate": "ragmark.plan.simulate",
           # a capability on its own floor plans in its own package (issue 52)
           "ragmark.cli.probe": "ragmark.probe.plan"}
THIN_AT_MOST = 30  # lines of such a command's function, its docstring included


def _functions(module: str) -> dict[str, ast.FunctionDef | ast.AsyncFunctionDef]:
    tree = ast.parse(ig.modules()[module].read_text())
    return {n.name: n for n in ast.walk(tree)
            if isinstance(n, ast.FunctionDef | ast.AsyncFunctionDef)}


CLI_FUNCTION_AT_MOST = 60  # lines of any function of ragmark.cli


def _all_functions() -> list[tuple[str, ast.FunctionDef | ast.AsyncFunctionDef]]:
    return [(module, fn) for module in ig.modules() for fn in _functions(module).values()]


def test_no_function_below_the_command_line_takes_a_dry_run_flag():
    """A dry run is :func:`ragmark.plan.estimate` (and the runner's ``estimate_run``),
    not a flag threaded through the stages."""
    flagged = [f"{m}.{fn.name}" for m, fn in _all_functions() if not m.startswith(
        "ragmark.cli") and "dry_run" in {a.arg for a in (*fn.args.posonlyargs, *fn.args.args,
                                                         *fn.args.kwonlyargs)}]
    assert flagged == []


PARAMETERS_AT_MOST = 8
"""Parameters of any function but a frozen value's constructor (issue 21): what travels
together is one value (a Task, a Trial, a table, an endpoint)."""


def _frozen_dataclass(cls: ast.ClassDef) -> bool:
    return any(isinstance(d, ast.Call) and getattr(d.func, "id", "") == "dataclass"
               and any(k.arg == "frozen" and getattr(k.value, "value", False) is True
                       for k in d.keywords) for d in cls.decorator_list)


def test_no_function_takes_more_than_eight_parameters():
    over = []
    for module, path in ig.modules().items():
        tree = ast.parse(path.read_text())
        constructors = {id(f) for c in ast.walk(tree)
                        if isinstance(c, ast.ClassDef) and _frozen_dataclass(c)
                        for f in c.body if isinstance(f, ast.FunctionDef)
                        and any(getattr(d, "id", "") == "classmethod" for d in f.decorator_list)}
        for fn in ast.walk(tree):
            if not isinstance(fn, ast.FunctionDef | ast.AsyncFunctionDef) or (
                    id(fn) in constructors):
                continue
            a = fn.args
            n = len([x for x in (*a.posonlyargs, *a.args, *a.kwonlyargs)
                     if x.arg not in ("self", "cls")]) + bool(a.vararg) + bool(a.kwarg)
            if n > PARAMETERS_AT_MOST:
                over.append(f"{module}.{fn.name}: {n}")
    assert over == []


def test_command_line_functions_are_short():
    long = [f"{m}.{fn.name}: {fn.end_lineno - fn.lineno + 1} lines"
            for m, fn in _all_functions() if m.startswith("ragmark.cli")
            and fn.end_lineno is not None
            and fn.end_lineno - fn.lineno + 1 > CLI_FUNCTION_AT_MOST]
    assert long == []


def test_run_and_compare_commands_are_adapters_of_a_plan():
    for module, name in THIN_COMMANDS.items():
        fn = _functions(module)[name]
        assert fn.end_lineno is not None
        lines = fn.end_lineno - fn.lineno + 1
        assert lines <= THIN_AT_MOST, f"{module}.{name}: {lines} lines"
        called = {n.func.id for n in ast.walk(fn) if isinstance(n, ast.Call)
                  and isinstance(n.func, ast.Name)}
        prefixes = {c.split("_")[0] for c in called}
        assert "plan" in prefixes and prefixes & {"execute", "estimate", "monitor"}, (
            f"{module}.{name} calls {sorted(called)}")


def test_every_module_has_a_layer():
    for module in ig.modules():
        assert ig.layer(module) in range(max(ig.LAYERS.values()) + 1), module


def test_no_import_circle():
    assert ig.circles(ig.edges()) == []


def test_no_import_runs_up_a_layer():
    up = ig.upward(ig.edges())
    assert len(up) <= UPWARD_AT_MOST, "\n".join(f"{a} -> {b}" for a, b in up)


def test_no_packages_import_each_other():
    assert len(ig.mutual_packages(ig.edges())) <= MUTUAL_AT_MOST, ig.mutual_packages(ig.edges())


def test_the_graph_reads_every_kind_of_import(tmp_path, monkeypatch):
    """A hand-made package: a top-level, a relative, a lazy and a type-checking import,
    and a circle between two modules."""
    pkg = tmp_path / "ragmark"
    (pkg / "sub").mkdir(parents=True)
    (pkg / "__init__.py").write_text("")
    (pkg / "errors.py").write_text("from ragmark.types import X\n")
    (pkg / "types.py").write_text("def f():\n    from ragmark import errors\n"
                                  "    import ragmark\n")
    (pkg / "sub" / "__init__.py").write_text("from typing import TYPE_CHECKING\n"
                                             "if TYPE_CHECKING:\n    from ragmark.cli import y\n")
    (pkg / "sub" / "a.py").write_text("from . import b\nfrom ..errors import E\n")
    (pkg / "sub" / "b.py").write_text("")
    (pkg / "cli.py").write_text("")
    monkeypatch.setattr(ig, "SRC", tmp_path)
    monkeypatch.setattr(ig, "LAYERS", {"ragmark": 5, "ragmark.errors": 0, "ragmark.types": 0,
                                       "ragmark.sub": 1, "ragmark.cli": 5})
    g = ig.edges()
    assert g == {("ragmark.errors", "ragmark.types"), ("ragmark.types", "ragmark.errors"),
                 ("ragmark.types", "ragmark"), ("ragmark.sub", "ragmark.cli"),
                 ("ragmark.sub.a", "ragmark.sub.b"), ("ragmark.sub.a", "ragmark.errors")}
    assert ig.circles(g) == [["ragmark.errors", "ragmark.types"]]
    assert ig.upward(g) == [("ragmark.sub", "ragmark.cli"), ("ragmark.types", "ragmark")]


_CHANGED = re.compile(
    r"\b(report|rep|r|reports\[[^]]+\])\.(notes|at_depth|short_metrics|short_rankings|"
    r"corrected|dataset|llm|metrics|timings|config|queries|executor)"
    r"(\[[^]]*\])?\s*(\[:0\]\s*=|\.(append|extend|update|insert|pop|clear)\(|\[[^]]+\]\s*=[^=])")


def test_a_report_is_not_changed_after_it_is_built():
    """RunReport and QueryRecord are frozen; the code makes a new report (replace)
    instead of changing the fields of one in place."""
    report = RunReport({}, {}, {"mrr": Aggregate.of([])}, [QueryRecord("q", "?", [], None, {})])
    with pytest.raises(dataclasses.FrozenInstanceError):
        report.notes = []  # type: ignore[misc]
    with pytest.raises(dataclasses.FrozenInstanceError):
        report.queries[0].answer = "x"  # type: ignore[misc]
    changed = [f"{path.relative_to(ig.SRC)}:{i}: {line.strip()}"
               for path in ig.modules().values()
               for i, line in enumerate(path.read_text().splitlines(), 1)
               if _CHANGED.search(line)]
    assert changed == []
    assert _CHANGED.search("report.notes.append(x)") and _CHANGED.search(
        "rep.dataset['a'] = 1") and _CHANGED.search("report.notes[:0] = x")


def test_every_metric_is_declared_beside_its_code():
    """Adding a metric is one file's change: its function and its MetricSpec line in the
    same module (retrieval and answer metrics in their metrics/ module, the abstention
    metrics and the production measures in theirs, a judge metric in its judges/ module), which the
    catalogue gathers in order."""
    import importlib

    from ragmark.metrics import abstention, agent, answer, production, retrieval
    from ragmark.metrics.names import _BUILTIN_SPECS

    answers = [s for s in _BUILTIN_SPECS if s.kind in ("answer", "aggregate")]
    assert answers == [*answer.SPECS, *abstention.SPECS, *production.SPECS, *agent.SPECS]
    for module, kind in ((retrieval, "retrieval"), (answer, "answer"),
                         (abstention, "answer"), (production, "answer"), (agent, "answer")):
        if module is retrieval:
            assert [s for s in _BUILTIN_SPECS if s.kind == kind] == list(module.SPECS)
        for s in module.SPECS:
            # an aggregate (grounded_ratio, aurc) is declared beside the code it sums up
            assert s.kind in (kind, "aggregate")
            assert s.compute is None or s.compute.__module__ == module.__name__, s.name
    from ragmark.metrics.names import catalogue

    assert not [s for s in _BUILTIN_SPECS if s.kind == "judge"]  # they join on first use
    judged = [s for s in catalogue().values() if s.kind == "judge"]
    assert judged
    for s in judged:
        assert s.compute is not None
        module = importlib.import_module(s.compute.__module__)
        assert module.__name__.startswith("ragmark.judges.") and s in module.SPECS, s.name
    names_file = ig.modules()["ragmark.metrics.names"].read_text()
    assert not re.search(r'spec\("\w+", "(retrieval|answer|judge)"', names_file)


def test_llm_clients_are_put_together_in_one_factory():
    """Every LLM client is composed in llm/factory.py (HTTP and cache, batch jobs for
    judges, the dry-run layer), nowhere else."""
    made = [f"{m}:{i}" for m, path in ig.modules().items() if m != "ragmark.llm.factory"
            for i, line in enumerate(path.read_text().splitlines(), 1)
            if re.search(r"\b(LLMClient|DryClient)\(", line) and "class " not in line]
    assert made == []


def _writes_environ(node: ast.AST) -> bool:
    def environ(n: ast.AST) -> bool:
        return isinstance(n, ast.Attribute) and n.attr == "environ"

    if isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute):
        return (node.func.attr in ("setdefault", "update", "pop", "clear")
                and environ(node.func.value)) or node.func.attr == "putenv"
    if isinstance(node, ast.Assign | ast.AugAssign | ast.Delete):
        targets = node.targets if isinstance(node, ast.Assign | ast.Delete) else [node.target]
        return any(isinstance(t, ast.Subscript) and environ(t.value) for t in targets)
    return False


def test_one_module_writes_the_environment():
    """No command, plan or component writes ``os.environ``; the variables a model
    library must see before it is imported are set by ragmark.libraries (issue 34)."""
    writers = {m for m, path in ig.modules().items()
               if any(_writes_environ(n) for n in ast.walk(ast.parse(path.read_text())))}
    assert writers == {"ragmark.libraries"}


def test_one_bootstrap_and_one_auc():
    """Items are resampled in one place (stats/resample.py) and ROC AUC is one function
    (stats/auc.py): no second loop of draws, no second argument order (issue 34)."""
    aucs = [m for m, fn in _all_functions() if fn.name in ("auc", "_auc", "roc_auc")]
    assert aucs == ["ragmark.stats.auc"]
    draws = set()
    for module, path in ig.modules().items():
        for n in ast.walk(ast.parse(path.read_text())):
            if (isinstance(n, ast.Call) and isinstance(n.func, ast.Attribute)
                    and n.func.attr == "integers" and not any(
                        k.arg == "dtype" for k in n.keywords)):  # sign flips: int8
                draws.add(module)
    assert draws == {"ragmark.stats.resample"}


SPLITS_OTHER_LISTS = {
    "ragmark.report.writers": "--format's writer names",
    "ragmark.plan.endpoint": "--llm-prices' numbers",
    "ragmark.judge_eval.items": "--label-map's pairs",
    "ragmark.testset.prompts": "--question-types",
    "ragmark.probe.plan": "probe's --attacks and --styles",
}


def test_metric_lists_are_split_in_one_place():
    """Every comma-separated list of metric names is read by metrics/names.split_names
    (issue 34), at the commas outside a name's options (metric_name.commas, issue 62);
    the other modules that split a comma list split something else."""
    splitters = set()
    for module, path in ig.modules().items():
        for n in ast.walk(ast.parse(path.read_text())):
            if (isinstance(n, ast.Call) and isinstance(n.func, ast.Attribute)
                    and n.func.attr == "split" and n.args
                    and isinstance(n.args[0], ast.Constant) and n.args[0].value == ","):
                splitters.add(module)
    assert splitters <= set(SPLITS_OTHER_LISTS)  # names.split_names: metric_name.commas
    assert "commas(text)" in inspect.getsource(split_names)


FUNCTION_AT_MOST = 80  # lines of any function of src/ragmark, its docstring included


def test_no_function_is_longer_than_eighty_lines():
    long = [f"{m}.{fn.name}: {fn.end_lineno - fn.lineno + 1} lines"
            for m, fn in _all_functions()
            if fn.end_lineno is not None and fn.end_lineno - fn.lineno + 1 > FUNCTION_AT_MOST]
    assert long == []


FILE_AT_MOST = 400  # lines of any module of src/ragmark (issue 49)


def test_no_module_is_longer_than_four_hundred_lines():
    src = Path(__file__).resolve().parents[2] / "src" / "ragmark"
    long = [f"{p.relative_to(src)}: {n} lines" for p in sorted(src.rglob("*.py"))
            if (n := len(p.read_text().splitlines())) > FILE_AT_MOST]
    assert long == []


def test_the_newer_commands_are_planned_in_plan():
    """monitor, testset, judge-eval and label take their plan from ragmark.plan, and no
    command resolves the LLM endpoint itself (issue 34)."""
    edges = ig.edges()
    for cli_module, plan_module in PLANNED.items():
        assert (cli_module, plan_module) in edges, cli_module
    resolvers = {m for m, fn in _all_functions() if m.startswith("ragmark.cli")
                 for n in ast.walk(fn) if isinstance(n, ast.Call)
                 and getattr(n.func, "id", getattr(n.func, "attr", "")) == "resolve_llm"}
    assert resolvers == set()


def test_one_retry_policy():
    """Every HTTP call is retried by ragmark.retry: no other module declares a retry
    exception or computes a backoff (issue 34)."""
    found = set()
    for module, path in ig.modules().items():
        for n in ast.walk(ast.parse(path.read_text())):
            if isinstance(n, ast.ClassDef) and "Retry" in n.name:
                found.add(module)
            if (isinstance(n, ast.BinOp) and isinstance(n.op, ast.Pow)
                    and isinstance(n.left, ast.Constant) and n.left.value == 2
                    and "attempt" in ast.unparse(n.right)):
                found.add(module)
    assert found == {"ragmark.retry"}


def test_a_package_of_logic_hands_names_on_from_its_init():
    """Issue 49, item 6: stats/__init__.py held 373 lines of logic; a package's
    __init__ of the core's packages (stats, metrics) defines no function or class: it
    hands on the names of its modules."""
    for package in ("ragmark.stats", "ragmark.metrics"):
        tree = ast.parse(ig.modules()[package].read_text())
        defined = [n.name for n in tree.body
                   if isinstance(n, ast.FunctionDef | ast.AsyncFunctionDef | ast.ClassDef)]
        assert defined == [], (package, defined)


def test_the_packages_of_layer_1_are_ordered():
    """Issue 49, item 6: layer 1 held a third of the code with no order inside; its
    packages are ordered (import_graph.ORDER_1: llm below judges below metrics, ...) and
    no import runs up that order."""
    up = []
    for a, b in ig.edges():
        ra, rb = ig.rank_in_layer_1(a), ig.rank_in_layer_1(b)
        if ra is not None and rb is not None and ra < rb:
            up.append(f"{a} -> {b}")
    assert up == []
    assert {p for p in ig.LAYERS if ig.LAYERS[p] == 1} == set(ig.ORDER_1)


def test_inspect_is_an_adapter_of_its_view():
    """Issue 49, item 5: cli/inspect.py (339 lines) rendered the console itself and
    imported running.tournament; its view is report/console_inspect.py, and the command
    reads the file, picks the view and prints."""
    edges = ig.edges()
    mine = {b for a, b in edges if a == "ragmark.cli.inspect"}
    assert "ragmark.report.console_inspect" in mine
    assert not any(b.startswith("ragmark.running") for b in mine)
    assert len(ig.modules()["ragmark.cli.inspect"].read_text().splitlines()) < 80


READ_ONLY = ("history", "diff", "power", "review", "report_cmd", "metrics_cmd", "inspect",
             "ci", "plugins_cmd")
"""The commands that read what was recorded (results files, the history, the label
store, the catalogue) and render it; they compute nothing a plan would."""
READ_FROM = ("ragmark.errors", "ragmark.text", "ragmark.analysis", "ragmark.history",
             "ragmark.results", "ragmark.report", "ragmark.metrics.names", "ragmark.plan",
             "ragmark.passage_labels.metrics", "ragmark.passage_labels",
             "ragmark.extensions", "ragmark.probe.view", "ragmark.probe.html")
"""What a read-only command may import: the results and their analysis, the history,
the reports, the catalogue's names, the plan layer (its read plans and paths)."""


def test_read_only_commands_only_read():
    """Issue 49, item 5, the stated rule: a command that is not planned (run, compare,
    label, monitor, testset, judge-eval, annotate, duel: THIN_COMMANDS and PLANNED) only
    reads and renders: it imports from READ_FROM alone, never the running layer, the
    judges, the LLM clients, the pipeline parts or the data readers."""
    edges = ig.edges()
    every = {m for m in ig.modules() if m.startswith("ragmark.cli.")}
    rest = every - set(THIN_COMMANDS) - {f"ragmark.cli.{m}" for m in READ_ONLY}
    # the others are the command line's own parts (the group, its lazy loading, shared
    # flags) and demo
    assert {m.rpartition(".")[2] for m in rest} == {"app", "lazy_group", "shared", "flags",
                                                    "llm_opts", "demo"}
    for name in READ_ONLY:
        module = f"ragmark.cli.{name}"
        wrong = sorted(b for a, b in edges if a == module and not b.startswith("ragmark.cli")
                       and not b.startswith(READ_FROM))
        assert not wrong, f"{module} imports {wrong}"
