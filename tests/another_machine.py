"""Another machine, simulated: the float steps come out as another CPU and BLAS
might compute them (issue 17, items 3 and 5).  One module, three uses.

What one machine decides is not what every machine decides: a pivot, a witness,
a float bound's last digits, whether a float inverse raises.  Once
:func:`install` has run (or within :func:`on_another_machine`):

* **LAPACK-like routines** (numpy.linalg and scipy.linalg: inv, solve, svd, qr,
  eigh, eigvalsh, cholesky, lstsq, pinv, matrix_rank, norm, ...) get their float
  inputs and their float outputs moved by up to ``ulps`` units in the last place,
  entry by entry (relative, so exact zeros and signs stay), and the vectors that
  are defined only up to sign (singular vectors, eigenvectors, Q's columns with
  R's rows) come with other signs.  A backward-stable
  routine on another machine returns the exact result of a normwise-nearby
  input, so this is within what another machine may return; the certificates
  use these results only as approximations (a preconditioner, a pivot order).
* **Products and sums** (np.matmul, np.dot, np.sum, the backend's ``matmul``/
  ``mm``/``batched_matmul``) are computed in another summation order, never
  moved by arbitrary ulps: the inner (summed) index is permuted (reversed, or a
  random permutation) and split into blocks whose partial results are added in
  turn.  Every such result is a legal float64 result (a summation tree over the
  same terms), so the a priori bounds of :mod:`verifier.arith.float_bounds`
  must hold for it, and an integer-valued result (exact in every order) stays
  exact.  Python's ``a @ b`` and ``a.sum()`` on numpy arrays cannot be
  intercepted (ndarray's slots are fixed in C): the certificates multiply
  through the backend, which is patched, and the rest is floats that only
  propose.

The perturbation is deterministic: a function of a seed (the test's node id
under pytest), the routine and its input's bytes (so the same input gives the
same output within a run, as on a real machine).  torch's own linalg (the torch
backends' inverse, Cholesky and eigvalsh) is moved through the backend's
methods.  ``callers`` (a tuple of module-name prefixes, e.g.
:data:`PROJECT`) restricts the numpy/scipy patches to calls made from those
modules (torch and scipy's internals then compute as they do here); by
default every caller is moved but matplotlib (:data:`SPARED`).

The three uses:

1. **The suite**: ``pytest --another-machine`` (tests/conftest.py calls
   :func:`install` and registers :class:`Plugin`: one seed per test).
2. **One block of a test**, as a second machine beside this one::

       from another_machine import on_another_machine   # tests/ is on pytest's path
       with on_another_machine(ulps=4, seed=3):
           run_the_code()

   It installs the patches for the block (and removes them after), or, under
   ``--another-machine``, swaps in its own seed, ulps and callers for the block.
3. **A command line, outside pytest**: from the repository root, ::

       python -m tests.another_machine report --out /tmp/elsewhere [--seed 0] [--quick]
       python -m tests.another_machine --machine-seed 7 --ulps 4 check claim1

   runs ``mha-verify`` with its arguments as another machine would; the
   options before them choose the machine (:func:`main`).  The committed
   report regenerated this way is byte-identical to ``reports/`` (REPORT.md,
   results.json, index.html, figures; run.json records the machine's choices).

``MHA_ANOTHER_MACHINE_ULPS`` overrides the default ulps (a stress test).
"""
from __future__ import annotations

import contextlib
import functools
import os
import sys
import zlib

import numpy as np

#: largest relative move of one entry, in units of 2^-52 (MHA_ANOTHER_MACHINE_ULPS overrides: a stress test)
ULPS = int(os.environ.get("MHA_ANOTHER_MACHINE_ULPS", "2"))

NUMPY_LINALG = ("inv", "solve", "svd", "svdvals", "qr", "eig", "eigvals", "eigh", "eigvalsh", "cholesky", "lstsq",
                "pinv", "matrix_rank", "det", "slogdet", "norm", "tensorsolve", "tensorinv")
SCIPY_LINALG = ("inv", "solve", "solve_triangular", "svd", "svdvals", "qr", "lu", "lu_factor", "cholesky", "eigh",
                "eigvalsh", "lstsq", "pinv", "null_space", "orth")
