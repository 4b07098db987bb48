"""Papers, their statements, checkers, negative controls and figure data.

A paper's package in ``proofs/`` declares itself and its catalogue (every
statement id with its paper reference, one-line summary and what it depends
on, whether or not a checker exists) with :func:`register_paper`.  A module of
that package attaches its checker with ``@statement("lemma3")``, its false
variants with ``@negative_control("lemma3", "...")`` and the numbers of a
report figure with ``@figure("margins", ...)`` and a construction other layers
reuse with ``@construction("proposition1.key_query_weights")``, the way
mpmath's ``defun`` attaches functions: nothing to subclass.  The report and the
experiments get what they need from a construction through these entries,
never by importing ``proofs``.

A checker has the signature ``check(instance, *, prec=128, seed=0, **options)
-> Evidence``; a negative control ``control(*, prec=128, seed=0) -> Evidence``
whose verdict must be one of its ``expect`` verdicts; figure data
``data(seed) -> dict`` of plain numbers.

Each paper has its own instance options (:class:`InstanceOptions`: defaults,
CLI flags, how an instance is drawn, read from a file and varied by the
report); a paper that declares none uses the first paper's
(:data:`DEFAULT_OPTIONS`, ``make_instance``, ``load_data``).  A statement the
paper states but no finite instance can decide is declared ``not_checkable``
with the reason: it is listed, never run and never counted as passing.
Tables of numbers the report shows (e.g. the comparison of two papers) are
registered with ``@table`` like figures.
"""
from __future__ import annotations

import importlib
import pkgutil
from dataclasses import dataclass, field
from typing import Callable

from verifier.errors import NotImplementedStatement

#: The package whose subpackages (its ``__all__``, in order) are the papers.
PROOFS_PACKAGE = "proofs"

DEFAULT_OPTIONS = {"H": 2, "n": 3, "d": 5, "d_h": None, "d_v": None, "d_out": 1, "T": None,
                   "context": "random", "degenerate": None, "seed": 0}


@dataclass(frozen=True)
class Flag:
    """One instance option on the command line: ``--flag`` sets ``key``."""

    key: str
    flag: str
    type: Callable = int
    help: str = ""
    choices: tuple | None = None


@dataclass(frozen=True)
class InstanceOptions:
    """A paper's instance options: ``defaults`` (every key a checker of the
    paper may read), the CLI ``flags`` that set them, ``make(**options)`` that
    draws an instance, ``load(path, exact_input=..., **options)`` that reads
    one from a file (``exact_input``: ``--exact-input``), and ``vary(base,
    rng)`` that draws a nearby option set for the report.

    With a data file, ``from_data`` names the options the file determines
    (each read off the instance's attribute of the same name: a given value
    that differs is refused, never ignored) and ``draws`` the options that
    only draw generated data (refused with a file)."""

    defaults: dict
    flags: tuple[Flag, ...]
    make: Callable
    load: Callable | None = None
    vary: Callable | None = None
    from_data: tuple[str, ...] = ()
    draws: tuple[str, ...] = ()


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
    paper: str = ""
    check: Callable | None = None
    module: str = ""
    defaults: dict = field(default_factory=dict)
    doc: str = ""
    controls: list[NegativeControl] = field(default_factory=list)
    not_checkable: str = ""  # the reason, for a statement no finite instance decides
    requires: tuple[str, ...] = ()  # hypotheses it needs (verifier.statements.hypotheses)
    writes_weights: bool = False  # accepts save_weights= (--save-weights)
    reads_given: bool = False  # certifies on Instance.exact_array (the values given), not the float64 copy
    conclusion_over: str = "stored"  # what its conclusion's certificate covers on a user's floats (CONCLUSION_OVER)
    margin: str = ""  # what Evidence.margin measures, in words (the report's column)
    measure: str = ""  # the key of Evidence.measured the report shows (its largest value)
    exists: bool = False  # an existence statement ("there are weights ..."): refuted only if NO choice works
    refutes: tuple = ()  # every Refutation its checker may conclude FALSE with (docs/VERDICT_PATHS.md)

    @property
    def implemented(self) -> bool:
        return self.check is not None

    @property
    def status_word(self) -> str:
        """"implemented", "not checkable: <reason>" or "not implemented"."""
        if self.implemented:
            return "implemented"
        return f"not checkable: {self.not_checkable}" if self.not_checkable else "not implemented"

    def options(self, **overrides) -> dict:
        """Instance options: the paper's defaults < the statement's < the caller's (None = default).

        A statement whose default instance fixes T (e.g. Prop. 2's T = 9 =
        capacity + 2) keeps T RELATIVE to the capacity H(r-1)+1 when the
        caller changes H, n or d_h without giving T: ``check proposition2
        --H 20 --n 32 --d 64`` runs on T = 621 + 2, not on T = 9.  A default
        given as a function of the other options (``T=lambda o: o["d"] + 4``:
        Prop. 3's T above its own threshold at any d) is evaluated on them."""
        base = dict(paper_defaults(self.paper))
        base.update(self.defaults)
        given = {k: v for k, v in overrides.items() if v is not None}
        derived = {k: v for k, v in base.items() if callable(v) and k not in given}
        opts = {k: v for k, v in base.items() if k not in derived}
        opts.update(given)
        resized = any(k in given for k in ("H", "n", "d_h"))
        if resized and "T" not in given and base.get("T") is not None and "T" not in derived \
                and all(k in opts for k in ("H", "n", "d_h")):
            opts["T"] = int(max(1, base["T"] + _capacity(opts) - _capacity(base)))
        for k, f in derived.items():
            opts[k] = f(opts)
        return opts


