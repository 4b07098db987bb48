"""The inventory of verdict paths, generated from the code: for every
registered statement, each place its checker concludes (a ``conclude`` call,
read from the module's syntax tree), what a TRUE there rests on (the
``method`` it names), what a FALSE rests on (the declared
:class:`~verifier.statements.refutations.Refutation` it passes: a certified
counterexample, a proof that no choice works, or a failed construction,
which concludes "inconclusive"), and how each declared hypothesis is decided
(from the sizes, by another statement's checker, or by the checker itself,
with the status expressions of the ``Hypothesis`` it builds).

``docs/VERDICT_PATHS.md`` is :func:`markdown` (``python -m
verifier.statements.verdict_paths > docs/VERDICT_PATHS.md``);
``tests/verifier/statements/test_verdict_paths.py`` fails when it is out of
date, when a FALSE-capable ``conclude`` names no refutation, or when a
refutation is not one its statement declares and allows.

>>> src = "def f(x):\\n    d = Decision.TRUE if x else Decision.UNDECIDED\\n    return conclude('s', d, claimed=x)\\n"
>>> [(s.function, s.statement, s.may_be_false, s.may_be_true) for s in conclude_sites(src)]
[('f', 's', False, True)]
"""
from __future__ import annotations

import ast
import importlib.util
from dataclasses import dataclass
from pathlib import Path

from verifier.statements import registry
from verifier.statements.hypotheses import DATA, NECESSARY, SHAPE
from verifier.statements.refutations import KINDS, Refutation

HEADER = """# Verdict paths

Generated from the code by `python -m verifier.statements.verdict_paths > docs/VERDICT_PATHS.md`
(do not edit by hand; `tests/verifier/statements/test_verdict_paths.py` fails when this page is out of
date).  For every statement: where its checker concludes (each `conclude` call, from the syntax tree),
what a TRUE rests on (the method it names), what a FALSE rests on (the declared refutation: its kind,
its certificate, and the variant of the claim when the caller changed it), and how each hypothesis is
decided.  A failed construction is never a refutation: it concludes "inconclusive" with the reason
(`verifier.statements.evidence.conclude`).  An existence statement (there are weights ...) is refuted
only by a proof that no choice works; a universal one by a certified counterexample.
"""

@dataclass(frozen=True)
class Site:
    """One ``conclude(...)`` call: where, for which statement (a literal id or
    None when passed in), what decides, and what a FALSE rests on."""

    module: str
    function: str
    line: int
    statement: str | None
    decision: str
    method: str
    refutations: tuple[str, ...]
    may_be_false: bool
    may_be_true: bool = True


def _source(module: str) -> str:
    spec = importlib.util.find_spec(module)
    return Path(spec.origin).read_text() if spec and spec.origin else ""


def module_sites(module: str) -> list[Site]:
    """The conclude calls of ``module``, their refutations resolved to its Refutation constants."""
    return conclude_sites(_source(module), module, importlib.import_module(module))


def _enclosing(tree: ast.AST) -> dict[int, str]:
    """id(node) -> the name of the function it lies in (the outermost def)."""
    out = {}
    for fn in [n for n in ast.walk(tree) if isinstance(n, (ast.FunctionDef, ast.AsyncFunctionDef))]:
        for node in ast.walk(fn):
            out.setdefault(id(node), fn.name)
    return out


def _functions(tree: ast.AST) -> dict[str, ast.AST]:
    return {n.name: n for n in ast.walk(tree) if isinstance(n, (ast.FunctionDef, ast.AsyncFunctionDef))}


def _assigned(fn: ast.AST, name: str) -> list[ast.AST]:
    """The expressions assigned to ``name`` in ``fn`` (tuple assignments matched by position)."""
    out = []
    for a in ast.walk(fn):
        if isinstance(a, ast.Assign):
            for t in a.targets:
                if isinstance(t, ast.Name) and t.id == name:
                    out.append(a.value)
                elif isinstance(t, ast.Tuple):
                    for i, e in enumerate(t.elts):
                        if isinstance(e, ast.Name) and e.id == name:
                            out.append(a.value.elts[i] if isinstance(a.value, ast.Tuple) and
                                       len(a.value.elts) == len(t.elts) else a.value)
    return out