OUTPUT_ONLY = {"norm"}  # a norm is a reduction: its input is the data, not a LAPACK argument

#: the project's own modules: ``callers=PROJECT`` moves only the float steps they call
PROJECT = ("verifier", "proofs")

#: never moved: matplotlib's own transforms (its 3x3 affine inverses) feed pixel snapping, which rounds
#: exact half-pixels, so an ulp there moves a pixel of a PNG; the report's figures are drawn from its
#: stable numbers (display.stable), and whether matplotlib's pixels survive another LAPACK is its own matter
SPARED = ("matplotlib",)

#: the simulated machine: its seed, its ulps, and whose calls it moves (None: every caller)
_STATE: dict = {"seed": 0, "ulps": ULPS, "callers": None}
_ORIGINALS: dict[tuple[object, str], object] = {}
#: names bound by ``from ... import`` in the project's modules, rebound to a wrapper: (module, name, original)
_REBOUND: list[tuple[object, str, object]] = []


def set_seed(seed: str | int) -> None:
    """The machine: a string (a test's node id) or a non-negative integer."""
    _STATE["seed"] = zlib.crc32(seed.encode()) if isinstance(seed, str) else int(seed)


def _moves_caller(depth: int = 2) -> bool:
    """Whether the call ``depth`` frames up comes from one of the machine's callers (never from SPARED)."""
    callers, name = _STATE["callers"], sys._getframe(depth).f_globals.get("__name__", "")
    return not name.startswith(SPARED) and (callers is None or name.startswith(callers))