class derived:
    """A statement default computed from the other options, shown by its formula:
    ``T=derived("d + 4", lambda o: o["d"] + 4)``."""

    def __init__(self, text: str, fn: Callable):
        self.text, self.fn = text, fn

    def __call__(self, options: dict):
        return self.fn(options)

    def __repr__(self) -> str:
        return self.text

    __str__ = __repr__


def _capacity(o: dict) -> int:
    """H(r-1)+1 with r = min(n, d_h) (d_h None: n)."""
    return int(o["H"]) * (min(int(o["n"]), int(o["d_h"] or o["n"])) - 1) + 1


@dataclass(frozen=True)
class Paper:
    key: str
    title: str
    citation: str
    statements: tuple[str, ...]
    instance_options: InstanceOptions | None = None  # None: the first paper's (DEFAULT_OPTIONS)
    reconstruction: str = ""  # non-empty: every checker of the paper checks our reconstruction of it (why)


@dataclass(frozen=True)
class FigureData:
    """Numbers for one report figure, computed by a checker module's
    construction; ``statement`` is the id the figure illustrates."""

    name: str
    statement: str
    title: str
    caption: str
    data: Callable[[int], dict]


PAPERS: dict[str, Paper] = {}
REGISTRY: dict[str, Statement] = {}
FIGURES: dict[str, FigureData] = {}
CONSTRUCTIONS: dict[str, Callable] = {}
TABLES: dict[str, "TableData"] = {}


@dataclass(frozen=True)
class TableData:
    """Rows of one report table, computed by a checker module; ``data(seed)``
    returns ``{"columns": [...], "rows": [[...], ...], "notes": [...]}``."""

    name: str
    statement: str
    title: str
    caption: str
    data: Callable[[int], dict]


def register_paper(key: str, *, title: str, citation: str,
                   catalogue: dict[str, tuple[str, str, tuple[str, ...]]],
                   instance_options: InstanceOptions | None = None,
                   not_checkable: dict[str, str] | None = None, reconstruction: str = "") -> Paper:
    """Declare a paper and every statement id it has (idempotent per key);
    ``instance_options`` are the paper's own (default: the first paper's);
    ``not_checkable`` maps statement ids to the reason no checker exists; ``reconstruction`` (non-empty) says
    that every checker of the paper checks our reconstruction of it, and why."""
    if key in PAPERS:
        return PAPERS[key]
    clash = sorted(set(catalogue) & set(REGISTRY))
    if clash:
        raise KeyError(f"paper {key!r}: statement ids already taken by another paper: {clash}")
    unknown = sorted(set(not_checkable or {}) - set(catalogue))
    if unknown:
        raise KeyError(f"paper {key!r}: not_checkable ids missing from the catalogue: {unknown}")
    for sid, (ref, summary, deps) in catalogue.items():
        REGISTRY[sid] = Statement(sid, ref, summary, tuple(deps), paper=key,
                                  not_checkable=(not_checkable or {}).get(sid, ""))
    PAPERS[key] = Paper(key, title, citation, tuple(catalogue), instance_options, reconstruction)
    return PAPERS[key]


def paper_defaults(paper: str) -> dict:
    """The instance option defaults of ``paper`` (the first paper's when it declares none)."""
    p = PAPERS.get(paper)
    return dict(p.instance_options.defaults) if p and p.instance_options else dict(DEFAULT_OPTIONS)


def instance_options(sid: str) -> InstanceOptions | None:
    """The instance options of the paper stating ``sid`` (None: the first paper's)."""
    p = PAPERS.get(REGISTRY[sid].paper)
    return p.instance_options if p else None


def paper_of(sid: str) -> Paper:
    return PAPERS[REGISTRY[sid].paper]


#: what a checker's conclusion certifies on data read at its precision
#: (:mod:`verifier.data.precision`): "box" every value the data stand for;
#: "any" it does not depend on the data's values (a symbolic proof, the
#: sizes alone); "stored" the values stored only (the runner then never
#: lets a verified verdict stand for the whole set: inconclusive)
CONCLUSION_OVER = ("box", "any", "stored")


