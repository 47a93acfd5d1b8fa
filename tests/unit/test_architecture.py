"""The joints of the package, measured (issue #28): no import circles between linerate's files
(imports inside functions count), few linerate imports inside functions outside cli/ (each one
keeping a heavy library off the start-up path, and saying so), no probing of testbeds with
hasattr/getattr, the choice among testbed kinds made in testbed/ (and at most two places outside),
no report code in search/, and every Testbed implementation with every member of the protocol.
Issue #37: the runner hosts the kinds through a seam it declares (experiment/plugins.py, the
registry in experiment/registry.py), so nothing below the kinds imports them and no kind imports
another; testbeds know nothing of experiments; a kind takes facts about the DUT from dut/; and only
kinds/ and cli/ tell test kinds apart by name."""

from __future__ import annotations

import ast
import re
from pathlib import Path
from typing import get_type_hints

import pytest

SRC = Path(__file__).resolve().parents[2] / "src"
MAX_FUNCTION_IMPORTS = 25  # of linerate modules, outside cli/
HEAVY = re.compile(r"#.*(matplotlib|scipy|jinja2|asyncssh|pydantic|pyroute2|MLRsearch|dpkt)")


def module_name(path: Path) -> str:
    parts = list(path.relative_to(SRC).with_suffix("").parts)
    return ".".join(parts[:-1] if parts[-1] == "__init__" else parts)


MODULES = {module_name(p): p for p in SRC.rglob("*.py")}


def resolve(name: str) -> str | None:
    while name and name not in MODULES:
        name = name.rpartition(".")[0]
    return name or None


def imports(module: str) -> list[tuple[str, int, bool, str]]:
    """(imported linerate module, line, inside a function?, the source line) of every import."""
    path = MODULES[module]
    text = path.read_text()
    tree = ast.parse(text)
    lines = text.splitlines()
    out = []

    def visit(node: ast.AST, inside: bool) -> None:
        for child in ast.iter_child_nodes(node):
            if isinstance(child, (ast.Import, ast.ImportFrom)):
                if isinstance(child, ast.Import):
                    names = [alias.name for alias in child.names]
                else:
                    base = child.module or ""
                    if child.level:
                        package = module.split(".") if path.name == "__init__.py" else module.split(".")[:-1]
                        base = ".".join(package[:len(package) - child.level + 1] + ([child.module] if child.module else []))
                    names = [f"{base}.{a.name}" if f"{base}.{a.name}" in MODULES else base for a in child.names]
                for name in names:
                    target = resolve(name) if name.startswith("linerate") else None
                    if target and target != module:
                        out.append((target, child.lineno, inside, lines[child.lineno - 1]))
            visit(child, inside or isinstance(child, (ast.FunctionDef, ast.AsyncFunctionDef)))

    visit(tree, False)
    return out


GRAPH = {module: imports(module) for module in MODULES}


def cycles() -> list[list[str]]:
    """Strongly connected components of more than one module (Tarjan)."""
    index, low, stack, on_stack, found, counter = {}, {}, [], set(), [], [0]

    def connect(v: str) -> None:
        index[v] = low[v] = counter[0]
        counter[0] += 1
        stack.append(v)
        on_stack.add(v)
        for w, *_ in GRAPH[v]:
            if w not in index:
                connect(w)
                low[v] = min(low[v], low[w])
            elif w in on_stack:
                low[v] = min(low[v], index[w])
        if low[v] == index[v]:
            component = []
            while True:
                w = stack.pop()
                on_stack.discard(w)
                component.append(w)
                if w == v:
                    break
            if len(component) > 1:
                found.append(sorted(component))

    for module in sorted(MODULES):
        if module not in index:
            connect(module)
    return found


def test_no_import_circles_counting_imports_inside_functions():
    assert cycles() == []


def test_few_function_level_imports_outside_cli_each_with_its_reason():
    inside = sorted({(module, line, source.strip()) for module, edges in GRAPH.items() if not module.startswith("linerate.cli")
                     for _, line, in_function, source in edges if in_function})
    print(f"\nlinerate imports inside functions outside cli/: {len(inside)} (at most {MAX_FUNCTION_IMPORTS})")
    assert len(inside) <= MAX_FUNCTION_IMPORTS, inside
    without_reason = [item for item in inside if not HEAVY.search(item[2])]
    assert without_reason == []


def test_nothing_probes_testbeds_labs_or_hosts():
    probes = []
    for module, path in MODULES.items():
        for number, line in enumerate(path.read_text().splitlines(), 1):
            if re.search(r"\b(hasattr|getattr)\((lab|testbed|view|host|executor|bed|self\.executor)\b", line):
                probes.append(f"{module}:{number}: {line.strip()}")
            if "__getattr__" in line:
                probes.append(f"{module}:{number}: {line.strip()}")
    assert probes == []


def test_testbed_kinds_are_told_apart_in_testbed_only():
    """Comparisons with a testbed kind or DUT kind, and choices between an inventory and labs."""
    pattern = re.compile(r"""(==|!=)\s*["'](vm|namespace|ssh)["']|["'](vm|namespace|ssh)["']\s*(==|!=)|"""
                         r"""inventory is (not )?None|isinstance\([^)]*(Testbed|Lab)\b|options\.get\("testbed"\)""")
    outside = [f"{module}:{number}" for module, path in MODULES.items() if not module.startswith("linerate.testbed")
               for number, line in enumerate(path.read_text().splitlines(), 1) if pattern.search(line)]
    print(f"\ntestbed-kind branches outside testbed/: {outside}")
    assert len(outside) <= 2, outside