def _digest(x) -> int:
    """A cheap content hash of an array (shape, dtype, up to 4096 sampled entries)."""
    if type(x).__module__.startswith("torch"):
        flat = x.detach().reshape(-1)
        step = max(1, flat.numel() // 4096)
        sample = flat[::step].cpu().numpy()
    else:
        flat = np.asarray(x).reshape(-1)
        step = max(1, flat.size // 4096)
        sample = np.ascontiguousarray(flat[::step])
    return zlib.crc32(sample.tobytes(), zlib.crc32(repr((tuple(x.shape), str(x.dtype))).encode()))


def _rng(name: str, *arrays) -> np.random.Generator:
    key = [_STATE["seed"], zlib.crc32(name.encode())]
    key += [_digest(a) for a in arrays if hasattr(a, "shape") and hasattr(a, "dtype")]
    return np.random.default_rng(key)


def _is_float(x) -> bool:
    return isinstance(x, np.ndarray) and x.dtype.kind in "fc" or isinstance(x, (np.floating, np.complexfloating))


def _move(x, rng: np.random.Generator):
    """x with each float entry multiplied by 1 + j eps, j uniform in [-ulps, ulps]."""
    ulps = _STATE["ulps"]
    if type(x).__module__.startswith("torch"):
        import torch

        if not x.is_floating_point() or x.numel() == 0:
            return x
        eps = torch.finfo(x.dtype).eps
        j = torch.as_tensor(rng.integers(-ulps, ulps + 1, tuple(x.shape)), dtype=x.dtype, device=x.device)
        return x * (1 + j * eps)
    if isinstance(x, float) and not isinstance(x, np.floating):
        return float(x * (1 + int(rng.integers(-ulps, ulps + 1)) * np.finfo(np.float64).eps))
    if not _is_float(x) or np.size(x) == 0:
        return x
    dtype = np.asarray(x).dtype
    j = rng.integers(-ulps, ulps + 1, np.shape(x))
    out = np.asarray(x * (1 + j * np.finfo(dtype).eps)).astype(dtype, copy=False)
    return out if isinstance(x, np.ndarray) else out[()]


def _move_result(res, rng):
    if isinstance(res, tuple):
        moved = [_move_result(r, rng) for r in res]
        return type(res)(*moved) if hasattr(res, "_fields") else type(res)(moved)
    return _move(res, rng)


def _flip(x, signs, axis: int, r: int):
    """x with its first r slices along ``axis`` multiplied by ``signs``."""
    x = np.array(x, copy=True)
    idx = [slice(None)] * x.ndim
    idx[axis] = slice(0, r)
    shape = [1] * x.ndim
    shape[axis] = r
    x[tuple(idx)] *= signs.reshape(shape)
    return x


def _other_signs(name: str, res, rng):
    """Singular vectors, eigenvectors and Q's columns are defined up to sign, and
    LAPACKs differ in which they return: flip a random set, consistently
    (U diag(s) V^T, V diag(w) V^T and Q R are unchanged)."""
    if not isinstance(res, tuple) or len(res) < 2:
        return res
    parts = list(res)
    base = name.rsplit(".", 1)[-1]
    if base == "svd" and len(parts) == 3 and np.ndim(parts[0]) >= 2:
        r = np.shape(parts[1])[-1]
        signs = rng.choice([-1.0, 1.0], r)
        parts[0], parts[2] = _flip(parts[0], signs, -1, r), _flip(parts[2], signs, -2, r)
    elif base in ("eigh", "eig") and len(parts) == 2 and np.ndim(parts[1]) >= 2:
        r = np.shape(parts[0])[-1]
        parts[1] = _flip(parts[1], rng.choice([-1.0, 1.0], r), -1, r)
    elif base == "qr" and np.ndim(parts[0]) >= 2 and np.ndim(parts[1]) >= 2 \
            and np.shape(parts[0])[-1] >= 1 and np.shape(parts[1])[-2] >= 1:
        r = min(np.shape(parts[0])[-1], np.shape(parts[1])[-2])
        signs = rng.choice([-1.0, 1.0], r)
        parts[0], parts[1] = _flip(parts[0], signs, -1, r), _flip(parts[1], signs, -2, r)
    else:
        return res
    return type(res)(*parts) if hasattr(res, "_fields") else type(res)(parts)


def _lapack(name: str, fn):
    @functools.wraps(fn)
    def wrapper(*args, **kw):
        if not _moves_caller():
            return fn(*args, **kw)
        arrays = [a for a in args if isinstance(a, np.ndarray)]
        rng = _rng(name, *arrays)
        if name not in OUTPUT_ONLY:
            args = tuple(_move(a, rng) if _is_float(a) and isinstance(a, np.ndarray) else a for a in args)
        return _other_signs(name, _move_result(fn(*args, **kw), rng), rng)

    wrapper.__another_machine__ = True
    return wrapper


# -- products in another summation order ----------------------------------------------------------------------
def _take(x, idx, axis: int):
    if type(x).__module__.startswith("torch"):
        import torch

        return x.index_select(axis % x.ndim, torch.as_tensor(idx, device=x.device))
    return np.take(x, idx, axis=axis)


def reordered(mult, a, b, name: str = "matmul"):
    """``mult(a, b)`` (matmul semantics) with the inner index permuted and
    split into blocks whose partial products are summed in turn: a legal
    float64 summation order, chosen per input."""
    if not (hasattr(a, "ndim") and hasattr(b, "ndim")) or a.ndim == 0 or b.ndim == 0:
        return mult(a, b)
    k = a.shape[-1]
    bk = 0 if b.ndim == 1 else -2
    if k <= 1 or b.shape[bk] != k or 0 in a.shape or 0 in b.shape:
        return mult(a, b)
    rng = _rng(name, a, b)
    scheme = int(rng.integers(0, 3))
    if scheme == 0:
        perm = np.arange(k)[::-1].copy()  # reversed
    else:
        perm = rng.permutation(k)
    a, b = _take(a, perm, -1), _take(b, perm, bk)
    nblocks = 1 if scheme == 2 else int(rng.integers(1, min(k, 6) + 1))
    cuts = np.sort(rng.choice(np.arange(1, k), nblocks - 1, replace=False)) if nblocks > 1 else []
    edges = [0, *[int(c) for c in cuts], k]
    out = None
    for lo, hi in zip(edges[:-1], edges[1:]):
        sl_a = a[..., lo:hi]
        sl_b = b[lo:hi] if bk == 0 else b[..., lo:hi, :]
        part = mult(sl_a, sl_b)
        out = part if out is None else out + part
    return out


def _product(name: str, fn):
    @functools.wraps(fn)
    def wrapper(a, b, *args, **kw):
        if args or kw or not (isinstance(a, np.ndarray) and isinstance(b, np.ndarray)) \
                or a.dtype.kind != "f" or b.dtype.kind != "f" or (name == "dot" and max(a.ndim, b.ndim) > 2) \
                or not _moves_caller():
            return fn(a, b, *args, **kw)
        return reordered(fn, a, b, name)

    wrapper.__another_machine__ = True
    return wrapper


def reordered_sum(add, a, axis: int, name: str = "sum"):
    """``add(a, axis=axis)`` with the summed index permuted and split into blocks
    whose partial sums are added in turn (a legal float64 summation order)."""
    k = a.shape[axis]
    rng = _rng(name, a)
    perm = np.arange(k)[::-1].copy() if rng.integers(0, 2) == 0 else rng.permutation(k)
    a = np.take(a, perm, axis=axis)
    nblocks = int(rng.integers(1, min(k, 6) + 1))
    cuts = np.sort(rng.choice(np.arange(1, k), nblocks - 1, replace=False)) if nblocks > 1 else []
    edges = [0, *[int(c) for c in cuts], k]
    out = None
    for lo, hi in zip(edges[:-1], edges[1:]):
        part = add(np.take(a, np.arange(lo, hi), axis=axis), axis=axis)
        out = part if out is None else out + part
    return out


def _sum(fn):
    @functools.wraps(fn)
    def wrapper(a, axis=None, *args, **kw):
        if args or set(kw) - {"keepdims"} or type(a) is not np.ndarray or a.dtype.kind != "f" \
                or not (axis is None or isinstance(axis, (int, np.integer))) or a.size <= 2 \
                or not _moves_caller():
            return fn(a, axis, *args, **kw)
        x, ax = (a.reshape(-1), 0) if axis is None else (a, int(axis) % max(a.ndim, 1))
        if x.shape[ax] <= 2:
            return fn(a, axis, *args, **kw)
        out = np.asarray(reordered_sum(fn, x, ax))
        if kw.get("keepdims"):
            out = np.expand_dims(out, tuple(range(a.ndim)) if axis is None else ax)
        return out if out.ndim else out[()]

    wrapper.__another_machine__ = True
    return wrapper


# -- installation ---------------------------------------------------------------------------------------------------
def _patch(owner, attr: str, make) -> None:
    orig = getattr(owner, attr, None)
    if orig is None or getattr(orig, "__another_machine__", False):
        return
    _ORIGINALS[(owner, attr)] = orig
    setattr(owner, attr, make(orig))


def install() -> None:
    """Patch numpy, scipy and the project's backend for this process (until :func:`uninstall`)."""
    import scipy.linalg

    from verifier.arith import backend

    for name in NUMPY_LINALG:
        _patch(np.linalg, name, functools.partial(_lapack, f"numpy.linalg.{name}"))
    for name in SCIPY_LINALG:
        _patch(scipy.linalg, name, functools.partial(_lapack, f"scipy.linalg.{name}"))
    _patch(np, "matmul", functools.partial(_product, "matmul"))
    _patch(np, "dot", functools.partial(_product, "dot"))
    _patch(np, "sum", _sum)

    def backend_product(orig):
        def matmul(self, a, b):
            return reordered(lambda x, y: orig(self, x, y), a, b, "backend.matmul")
        matmul.__another_machine__ = True
        return matmul

    _patch(backend.Backend, "matmul", backend_product)
    _patch(backend.Backend, "mm", lambda orig: _tagged(
        lambda self, a, b: reordered(lambda x, y: orig(self, x, y), np.asarray(a), np.asarray(b), "backend.mm")))
    _patch(backend, "batched_matmul", lambda orig: _tagged(
        lambda a, b: reordered(orig, np.asarray(a), np.asarray(b), "batched_matmul")))
    for meth in ("inv", "cholesky_lower", "eigvalsh"):
        _patch(backend.Backend, meth, lambda orig, meth=meth: _tagged(_torch_moved(orig, meth)))
    _patch(backend, "_getrf_getri", functools.partial(_lapack, "backend._getrf_getri"))  # LAPACK's LU inverse
    _rebind_imported()


def _tagged(fn):
    fn.__another_machine__ = True
    return fn


def _torch_moved(orig, meth: str):
    """The backend's own linalg: numpy routes through the patched np.linalg; a
    torch result is moved here."""
    def method(self, a):
        res = orig(self, a)
        if res is None or not self.is_torch:
            return res
        return _move(res, _rng(f"backend.{meth}", a))
    return method


def _rebind_imported() -> None:
    """Names bound by ``from ... import`` before the patch point to the originals: rebind them."""
    import sys

    swaps = {id(orig): (owner, attr) for (owner, attr), orig in _ORIGINALS.items()}
    for mod in list(sys.modules.values()):
        name = getattr(mod, "__name__", "")
        if not name.startswith(("verifier", "proofs")):
            continue
        for attr, val in list(vars(mod).items()):
            hit = swaps.get(id(val))
            if hit is not None:
                _REBOUND.append((mod, attr, val))
                setattr(mod, attr, getattr(*hit))


class Plugin:
    """Registered by tests/conftest.py under ``--another-machine``: one seed per
    test (its node id), for the tests and the modules' doctests alike."""

    def pytest_runtest_setup(self, item) -> None:
        set_seed(item.nodeid)

    def pytest_report_header(self, config) -> str:
        return (f"another machine: LAPACK inputs/outputs moved by <= {_STATE['ulps']} ulps, products and sums "
                "in other summation orders (tests/another_machine.py)")


def uninstall() -> None:
    """Undo :func:`install`: the originals back in numpy, scipy, the backend, and in
    the project's modules that imported a patched name (before or after install)."""
    wrappers = {id(getattr(owner, attr)): orig for (owner, attr), orig in _ORIGINALS.items()}
    for (owner, attr), orig in _ORIGINALS.items():
        setattr(owner, attr, orig)
    for mod, attr, orig in _REBOUND:
        setattr(mod, attr, orig)
    for mod in list(sys.modules.values()):
        if getattr(mod, "__name__", "").startswith(PROJECT):
            for attr, val in list(vars(mod).items()):
                if id(val) in wrappers:
                    setattr(mod, attr, wrappers[id(val)])
    _ORIGINALS.clear()
    _REBOUND.clear()


def installed() -> bool:
    return bool(_ORIGINALS)


@contextlib.contextmanager
def on_another_machine(*, ulps: int = ULPS, seed: str | int = 1, callers: tuple[str, ...] | None = None):
    """Within the block, the float steps are computed as on the machine ``seed``
    (moves of up to ``ulps``, only for calls from ``callers`` when given; see the
    module's docstring).  Installs the patches for the block when they are not
    installed; under ``--another-machine``, a second machine beside the test's."""
    was_installed, saved = installed(), dict(_STATE)
    if not was_installed:
        install()
    try:
        set_seed(seed)
        _STATE.update(ulps=int(ulps), callers=None if callers is None else tuple(callers))
        yield
    finally:
        _STATE.clear()
        _STATE.update(saved)
        if not was_installed:
            uninstall()


def main(argv=None) -> int:
    """``python -m tests.another_machine [--machine-seed S] [--ulps N] [--callers a,b] ARGS``:
    ``mha-verify ARGS`` on the machine ``S`` (see the module's docstring)."""
    import argparse

    parser = argparse.ArgumentParser(
        prog="python -m tests.another_machine", allow_abbrev=False,
        description="mha-verify ARGS, as another machine would compute its float steps (tests/another_machine.py)")
    parser.add_argument("--machine-seed", default="another machine",
                        help="which machine: a string or an integer (default: %(default)r)")
    parser.add_argument("--ulps", type=int, default=ULPS, help="largest move of a LAPACK entry (default: %(default)s)")
    parser.add_argument("--callers", default="",
                        help="comma-separated module prefixes whose calls are moved (default: every caller)")
    own, rest = parser.parse_known_args(argv)
    if not rest:
        parser.error("give the mha-verify arguments, e.g. report --out /tmp/elsewhere")
    seed = int(own.machine_seed) if own.machine_seed.isdigit() else own.machine_seed
    install()
    set_seed(seed)
    _STATE.update(ulps=own.ulps, callers=tuple(c for c in own.callers.split(",") if c) or None)
    from verifier.cli import main as cli

    return cli(rest)


if __name__ == "__main__":
    sys.exit(main())
