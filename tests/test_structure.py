"""What the structure promises a reader (issue 39): public functions that typing can read, the
metric list written once (the registry), statistics defaults written once."""

from __future__ import annotations

import ast
import inspect
import re
import typing

import pandas as pd
import polars as pl
import pytest

import recframe
from recframe.metrics import REGISTRY

PUBLIC = [name for name in recframe.__all__ if inspect.isfunction(getattr(recframe, name))]


@pytest.mark.parametrize("name", PUBLIC)
def test_typing_reads_every_public_function(name: str) -> None:
    hints = typing.get_type_hints(getattr(recframe, name))
    assert "return" in hints


@pytest.mark.parametrize("name", [name for name in PUBLIC if name not in ("read_trec_qrels", "read_trec_run")])
def test_every_public_function_that_takes_a_frame_builds_its_plan_as_an_engine_call(name: str) -> None:
    """(so that PySpark records no call sites while it runs: _frames.engine_call; the two
    readers of trec files take paths)"""
    assert getattr(getattr(recframe, name), "__recframe_engine_call__", False), f"decorate {name} with @_frames.engine_call"


@pytest.mark.parametrize("frame", [pl.DataFrame(), pl.LazyFrame(), pd.DataFrame()], ids=["polars", "lazy", "pandas"])
def test_typing_reads_every_namespace_method(frame: object) -> None:
    methods = inspect.getmembers(type(frame.recmetrics), inspect.isfunction)  # type: ignore[attr-defined]
    assert len(methods) > 3
    for _, method in methods:
        typing.get_type_hints(method)


def test_the_options_of_per_user_are_typed_at_run_time() -> None:
    options = typing.get_type_hints(recframe.per_user)["options"]
    fields = typing.get_type_hints(typing.get_args(options)[0])
    assert {"threshold", "relevance", "ties", "empty_users"} <= set(fields)


@pytest.mark.parametrize("function", [recframe.per_user, recframe.summary])
def test_the_metric_list_in_the_docs_is_the_registry(function: object) -> None:
    doc = function.__doc__ or ""  # type: ignore[attr-defined]
    entry = doc[doc.index("metrics : list of str") : doc.index("user : str or None")]
    missing = [name for name in REGISTRY if f'``"{name}"``' not in entry]
    assert not missing, f"the metrics entry misses {missing}"


def test_the_statistics_defaults_are_declared_once() -> None:
    from recframe import options, stats

    assert options.DEFAULTS["n_resamples"] == stats.INTERVAL_RESAMPLES
    for function in (recframe.compare, recframe.disparity, recframe.compare_recommendations):
        parameters = inspect.signature(function).parameters
        assert parameters["n_resamples"].default == stats.TEST_RESAMPLES
        assert parameters["alpha"].default == stats.ALPHA
        assert parameters["correction"].default == stats.CORRECTION
    for function in (recframe.compare, recframe.disparity, stats.bootstrap_ci, stats.randomization_test):
        doc = function.__doc__ or ""
        assert "_RESAMPLES}" not in doc and "{ALPHA}" not in doc and "{CORRECTION}" not in doc
    assert f"n_resamples : int, default {stats.TEST_RESAMPLES}" in (recframe.compare.__doc__ or "")
    # the charts' bootstrap (recframe.plot.groups, its data step, the page's figures) reads the same default
    from recframe import plot
    from recframe.reporting import _charts
    from recframe.reporting._page import figures, sections

    for function in (plot.groups, plot.group_means, _charts.groups, _charts.group_means):
        assert inspect.signature(function).parameters["n_resamples"].default == stats.INTERVAL_RESAMPLES
    for module in (plot, _charts, figures, sections):
        source = inspect.getsource(module)
        assert not re.search(r"n_resamples\b[^,)\n]*?\b1_?000\b", source), module.__name__


def test_the_cut_off_and_test_defaults_are_declared_once() -> None:
    from recframe import options, stats

    for function in (recframe.per_user, recframe.summary, recframe.item_groups, recframe.compare_recommendations):
        assert inspect.signature(function).parameters["k"].default == options.DEFAULT_K
    assert inspect.signature(recframe.compare).parameters["test"].default == stats.PAIRED_TEST
    assert inspect.signature(recframe.disparity).parameters["test"].default == stats.UNPAIRED_TEST
    assert f'default "{stats.PAIRED_TEST}"' in (recframe.compare.__doc__ or "")