def _follow(expr: ast.AST, fn, tree, mod, leaf, depth: int = 0) -> set:
    """Values an expression may take, through the function's assignments and the return values of
    helper functions (the module's, or imported from another module); ``leaf(node, mod)`` gives a
    node's own values (a set) or None to look further."""
    own = leaf(expr, mod)
    if own is not None:
        return own
    if depth > 5:
        return {"?"}
    if isinstance(expr, ast.IfExp):
        return _follow(expr.body, fn, tree, mod, leaf, depth + 1) | _follow(expr.orelse, fn, tree, mod, leaf, depth + 1)
    if isinstance(expr, ast.Name) and fn is not None and _assigned(fn, expr.id):
        return set().union(*(_follow(v, fn, tree, mod, leaf, depth + 1) for v in _assigned(fn, expr.id)))
    if isinstance(expr, ast.Call) and isinstance(expr.func, ast.Name):
        target = getattr(mod, expr.func.id, None) if mod is not None else None
        helper, htree, hmod = _functions(tree).get(expr.func.id), tree, mod
        if helper is None and callable(target) and getattr(target, "__module__", None):
            hmod = importlib.import_module(target.__module__)
            htree = ast.parse(_source(target.__module__))
            helper = _functions(htree).get(target.__name__)
        if helper is not None:
            rets = [r.value for r in ast.walk(helper) if isinstance(r, ast.Return) and r.value is not None]
            if rets:
                return set().union(*(_follow(v, helper, htree, hmod, leaf, depth + 1) for v in rets))
    return {"?"}


def _refutation_leaf(node, mod):
    if isinstance(node, ast.Name) and mod is not None and isinstance(getattr(mod, node.id, None), Refutation):
        return {node.id}
    if isinstance(node, ast.Constant) and node.value is None:
        return set()
    return None


def _decision_leaf(node, mod):
    if isinstance(node, ast.Attribute) and isinstance(node.value, ast.Name) and node.value.id == "Decision" \
            and node.attr in ("TRUE", "FALSE", "UNDECIDED"):
        return {node.attr}
    return None


def _method_text(expr: ast.AST, fn) -> str:
    """The ``method=`` argument as written, a local variable replaced by what is assigned to it
    (first and augmented assignments, in order)."""
    if isinstance(expr, ast.Name) and fn is not None:
        parts = [ast.unparse(v) for v in _assigned(fn, expr.id)]
        parts += [f"+= {ast.unparse(a.value)}" for a in ast.walk(fn) if isinstance(a, ast.AugAssign)
                  and isinstance(a.target, ast.Name) and a.target.id == expr.id]
        if parts:
            return " / ".join(parts)
    return ast.unparse(expr)


def conclude_sites(source: str, module: str = "", mod=None) -> list[Site]:
    """Every ``conclude(...)`` call in ``source``; ``mod``: the imported module, whose Refutation
    constants and helper functions resolve what a ``refutation=`` may be (None: names as written)."""
    tree = ast.parse(source)
    where = _enclosing(tree)
    funcs = _functions(tree)
    sites = []
    for node in ast.walk(tree):
        if not (isinstance(node, ast.Call) and getattr(node.func, "id", getattr(node.func, "attr", "")) == "conclude"):
            continue
        if len(node.args) < 2:
            continue
        sid = node.args[0].value if isinstance(node.args[0], ast.Constant) else None
        decision = ast.unparse(node.args[1])
        kw = {k.arg: k.value for k in node.keywords}
        fn = where.get(id(node), "<module>")
        values = _follow(node.args[1], funcs.get(fn), tree, mod, _decision_leaf)
        if "refutation" not in kw:
            refs = ()
        elif mod is None:
            refs = tuple(sorted({n.id for n in ast.walk(kw["refutation"]) if isinstance(n, ast.Name)} - {"None"}))
        else:
            refs = tuple(sorted(_follow(kw["refutation"], funcs.get(fn), tree, mod, _refutation_leaf)))
        method = _method_text(kw["method"], funcs.get(fn)) if "method" in kw else "'float64' (default)"
        sites.append(Site(module, fn, node.lineno, sid, decision, method, refs, bool(values - {"TRUE", "UNDECIDED"}),
                          "TRUE" in values or "?" in values))
    return sorted(sites, key=lambda s: s.line)


def _imported_functions(source: str) -> dict[str, str]:
    """name -> sibling module, for ``from .x import name`` lines."""
    out = {}
    for node in ast.walk(ast.parse(source)):
        if isinstance(node, ast.ImportFrom) and node.level == 1 and node.module:
            for a in node.names:
                out[a.asname or a.name] = node.module
    return out


def statement_sites(st) -> list[Site]:
    """The conclude calls a statement's checker may reach: in its module, and in the functions it
    imports from sibling modules; a call with a literal statement id counts for that id only."""
    pkg = st.module.rsplit(".", 1)[0]
    own = _source(st.module)
    sites = [s for s in module_sites(st.module) if s.statement in (None, st.id)]
    for name, sibling in sorted(_imported_functions(own).items()):
        mod = f"{pkg}.{sibling}"
        sites += [s for s in module_sites(mod) if s.function == name and s.statement in (None, st.id)]
    return sites


