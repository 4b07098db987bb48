"""The statements of the paper, their checkers and their negative controls.

Every id of STATEMENTS.md is listed in :data:`CATALOGUE` (paper reference,
one-line summary, what it depends on), whether or not a checker exists.  A
module of ``proofs/`` attaches its checker with ``@statement("lemma3")`` and
its false variants with ``@negative_control("lemma3", "...")``, the way
mpmath's ``defun`` attaches functions: nothing to subclass.

A checker has the signature ``check(instance, *, prec=128, seed=0, **options)
-> Evidence``; a negative control ``control(*, prec=128, seed=0) -> Evidence``
whose verdict must be one of its ``expect`` verdicts.
"""
from __future__ import annotations

import importlib
import pkgutil
from dataclasses import dataclass, field
from typing import Callable

from .errors import NotImplementedStatement

# id: (paper reference, summary, depends on)
CATALOGUE: dict[str, tuple[str, str, tuple[str, ...]]] = {
    "definition1": ("Def. 1", "Kruskal rank: the largest k such that every k-subset is independent", ()),
    "definition2": ("Def. 2", "General position: Kruskal rank min(#vectors, d)", ("definition1",)),
    "assumption1": ("Assumption 1", "the queries have Kruskal rank >= n", ("definition1",)),
    "assumption2": ("Assumption 2", "every context E^(t) has rank n", ()),
    "assumption3": ("Assumption 3", "ebar = e + mean of context tokens has Kruskal rank >= n", ("definition1",)),
    "theorem1": ("Thm. 1", "H heads memorize H(r-1)+1 arbitrary labels exactly", ("proposition1", "step2")),
    "proposition1": ("Prop. 1, App. B", "key/query weights with rank(Z) >= min(H(r-1)+1, T)",
                     ("claim1", "claim2", "lemma1", "appendixB2")),
    "step2": ("Sec. 4.1 Step 2", "full-row-rank Z: the readout solves Z M = Y", ()),
    "remark1": ("Remark 1", "queries of Kruskal rank k < n: r = min(n, k, d_h)", ("proposition1",)),
    "appendixC": ("App. C", "skip connection: memorize shifted labels", ("theorem1",)),
    "claim1": ("Claim 1, App. B.1", "one head fits r examples' softmax targets exactly", ()),
    "lemma3": ("Lemma 3, App. D", "rank-one W' = v w^T: kills J's queries (20), distinct entries off J (21)", ()),
    "lemma4": ("Lemma 4, App. D", "softmax saturation with explicit c0(eps)", ()),
    "claim2": ("Claim 2, App. B.1", "W* + c W' fits r-1 examples, keeps the rest within eps of one-hot",
               ("claim1", "lemma3", "lemma4")),
    "lemma1": ("Lemma 1, App. D", "rank [[A, B], [0, C]] >= rank A + rank C", ()),
    "lemma5": ("Lemma 5, App. D", "Weyl: ||A - B||_2 < sigma_min^+(A) => rank B >= rank A", ()),
    "appendixB2": ("App. B.2", "a finite c suffices: explicit perturbation bound < sigma_min^+", ("lemma4", "lemma5")),
    "proposition2": ("Prop. 2, App. E", "shared contexts: rank(Z) <= H(n-1)+1 for any weights", ()),
    "proposition5": ("Prop. 5, App. I", "tokens summing to c: rank(Z) <= H(d-1)+1 for any weights", ()),
    "proposition3": ("Prop. 3, App. F", "a ReLU net with m units cannot memorize T > m(d+2)+1", ()),
    "remark2": ("Remark 2", "MHA's Omega(Hn) vs ReLU's O(md) at equal parameter counts", ("proposition3",)),
    "proposition4": ("Prop. 4, App. G", "trivial self-attention with skip maps Assumptions 2-3 to 1-2", ("lemma2",)),
    "lemma2": ("Lemma 2, App. D", "x_i + xbar independent; det(I + (c/n) 1 1^T) = 1 + c", ()),
}

DEFAULT_OPTIONS = {"H": 2, "n": 3, "d": 5, "d_h": None, "d_v": None, "d_out": 1, "T": None,
                   "context": "random", "degenerate": None, "seed": 0}


@dataclass
class NegativeControl:
    description: str
    run: Callable
    expect: tuple[str, ...]


@dataclass
class Statement:
    id: str
    reference: str
    summary: str
    depends: tuple[str, ...]
    check: Callable | None = None
    module: str = ""
    defaults: dict = field(default_factory=dict)
    doc: str = ""
    controls: list[NegativeControl] = field(default_factory=list)

    @property
    def implemented(self) -> bool:
        return self.check is not None

    def options(self, **overrides) -> dict:
        """Instance options: global defaults < the statement's < the caller's (None = default)."""
        opts = dict(DEFAULT_OPTIONS)
        opts.update(self.defaults)
        opts.update({k: v for k, v in overrides.items() if v is not None})
        return opts


REGISTRY: dict[str, Statement] = {
    sid: Statement(sid, ref, summary, deps) for sid, (ref, summary, deps) in CATALOGUE.items()
}


def statement(sid: str, **defaults):
    """Register ``check`` as the checker of statement ``sid``; ``defaults``
    override the CLI's instance options for this statement."""
    if sid not in REGISTRY:
        raise KeyError(f"unknown statement id {sid!r}: add it to CATALOGUE first")

    def register(fn):
        st = REGISTRY[sid]
        st.check = fn
        st.module = fn.__module__
        st.defaults = dict(defaults)
        mod = importlib.import_module(fn.__module__)
        st.doc = (mod.__doc__ or "").strip()
        return fn

    return register


def negative_control(sid: str, description: str, *, expect=("refuted",)):
    """Register a false variant of ``sid`` that its checker must reject."""

    def register(fn):
        REGISTRY[sid].controls.append(NegativeControl(description, fn, tuple(expect)))
        return fn

    return register


_loaded = False


def load_all() -> dict[str, Statement]:
    """Import every module of ``proofs/`` (each registers itself)."""
    global _loaded
    if not _loaded:
        import proofs

        for info in sorted(pkgutil.iter_modules(proofs.__path__), key=lambda i: i.name):
            if not info.name.startswith("_"):
                importlib.import_module(f"proofs.{info.name}")
        _loaded = True
    return REGISTRY


def get(sid: str) -> Statement:
    load_all()
    if sid not in REGISTRY:
        raise KeyError(sid)
    st = REGISTRY[sid]
    if not st.implemented:
        raise NotImplementedStatement(f"statement {sid!r} ({st.reference}) has no checker yet")
    return st