def statement(sid: str, *, requires: tuple[str, ...] = (), writes_weights: bool = False, margin: str = "",
              measure: str = "", reads_given: bool = False, conclusion_over: str = "stored", exists: bool = False,
              refutes: tuple = (), **defaults):
    """Register ``check`` as the checker of statement ``sid``; ``defaults``
    override the CLI's instance options for this statement.

    ``requires``: the hypotheses the statement needs, by name (shape ones
    such as "n < d" are decided by the runner before the checker runs, see
    :mod:`verifier.statements.hypotheses`; the others by the checker);
    ``writes_weights``: the checker accepts ``save_weights=path``;
    ``margin``: what its Evidence.margin measures; ``measure``: the key of
    its Evidence.measured the report tabulates (largest over instances);
    ``reads_given``: its certificates read the values the user gave
    (``Instance.exact_array``), so a float64 copy that rounds them (int64
    beyond 2^53, long double) does not make its verdict one on rounded data;
    ``conclusion_over``: what its conclusion's certificate covers on a
    user's floats (:data:`CONCLUSION_OVER`); ``exists``: an existence statement (refuted only by a proof that no
    choice works); ``refutes``: every
    :class:`~verifier.statements.refutations.Refutation` its checker may
    conclude FALSE with (the runner refuses any other: the inventory
    docs/VERDICT_PATHS.md is complete)."""
    if conclusion_over not in CONCLUSION_OVER:
        raise ValueError(f"conclusion_over {conclusion_over!r} not in {CONCLUSION_OVER}")
    if sid not in REGISTRY:
        raise KeyError(f"unknown statement id {sid!r}: add it to its paper's catalogue first")

    def register(fn):
        st = REGISTRY[sid]
        st.check = fn
        st.module = fn.__module__
        st.defaults = dict(defaults)
        st.requires, st.writes_weights, st.reads_given = tuple(requires), bool(writes_weights), bool(reads_given)
        st.conclusion_over = conclusion_over
        st.margin, st.measure = margin, measure
        st.exists, st.refutes = bool(exists), tuple(refutes)
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


def figure(name: str, *, statement: str, title: str, caption: str):
    """Register ``data(seed) -> dict``, the numbers of report figure ``name``."""
    if statement not in REGISTRY:
        raise KeyError(f"figure {name!r}: unknown statement id {statement!r}")

    def register(fn):
        FIGURES[name] = FigureData(name, statement, title, caption, fn)
        return fn

    return register


def table(name: str, *, statement: str, title: str, caption: str):
    """Register ``data(seed) -> dict``, the rows of report table ``name``."""
    if statement not in REGISTRY:
        raise KeyError(f"table {name!r}: unknown statement id {statement!r}")

    def register(fn):
        TABLES[name] = TableData(name, statement, title, caption, fn)
        return fn

    return register


def construction(name: str):
    """Register a construction (a ``build_*`` function or a certificate helper)
    under ``name`` ("<statement id>.<what>") for the experiments and the
    report, which may not import ``proofs``."""
    if name.split(".")[0] not in REGISTRY:
        raise KeyError(f"construction {name!r}: unknown statement id {name.split('.')[0]!r}")

    def register(fn):
        CONSTRUCTIONS[name] = fn
        return fn

    return register


_loaded = False


def load_all() -> dict[str, Statement]:
    """Import every paper package of ``proofs/`` and every module in it (each
    registers itself).  The package is found by name: plugin discovery, so
    the engine never imports a name from ``proofs``."""
    global _loaded
    if not _loaded:
        root = importlib.import_module(PROOFS_PACKAGE)
        for paper in getattr(root, "__all__", ()):
            pkg = importlib.import_module(f"{PROOFS_PACKAGE}.{paper}")
            for info in sorted(pkgutil.iter_modules(pkg.__path__), key=lambda i: i.name):
                if not info.name.startswith("_"):
                    importlib.import_module(f"{PROOFS_PACKAGE}.{paper}.{info.name}")
        order = list(getattr(root, "__all__", ()))  # papers in the package's order, however they were imported
        for key in sorted(PAPERS, key=lambda k: order.index(k) if k in order else len(order)):
            PAPERS[key] = PAPERS.pop(key)
        for sid in [sid for paper in PAPERS.values() for sid in paper.statements]:
            REGISTRY[sid] = REGISTRY.pop(sid)
        _loaded = True
    return REGISTRY


def get(sid: str) -> Statement:
    load_all()
    if sid not in REGISTRY:
        raise KeyError(sid)
    st = REGISTRY[sid]
    if not st.implemented:
        if st.not_checkable:
            raise NotImplementedStatement(f"statement {sid!r} ({st.reference}) is not checkable: {st.not_checkable}")
        raise NotImplementedStatement(f"statement {sid!r} ({st.reference}) has no checker yet")
    return st


def figure_data(name: str) -> FigureData:
    load_all()
    if name not in FIGURES:
        raise KeyError(f"no checker registers figure data {name!r}")
    return FIGURES[name]


def table_data(name: str) -> TableData:
    load_all()
    if name not in TABLES:
        raise KeyError(f"no checker registers table data {name!r}")
    return TABLES[name]


def get_construction(name: str) -> Callable:
    """The construction registered as ``name`` (e.g.
    ``get_construction("proposition1.key_query_weights")(instance, seed=0)``)."""
    load_all()
    if name not in CONSTRUCTIONS:
        raise KeyError(f"no checker registers construction {name!r} (known: {', '.join(sorted(CONSTRUCTIONS))})")
    return CONSTRUCTIONS[name]