def _hypothesis_calls(tree: ast.AST, where: str) -> list[tuple[str, str, str]]:
    out = []
    for node in ast.walk(tree):
        if not isinstance(node, ast.Call):
            continue
        fn = getattr(node.func, "id", getattr(node.func, "attr", ""))
        if fn == "Hypothesis" and len(node.args) >= 2:
            out.append((f"{where}:{node.lineno}", ast.unparse(node.args[0]), f"status {ast.unparse(node.args[1])}"))
        elif fn == "hypothesis_from_evidence" and len(node.args) >= 2:
            out.append((f"{where}:{node.lineno}", ast.unparse(node.args[0]),
                        f"the verdict of {ast.unparse(node.args[1])}"))
    return out


def hypothesis_sites(st) -> list[tuple[str, str, str]]:
    """(site, name, how the status is decided) of every ``Hypothesis(...)`` the checker's module
    builds, and those of the functions it imports from sibling modules; and every
    ``hypothesis_from_evidence(name, check_x(...))`` (decided by statement x's verdict)."""
    source = _source(st.module)
    out = _hypothesis_calls(ast.parse(source), st.module.rsplit(".", 1)[-1])
    pkg = st.module.rsplit(".", 1)[0]
    for name, sibling in sorted(_imported_functions(source).items()):
        fn = _functions(ast.parse(_source(f"{pkg}.{sibling}"))).get(name)
        if fn is not None:
            out += _hypothesis_calls(fn, f"{sibling}.{name}")
    return out


def how_decided(name: str) -> str:
    """How the runner or the hypothesis vocabulary decides a declared hypothesis."""
    if name in SHAPE:
        return "from the sizes (refuted by the sizes themselves)"
    if name in DATA:
        extra = "; the sizes alone refute it where " + "n > d" if name in NECESSARY else ""
        return f"by `{DATA[name]}`'s checker (its FALSE paths below){extra}"
    return "by the checker itself (the Hypothesis sites below)"


def _cell(text: str) -> str:
    return text.replace("|", "\\|").replace("\n", " ")


def statement_markdown(st) -> list[str]:
    kind = "existence (refuted only if NO choice works)" if st.exists else "universal / a property of the data"
    out = [f"### `{st.id}`: {st.reference}", "", f"*{kind}*", ""]
    if st.requires:
        out += ["Hypotheses:", ""] + [f"- `{h}`: {how_decided(h)}" for h in st.requires] + [""]
    out += ["FALSE rests on (declared refutations):", ""]
    if st.refutes:
        out += ["| kind | certified by | variant of the claim |", "|---|---|---|"]
        out += [f"| {r.kind} | {_cell(r.by)} | {_cell(r.variant) or '-'} |" for r in st.refutes]
    else:
        out += ["- none: the checker never concludes FALSE"]
    out += ["", "Where it concludes:", "", "| site | decision | TRUE: method | FALSE: refutation |", "|---|---|---|---|"]
    for s in statement_sites(st):
        mod = importlib.import_module(s.module)
        mine = [r for r in s.refutations if getattr(mod, r) in st.refutes]  # not another statement's path
        false = ", ".join(f"{r} ({getattr(mod, r).kind})" for r in mine) if s.may_be_false else "(never FALSE)"
        true = _cell(s.method) if s.may_be_true else "(never TRUE)"
        out.append(f"| `{s.module.rsplit('.', 1)[-1]}.{s.function}`:{s.line} | `{_cell(s.decision)}` | {true} | "
                   f"{_cell(false)} |")
    hs = hypothesis_sites(st)
    if hs:
        out += ["", "Hypothesis sites (the checker's module and the functions it imports):", ""]
        out += [f"- `{site}`: {_cell(name)}: {_cell(how)}" for site, name, how in hs]
    return out + [""]


def markdown() -> str:
    """docs/VERDICT_PATHS.md."""
    reg = registry.load_all()
    out = [HEADER, "## Kinds of refutation", "", "| kind | meaning |", "|---|---|"]
    out += [f"| {k} | {_cell(v)} |" for k, v in KINDS.items()] + [""]
    for paper in registry.PAPERS.values():
        out += [f"## {paper.title}", ""]
        for sid in paper.statements:
            st = reg[sid]
            if not st.implemented:
                out += [f"### `{sid}`: {st.reference}", "", f"*{st.status_word}*: no verdict path", ""]
                continue
            out += statement_markdown(st)
    return "\n".join(out).rstrip() + "\n"


if __name__ == "__main__":  # pragma: no cover
    print(markdown(), end="")
