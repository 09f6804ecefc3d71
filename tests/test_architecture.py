"""The package structure: no import circle anywhere, and ``bench.registry`` a leaf.

Every import counts, including those inside functions (a lazy import still ties two modules
together). ``from pkg import name`` is an edge to ``pkg.name`` when that is a module, else to ``pkg``.
"""
from __future__ import annotations

import ast
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
PACKAGES = ("bench", "attacks", "defenses", "victims")


def _module_name(path: Path) -> str:
    parts = list(path.relative_to(ROOT).with_suffix("").parts)
    if parts[-1] == "__init__":
        parts = parts[:-1]
    return ".".join(parts)


def project_modules() -> dict[str, Path]:
    return {_module_name(p): p for pkg in PACKAGES for p in sorted((ROOT / pkg).rglob("*.py"))}


def import_graph() -> dict[str, set[str]]:
    modules = project_modules()
    graph: dict[str, set[str]] = {name: set() for name in modules}
    for name, path in modules.items():
        package = name if path.name == "__init__.py" else name.rpartition(".")[0]
        for node in ast.walk(ast.parse(path.read_text())):
            targets: list[str] = []
            if isinstance(node, ast.Import):
                targets = [a.name for a in node.names]
            elif isinstance(node, ast.ImportFrom):
                base = node.module or ""
                if node.level:
                    anchor = package.split(".")[: len(package.split(".")) - node.level + 1]
                    base = ".".join(anchor + ([base] if base else []))
                targets = [f"{base}.{a.name}" if f"{base}.{a.name}" in modules else base for a in node.names]
            for target in targets:
                while target and target not in modules:
                    target = target.rpartition(".")[0]
                if target and target != name:
                    graph[name].add(target)
    return graph


def cycles(graph: dict[str, set[str]]) -> list[list[str]]:
    """Strongly connected components with more than one module (Tarjan)."""
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    on_stack: set[str] = set()
    found: list[list[str]] = []

    def visit(v: str) -> None:
        index[v] = low[v] = len(index)
        stack.append(v)
        on_stack.add(v)
        for w in sorted(graph[v]):
            if w not in index:
                visit(w)
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

    for v in sorted(graph):
        if v not in index:
            visit(v)
    return found


def test_cycle_finder_finds_a_planted_circle():
    graph = {"a": {"b"}, "b": {"c"}, "c": {"a"}, "d": {"a"}}
    assert cycles(graph) == [["a", "b", "c"]]


def test_no_import_circle():
    assert cycles(import_graph()) == []


def test_registry_is_a_leaf():
    assert import_graph()["bench.registry"] == set()


def test_attacks_do_not_import_each_other_for_the_server_lift():
    graph = import_graph()
    shared = {"attacks", "attacks.base", "attacks.view"}
    # an attack's own networks, configurations, checks and collapse rules; shared estimators (MK-MMD, the payloads' running
    # moments), the buffer of observed payloads, the label attacks' choice of labelled aux samples and the budget table's entry
    helpers = ("_nets", "_config", "_diagnostics", "_collapse", "mmd", "payload_moments", "observed_payloads", "labelled_aux",
               "budget_table")
    for name, targets in graph.items():
        if name.startswith("attacks.") and name not in shared and not name.endswith("_nets"):
            attack_modules = {t for t in targets if t.startswith("attacks.") and t not in shared}
            assert all(t.endswith(helpers) for t in attack_modules), (name, attack_modules)