def test_no_module_reaches_into_another_modules_private_functions() -> None:
    import ast
    from pathlib import Path

    source = Path(recframe.__file__).parent
    modules = {p.stem for p in source.rglob("*.py")} | {p.name for p in source.iterdir() if p.is_dir()}
    aliases = {"v": "_validate", "n": "_names", "options_table": "options"}
    found = []
    for path in source.rglob("*.py"):
        tree = ast.parse(path.read_text())
        for node in ast.walk(tree):
            if isinstance(node, ast.ImportFrom) and (node.module or "").startswith("recframe"):
                found += [
                    f"{path.name}: imports {a.name}" for a in node.names if a.name.startswith("_") and a.name not in modules
                ]
            if isinstance(node, ast.Attribute) and isinstance(node.value, ast.Name) and node.attr.startswith("_"):
                owner = aliases.get(node.value.id, node.value.id)
                if owner in modules and not node.attr.startswith("__") and owner != path.stem:
                    found.append(f"{path.name}: {node.value.id}.{node.attr}")
    assert not found, found


def _import_graph() -> dict[str, dict[str, int]]:
    """Module -> {imported recframe module: line}, from every ``import`` and ``from ... import``
    of src/recframe, at module level and inside functions (those under ``if TYPE_CHECKING:`` are
    left out: they never run). ``from recframe import x`` is an arrow to ``recframe.x`` when x
    is a module; ``recframe`` itself is the package face."""
    from pathlib import Path

    source = Path(recframe.__file__).parent
    files = {}
    for path in source.rglob("*.py"):
        parts = path.relative_to(source.parent).with_suffix("").parts
        files[".".join(parts[:-1] if parts[-1] == "__init__" else parts)] = path
    graph: dict[str, dict[str, int]] = {}
    for name, path in files.items():
        package = name.split(".") if path.name == "__init__.py" else name.split(".")[:-1]
        tree = ast.parse(path.read_text())
        checking_only = {
            id(inner)
            for node in ast.walk(tree)
            if isinstance(node, ast.If) and "TYPE_CHECKING" in ast.unparse(node.test)
            for inner in ast.walk(node)
        }
        arrows = graph.setdefault(name, {})
        for node in ast.walk(tree):
            if id(node) in checking_only:
                continue
            if isinstance(node, ast.Import):
                targets = [a.name for a in node.names]
            elif isinstance(node, ast.ImportFrom):
                relative = [*package[: len(package) - node.level + 1], *([node.module] if node.module else [])]
                base = ".".join(relative) if node.level else node.module or ""
                targets = [f"{base}.{a.name}" if f"{base}.{a.name}" in files else base for a in node.names]
            else:
                continue
            for target in targets:
                if target in files and target != name:
                    arrows.setdefault(target, node.lineno)
    return graph


def _cycle(graph: dict[str, dict[str, int]]) -> list[str]:
    """One circle of imports (the first module repeated at its end), or [] when there is none."""
    state: dict[str, str] = {}

    def visit(module: str, path: list[str]) -> list[str]:
        state[module] = "open"
        for target in sorted(graph[module]):
            if state.get(target) == "open":
                return [*path[path.index(target) :], target]
            if target not in state and (found := visit(target, [*path, target])):
                return found
        state[module] = "done"
        return []

    for module in sorted(graph):
        if module not in state and (found := visit(module, [module])):
            return found
    return []


def test_the_import_graph_of_src_has_no_circle() -> None:
    graph = _import_graph()
    assert graph["recframe.engine._engine"] and graph["recframe"], "the graph reads the imports"
    assert "recframe.trec_eval.trec" in graph["recframe.trec_eval"], "imports inside functions count"
    cycle = _cycle(graph)
    lines = [f"{a} -> {b} (line {graph[a][b]})" for a, b in zip(cycle, cycle[1:])]
    assert not cycle, "a circle of imports:\n" + "\n".join(lines)


def test_the_cycle_finder_names_a_circle() -> None:
    graph = {"a": {"b": 1}, "b": {"c": 2}, "c": {"b": 3}, "d": {}}
    assert _cycle(graph) == ["b", "c", "b"]
    assert _cycle({"a": {"b": 1}, "b": {}}) == []


