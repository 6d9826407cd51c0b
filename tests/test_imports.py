"""Import hygiene of the library, read from the source with ``ast`` (every import counts,
those inside functions too): the graph of thruput's modules has no cycle, nor the graph of
its packages (``thruput.<package>``: docs/design.md, "Layers"); nothing outside
``thruput.cli`` imports ``thruput.cli``; ``thruput.contract`` imports no campaign code."""

from __future__ import annotations

import ast
from pathlib import Path

import thruput

SRC = Path(thruput.__file__).parent


def module_name(path):
    parts = list(path.relative_to(SRC.parent).with_suffix("").parts)
    if parts[-1] == "__init__":
        parts.pop()
    return ".".join(parts)


def modules():
    return {module_name(p): p for p in SRC.rglob("*.py")}


def imports_of(name, path, known):
    """The thruput modules ``name`` (file ``path``) imports, anywhere in it."""
    package = name if path.name == "__init__.py" else name.rpartition(".")[0]
    found = set()
    for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
        if isinstance(node, ast.Import):
            targets = [a.name for a in node.names]
        elif isinstance(node, ast.ImportFrom):
            if node.level:
                base = package.split(".")
                base = base[:len(base) - (node.level - 1)]
                stem = ".".join(base + ([node.module] if node.module else []))
            else:
                stem = node.module or ""
            targets = [stem] + [f"{stem}.{a.name}" for a in node.names]
        else:
            continue
        for target in targets:
            if not target.startswith("thruput"):
                continue
            while target and target not in known:   # (a name imported from a module)
                target = target.rpartition(".")[0]
            if target and target != name:
                found.add(target)
    return found


def graph():
    known = modules()
    return {name: imports_of(name, path, known) for name, path in known.items()}


def parents(name):
    """A module's packages: importing ``a.b.c`` runs ``a/__init__`` and ``a/b/__init__``."""
    parts = name.split(".")
    return {".".join(parts[:k]) for k in range(1, len(parts))}


def cycles(edges):
    """The strongly connected components of more than one module (Tarjan)."""
    index, low, stack, on, out, counter = {}, {}, [], set(), [], [0]

    def visit(v):
        index[v] = low[v] = counter[0]
        counter[0] += 1
        stack.append(v)
        on.add(v)
        for w in edges.get(v, ()):
            if w not in index:
                visit(w)
                low[v] = min(low[v], low[w])
            elif w in on:
                low[v] = min(low[v], index[w])
        if low[v] == index[v]:
            comp = []
            while True:
                w = stack.pop()
                on.discard(w)
                comp.append(w)
                if w == v:
                    break
            if len(comp) > 1:
                out.append(sorted(comp))

    import sys
    sys.setrecursionlimit(10000)
    for v in list(edges):
        if v not in index:
            visit(v)
    return out


def test_the_library_has_no_import_cycle():
    edges = graph()
    # a package's __init__ re-exporting its modules is not a cycle of theirs: only the
    # modules' own imports count (a module's parent packages are imported before it)
    plain = {name: {t for t in targets if t not in parents(name)} for name, targets in edges.items()}
    assert cycles(plain) == []


def package(name):
    """The package a module belongs to: ``thruput.<package>`` (a top-level module is its own)."""
    return ".".join(name.split(".")[:2])


def package_edges(edges):
    """``{package: {package it imports: [(module, module it imports), ...]}}`` from the
    modules' own imports (their parent packages left out, as for the module graph)."""
    out = {}
    for name, targets in edges.items():
        for target in targets:
            if target not in parents(name) and package(target) != package(name):
                out.setdefault(package(name), {}).setdefault(package(target), []).append((name, target))
    return out


def test_the_library_has_no_package_cycle():
    """A package may import another only if that one imports it back by no path (campaign
    below record below monitor below design, docs/design.md "Layers"); a failure names every
    module import between the packages of each cycle."""
    between = package_edges(graph())
    found = cycles({a: set(b) for a, b in between.items()})
    assert [(comp, sorted(pair for a in comp for b in comp for pair in between.get(a, {}).get(b, [])))
            for comp in found] == []


def test_package_cycles_are_found():
    edges = {"thruput.a.x": {"thruput.b.y"}, "thruput.b.y": set(), "thruput.b.z": {"thruput.a"},
             "thruput.a": set(), "thruput.c.w": {"thruput.c"}, "thruput.c": {"thruput.c.w"}}
    between = package_edges(edges)
    assert between == {"thruput.a": {"thruput.b": [("thruput.a.x", "thruput.b.y")]},
                       "thruput.b": {"thruput.a": [("thruput.b.z", "thruput.a")]}}
    assert cycles({a: set(b) for a, b in between.items()}) == [["thruput.a", "thruput.b"]]


def test_kinds_named_by_campaign_exist():
    """The kinds' functions :mod:`thruput.campaign.kinds` and the contract name as strings
    (so that ``thruput.campaign`` imports no package above it) are there."""
    from thruput.campaign import kinds
    from thruput.contract import CAMPAIGN_CHECKS

    for target in [*kinds.OPENERS.values(), *kinds.CHECKS.values(), *CAMPAIGN_CHECKS.values()]:
        assert callable(kinds.by_name(target)), target


def test_nothing_outside_cli_imports_cli():
    edges = graph()
    bad = sorted((name, t) for name, targets in edges.items() if not name.startswith("thruput.cli")
                 for t in targets if t == "thruput.cli" or t.startswith("thruput.cli."))
    assert bad == []


def test_contract_imports_no_campaign_code():
    edges = graph()
    seen, todo = set(), ["thruput.contract"]
    while todo:
        name = todo.pop()
        for target in edges.get(name, ()):
            if target not in seen:
                seen.add(target)
                todo.append(target)
    assert sorted(t for t in seen if t.startswith(("thruput.campaign", "thruput.monitor"))) == []


def test_validate_needs_no_earlier_import():
    """A monitor campaign is validated by its own check in a fresh interpreter where only
    ``import thruput`` ran (no registration as a side effect of another import)."""
    import subprocess
    import sys

    code = ("import sys, thruput, xarray as xr\n"
            "assert 'thruput.monitor.reader' not in sys.modules\n"
            "try:\n"
            "    thruput.validate(xr.Dataset(attrs={'kind': 'campaign', 'campaign_kind': 'monitor'}))\n"
            "except Exception as exc:\n"
            "    print(type(exc).__module__, type(exc).__name__)\n")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True).stdout
    assert out.strip() == "thruput.errors ContractError", out