def test_search_holds_no_report_code():
    for module, edges in GRAPH.items():
        if module.startswith("linerate.search"):
            assert not [e for e in edges if e[0].startswith("linerate.report")], module
            assert not re.search(r"^\s*(import|from) (matplotlib|jinja2)", MODULES[module].read_text(), re.M), module


@pytest.mark.parametrize("implementation", ["linerate.testbed.namespace:NamespaceTestbed", "linerate.testbed.vm:VmTestbed",
                                            "linerate.testbed.vm_image:ImageVmTestbed", "linerate.testbed.ssh:SshView", "linerate.testbed.fake:FakeTestbed"])
def test_every_testbed_has_every_member_of_the_protocol(implementation):
    import importlib

    from linerate.testbed.base import Testbed

    module, name = implementation.split(":")
    cls = getattr(importlib.import_module(module), name)
    members = {n for n in dir(Testbed) if not n.startswith("_")} | set(get_type_hints(Testbed))
    # attributes an __init__ sets (params, state): found in the sources of the class and its bases
    source = "".join(Path(importlib.import_module(c.__module__).__file__).read_text() for c in cls.__mro__
                     if c.__module__.startswith("linerate"))
    missing = [m for m in sorted(members) if not hasattr(cls, m) and not re.search(rf"self\.{m}\b\s*(:[^=]*)?=", source)]
    assert missing == []


def test_every_kind_is_one_registry_line_and_has_its_members():
    from linerate.experiment.registry import KINDS, kind

    for name in KINDS:
        test = kind(name)
        for member in ("check", "run", "render", "plot", "samples", "describe_plan", "formats", "required_features",
                       "option_keys", "cells", "cell_settings", "experiment_fields", "compared_as", "bit_rate_samples"):
            assert hasattr(test, member), (name, member)


def edges_from(folder: str, to: str) -> list[str]:
    """Imports (at module level or inside functions) from linerate.<folder> to linerate.<to>."""
    return [f"{module}:{line}: {source.strip()}" for module, edges in GRAPH.items()
            if module == f"linerate.{folder}" or module.startswith(f"linerate.{folder}.")
            for target, line, _, source in edges if target == f"linerate.{to}" or target.startswith(f"linerate.{to}.")]


@pytest.mark.parametrize("folder", ["experiment", "report", "testbed"])
def test_the_kinds_are_found_through_the_registry_never_imported_below_them(folder):
    assert edges_from(folder, "kinds") == []


def test_testbeds_know_nothing_of_experiments():
    assert edges_from("testbed", "experiment") == []


def test_a_kind_imports_no_other_kind():
    """What several kinds share is kinds/base.py's, or lives below the kinds."""
    crossing = [f"{module}:{line}" for module, edges in GRAPH.items() if module.startswith("linerate.kinds.")
                for target, line, _, _ in edges if target.startswith("linerate.kinds.")
                and target.split(".")[2] not in (module.split(".")[2], "base")]
    assert crossing == []


# what a kind may take from diagnose/: its verdicts (tune proposes levers from them, the cps report
# shows those of failed trials); facts about the DUT (its firewall, state lingering) come from dut/
VERDICTS = {"diagnose", "cell_facts", "state_verdicts"}


def test_kinds_take_dut_facts_from_dut_and_only_verdicts_from_diagnose():
    taken = []
    for module, path in MODULES.items():
        if module.startswith("linerate.kinds"):
            for node in ast.walk(ast.parse(path.read_text())):
                if isinstance(node, ast.ImportFrom) and (node.module or "").startswith("linerate.diagnose"):
                    taken += [f"{module}: {alias.name}" for alias in node.names if alias.name not in VERDICTS]
                elif isinstance(node, ast.Import):
                    taken += [f"{module}: {alias.name}" for alias in node.names
                              if alias.name.startswith("linerate.diagnose")]
    assert taken == []


KIND_NAMES = {"throughput", "rfc2544", "cps", "rfc9693", "tune"}
KIND_PROBES = KIND_NAMES | {"Mbit/s"}  # a sample's unit once told throughput from the others


def kind_comparisons(tree: ast.AST) -> list[int]:
    """Lines comparing with a test kind's name: `x == "cps"`, `"rfc2544" != x`, `x in ("cps", "tune")`
    (a name looked up in data, `"throughput" in knob.effect`, is no such comparison)."""
    lines = []
    for node in ast.walk(tree):
        if not isinstance(node, ast.Compare):
            continue
        sides = [node.left, *node.comparators]
        for op, left, right in zip(node.ops, sides, sides[1:]):
            if isinstance(op, (ast.Eq, ast.NotEq)):
                found = [side.value for side in (left, right) if isinstance(side, ast.Constant)]
            elif isinstance(op, (ast.In, ast.NotIn)) and isinstance(right, (ast.Tuple, ast.List, ast.Set)):
                found = [e.value for e in right.elts if isinstance(e, ast.Constant)]
            else:
                found = []
            if any(value in KIND_PROBES for value in found):
                lines.append(node.lineno)
    return lines


def test_kind_names_are_compared_in_kinds_and_cli_only():
    assert kind_comparisons(ast.parse('if test == "cps" or "tune" != t or t in ("rfc2544",): pass')) == [1, 1, 1]
    assert kind_comparisons(ast.parse('ok = "throughput" in knob.effect')) == []
    outside = [f"{module}:{line}" for module, path in MODULES.items()
               if not module.startswith(("linerate.kinds", "linerate.cli"))
               for line in kind_comparisons(ast.parse(path.read_text()))]
    assert outside == []