def test_only_the_cli_imports_the_package_face() -> None:
    """Nothing below the face imports it (it would be an arrow back up, and a circle through
    the modules the face imports). The CLI is the face's client: it calls the public functions
    through ``recframe.X`` (its tests replace ``recframe.summary``), and the face never imports it."""
    graph = _import_graph()
    importers = sorted(module for module, arrows in graph.items() if "recframe" in arrows)
    assert all(module.startswith(("recframe.cli.", "recframe.__main__")) for module in importers), importers
    reached, todo = set(), ["recframe"]
    while todo:
        for target in graph[todo.pop()]:
            if target not in reached:
                reached.add(target)
                todo.append(target)
    assert not reached & set(importers), sorted(reached & set(importers))


def _code_lines(source: str) -> set[int]:
    """The lines of `source` that hold code: not blank, not only a comment (a string over
    several lines counts on each)."""
    import io
    import tokenize

    layout = {tokenize.COMMENT, tokenize.NL, tokenize.NEWLINE, tokenize.INDENT, tokenize.DEDENT, tokenize.ENDMARKER}
    lines: set[int] = set()
    for token in tokenize.generate_tokens(io.StringIO(source).readline):
        if token.type not in layout:
            lines.update(range(token.start[0], token.end[0] + 1))
    return lines


def _lines_of_code(node: ast.FunctionDef | ast.AsyncFunctionDef, code: set[int]) -> int:
    """A function's lines of code: its lines (the def line to the last) that hold code, less
    its docstrings (its own and those of the functions and classes inside it)."""
    docs: set[int] = set()
    for inner in ast.walk(node):
        if isinstance(inner, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)) and ast.get_docstring(inner) is not None:
            first = inner.body[0]
            docs.update(range(first.lineno, first.end_lineno + 1))  # type: ignore[operator]
    return len((code & set(range(node.lineno, node.end_lineno + 1))) - docs)  # type: ignore[operator]


def test_lines_of_code_leave_out_docstrings_blank_lines_and_comments() -> None:
    source = 'def f(x):\n    """Doc,\n\n    long."""\n    # why\n\n    y = """a\n\nb"""\n    return (x,\n            y)  # end\n'
    node = ast.parse(source).body[0]
    assert isinstance(node, ast.FunctionDef)
    assert _lines_of_code(node, _code_lines(source)) == 6  # def, the string's 3 lines, return's 2


def test_no_function_in_src_has_more_than_80_lines_of_code() -> None:
    """A function reads on one screen: its docstring stands inside it and is not counted, nor
    are blank and comment lines."""
    from pathlib import Path

    long = []
    for path in Path(recframe.__file__).parent.rglob("*.py"):
        source = path.read_text()
        code = _code_lines(source)
        for node in ast.walk(ast.parse(source)):
            if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)) and _lines_of_code(node, code) > 80:
                long.append(f"{path.name}:{node.name} ({_lines_of_code(node, code)} lines of code)")
    assert not long, long


def test_every_docstring_stands_inside_its_function() -> None:
    """No module assigns a function's ``__doc__`` beside it (recframe._docs.filled writes the
    declared values into a docstring written in the function)."""
    from pathlib import Path

    assigned = [
        f"{path.name}:{node.lineno}"
        for path in Path(recframe.__file__).parent.rglob("*.py")
        for node in ast.parse(path.read_text()).body
        if isinstance(node, (ast.Assign, ast.AugAssign))
        and any(
            isinstance(t, ast.Attribute) and t.attr == "__doc__"
            for t in (node.targets if isinstance(node, ast.Assign) else [node.target])
        )
    ]
    assert not assigned, assigned


def test_every_module_is_named_in_the_architecture_page() -> None:
    """docs/architecture.md names every module under src/recframe by its path there (the
    table "Every module"), so that the page draws the code as it is."""
    from pathlib import Path

    source = Path(recframe.__file__).parent
    page = (Path(__file__).parents[1] / "docs" / "architecture.md").read_text()  # (the package may be installed)
    missing = [str(p.relative_to(source)) for p in sorted(source.rglob("*.py")) if f"`{p.relative_to(source)}`" not in page]
    assert not missing, f"docs/architecture.md does not name {missing}"
