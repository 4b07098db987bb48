"""The layout's rules, read from the modules' own import statements (every
``import``/``from ... import``, including those inside functions):

* imports run one way: cli -> report -> experiments -> proofs -> statements ->
  data -> model -> arith -> errors (each layer lists what it may import in its
  ``__init__`` docstring; :data:`MAY_IMPORT` is that list);
* nothing in ``verifier`` imports ``proofs`` (the registry finds the checker
  packages by name);
* no import circle anywhere;
* no module over :data:`MAX_LINES` lines.

Each rule is also run on a planted violation, so the test can fail.
"""
from __future__ import annotations

import ast
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
PACKAGES = ("verifier", "proofs")
MAX_LINES = 400
#: modules allowed more lines, with the reason: verifier/recheck.py is ONE file by design (a reader copies
#: it alone and runs it without the project: docs/CERTIFICATES.md), and its limit stays small enough to read
#: (1300 since it proves given-weights certificates too: interval entries, b_Q, two readout kinds)
LONGER = {"verifier.recheck": 1300}

ENGINE = ("verifier.errors", "verifier.arith", "verifier.model", "verifier.data", "verifier.statements")
#: layer -> the layers it may import (besides itself).
MAY_IMPORT: dict[str, tuple[str, ...]] = {
    "verifier": (),
    "verifier.errors": (),
    "verifier.arith": ("verifier.errors",),
    "verifier.model": ("verifier.errors", "verifier.arith"),
    "verifier.data": ("verifier.errors", "verifier.arith", "verifier.model"),
    "verifier.statements": ("verifier.errors", "verifier.arith", "verifier.data"),
    "proofs": ENGINE,
    "verifier.experiments": ENGINE,
    "verifier.report": ENGINE + ("verifier.experiments",),
    "verifier.cli": ENGINE + ("verifier.experiments", "verifier.report"),
}


def module_name(path: Path) -> str:
    parts = list(path.relative_to(ROOT).with_suffix("").parts)
    if parts[-1] == "__init__":
        parts.pop()
    return ".".join(parts)


def modules() -> dict[str, Path]:
    return {module_name(p): p for pkg in PACKAGES for p in sorted((ROOT / pkg).rglob("*.py"))}


def imports_of(name: str, path: Path, known: set[str]) -> set[str]:
    """The project modules ``name`` imports (resolved to modules, not names)."""
    package = name if path.name == "__init__.py" else name.rpartition(".")[0]
    out = set()
    for node in ast.walk(ast.parse(path.read_text(), str(path))):
        if isinstance(node, ast.Import):
            targets = [a.name for a in node.names]
        elif isinstance(node, ast.ImportFrom):
            if node.level:
                base = package.split(".")[: len(package.split(".")) - node.level + 1]
                mod = ".".join(base + ([node.module] if node.module else []))
            else:
                mod = node.module or ""
            targets = [f"{mod}.{a.name}" if f"{mod}.{a.name}" in known else mod for a in node.names]
        else:
            continue
        for t in targets:
            while t and t not in known:  # `import a.b.c` of a non-module name: its module
                t = t.rpartition(".")[0]
            if t and t != name:
                out.add(t)
    return out


def layer(name: str) -> str:
    return max((layer for layer in MAY_IMPORT if name == layer or name.startswith(layer + ".")), key=len)


def violations(graph: dict[str, set[str]]) -> list[str]:
    bad = []
    for a, targets in graph.items():
        for b in targets:
            la, lb = layer(a), layer(b)
            if la != lb and lb not in MAY_IMPORT[la]:
                bad.append(f"{a} imports {b} ({la} may import only {', '.join(MAY_IMPORT[la]) or 'nothing'})")
    return sorted(bad)


def cycles(graph: dict[str, set[str]]) -> list[list[str]]:
    """Every strongly connected component with more than one module (Tarjan)."""
    index, low, stack, on, out = {}, {}, [], set(), []

    def visit(v):
        index[v] = low[v] = len(index)
        stack.append(v)
        on.add(v)
        for w in sorted(graph.get(v, ())):
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

    for v in sorted(graph):
        if v not in index:
            visit(v)
    return out


def project_graph() -> dict[str, set[str]]:
    mods = modules()
    return {name: imports_of(name, path, set(mods)) for name, path in mods.items()}


def test_imports_run_one_way():
    assert violations(project_graph()) == []


def test_no_import_circle():
    assert cycles(project_graph()) == []


def test_no_module_over_the_size_limit():
    long = {name: n for name, path in modules().items()
            if (n := len(path.read_text().splitlines())) > LONGER.get(name, MAX_LINES)}
    assert long == {}, f"split these modules (> {MAX_LINES} lines): {long}"


def test_every_layer_is_known_and_says_what_it_may_import():
    mods = modules()
    for name in mods:
        assert layer(name) in MAY_IMPORT, name
    for pkg in ("verifier.arith", "verifier.model", "verifier.data", "verifier.statements",
                "verifier.experiments", "verifier.report", "proofs"):
        assert "may import" in (ast.get_docstring(ast.parse(mods[pkg].read_text())) or "").lower(), pkg


def test_the_rules_catch_planted_violations():
    """Negative controls: an upward import, verifier importing proofs, a circle."""
    planted = {"verifier.arith.rank": {"verifier.model.mha"},
               "verifier.report.build": {"proofs.mahdavi2024.claim1_fit_one_head"},
               "proofs.mahdavi2024.a": {"proofs.mahdavi2024.b"}, "proofs.mahdavi2024.b": {"proofs.mahdavi2024.a"}}
    found = violations(planted)
    assert any(v.startswith("verifier.arith.rank imports verifier.model.mha") for v in found)
    assert any(v.startswith("verifier.report.build imports proofs.") for v in found)
    assert cycles(planted) == [["proofs.mahdavi2024.a", "proofs.mahdavi2024.b"]]


def test_lazy_imports_are_seen(tmp_path):
    """An import inside a function counts (the old Claim 1 <-> Prop. 1 circle was lazy)."""
    f = tmp_path / "m.py"
    f.write_text("def f():\n    from verifier.model.mha import softmax\n    return softmax\n")
    assert imports_of("verifier.arith.m", f, {"verifier.model.mha", "verifier.arith.m"}) == {"verifier.model.mha"}
