"""Resumable sweeps: each unit of work's result on disk, keyed by a content
hash of what it depends on, and verified before it is served.

A unit (a statement on one instance, an experiment, a drawn real-size
instance) is keyed by SHA-256 of its inputs (statement id, instance options,
seed, precision, ...) and of the environment that computes it
(:func:`environment`): the code (:func:`code_fingerprint`: every source file
of ``verifier/`` and ``proofs/``, or of the folders a sweep names), the
array backend (``MHA_VERIFY_BACKEND``, or "auto"'s choice: torch-cuda where
CUDA is, else numpy), the CPU kernels
(``ATEN_CPU_CAPABILITY``, ``MKL_CBWR``, ``ONEDNN_MAX_CPU_ISA``) and the
versions of the packages that compute results.  Any change to any of them
makes every key new.

One JSON file per unit, ``<key>.json``, holds the key, the inputs, the
environment, the result and the result's SHA-256 digest; it is written whole
to a temporary file and moved into place (``os.replace``, atomic), readable
by the folder's group.  On reading, :meth:`UnitCache.get` serves an entry
only when its key is the file's, its inputs and environment are the unit's
and this process's, its digest matches its result, and its result belongs to
its unit (the caller's ``check``: statement id, instance, seed); anything
else -- an edited verdict, two files swapped, a valid JSON of another shape,
an entry computed under another backend -- is recomputed, never served, and
listed with the reason in :attr:`UnitCache.rejected` (the report's
``run.json``).  A digest detects an edit, not a forger who recomputes it: the
cache folder must be trusted as far as the code is.

Only lasting results are stored (``keep``: not an error).  A write that
fails (a full disk) is one warning line; the run goes on computing, its
results no longer written.

>>> import tempfile
>>> c = UnitCache(tempfile.mkdtemp())
>>> u = {"statement": "lemma2", "options": {"H": 1}, "prec": 128}
>>> c.get(u) is None
True
>>> c.put(u, {"verdict": "verified"}); c.get(u)
{'verdict': 'verified'}
"""
from __future__ import annotations

import functools
import hashlib
import json
import os
import stat
import sys
import tempfile
from pathlib import Path

#: Bumped when the layout of a cached unit changes.
SCHEMA = 2
#: the source folders (relative to the repository root) whose code computes the report's units
CODE_ROOTS = ("verifier", "proofs")
#: the packages whose versions can change a unit's result (a figure's bytes included)
RESULT_PACKAGES = ("numpy", "scipy", "mpmath", "python-flint", "sympy", "torch", "matplotlib", "pillow",
                   "scikit-learn", "scikit-image", "transformers")
#: the variables that choose the CPU kernels a float32 sum runs (verifier/__init__.py pins them)
KERNEL_VARIABLES = ("ATEN_CPU_CAPABILITY", "MKL_CBWR", "ONEDNN_MAX_CPU_ISA")
ROOT = Path(__file__).resolve().parents[2]
#: the largest entry read back (an experiment's row with its figures is a few MB)
MAX_ENTRY_BYTES = 256 << 20


@functools.lru_cache(maxsize=None)
def code_fingerprint(roots: tuple[str, ...] = CODE_ROOTS) -> str:
    """SHA-256 over every ``.py`` file under each folder of ``roots`` (relative
    to the repository root; relative path and bytes, in sorted order)."""
    h = hashlib.sha256()
    for name in roots:
        folder = ROOT / name
        h.update(f"[{name}]\0".encode())
        for f in sorted(folder.rglob("*.py")) if folder.is_dir() else ():
            h.update(f"{name}/{f.relative_to(folder).as_posix()}\0".encode())
            h.update(f.read_bytes())
            h.update(b"\0")
    return h.hexdigest()


@functools.lru_cache(maxsize=None)
def package_versions() -> dict:
    from importlib import metadata

    out = {"python": ".".join(map(str, sys.version_info[:2]))}
    for lib in RESULT_PACKAGES:
        try:
            out[lib] = metadata.version(lib)
        except metadata.PackageNotFoundError:
            out[lib] = "absent"
    return out


def backend_name() -> str:
    """The array backend a unit computes with (:func:`verifier.arith.backend.get_backend`'s
    choice for "auto"): ``MHA_VERIFY_BACKEND`` when set, else torch-cuda where CUDA is, else numpy."""
    from verifier.arith.backend import cuda_available

    name = os.environ.get("MHA_VERIFY_BACKEND") or "auto"
    if name in ("auto", "torch"):
        return "torch-cuda" if cuda_available() else ("numpy" if name == "auto" else "torch-cpu")
    return name


def environment(roots=CODE_ROOTS, *, backend: bool = True) -> dict:
    """What computes a unit besides its inputs: the code under ``roots``,
    the array backend (``backend=False``: a unit whose inputs name its
    device, an experiment), the CPU kernels and the packages' versions.  A
    Ray worker returns its own with each result (:mod:`.executor`), compared
    on the fields the driver's has."""
    roots = tuple(roots)
    env = {"code": code_fingerprint(roots), "code_roots": list(roots),
           "kernels": {k: os.environ.get(k, "unset") for k in KERNEL_VARIABLES}, "versions": package_versions()}
    if backend:
        env["backend"] = backend_name()
    return env


def differences(mine: dict, theirs: dict, *, me: str = "driver", them: str = "worker") -> str:
    """The fields in which two environments differ, each side named."""
    def show(v):
        return v[:12] if isinstance(v, str) and len(v) == 64 else json.dumps(v, sort_keys=True)

    return "; ".join(f"{k}: {them} {show(theirs.get(k))}, {me} {show(mine.get(k))}"
                     for k in sorted(set(mine) | set(theirs)) if mine.get(k) != theirs.get(k))


def _hash(obj) -> str:
    return hashlib.sha256(json.dumps(obj, sort_keys=True).encode()).hexdigest()


def unit_key(inputs, roots=CODE_ROOTS, env: dict | None = None) -> str:
    """The content hash of a unit's ``inputs`` (JSON-able) with the
    environment (:func:`environment`) and :data:`SCHEMA`."""
    return _hash({"inputs": inputs, "environment": environment(roots) if env is None else env, "schema": SCHEMA})


def digest(result) -> str:
    """SHA-256 of a result as stored (key order kept: it is the order computed)."""
    return hashlib.sha256(json.dumps(result, separators=(",", ":")).encode()).hexdigest()


def describe(inputs) -> str:
    """A unit in a few words (run.json's list of rejected entries)."""
    if not isinstance(inputs, dict):
        return json.dumps(inputs)[:80]
    head = [str(inputs[k]) for k in ("kind", "statement", "experiment") if k in inputs]
    rest = {k: v for k, v in inputs.items() if k in ("options", "scale", "seed")}
    return " ".join(head) + (" " + json.dumps(rest, sort_keys=True)[:160] if rest else "")


def _warn(line: str) -> None:
    try:
        print(f"mha-verify: warning: {line}", file=sys.stderr, flush=True)
    except (OSError, ValueError, AttributeError):
        pass


class UnitCache:
    """Results of units in ``root`` (created on first use), one
    ``<key>.json`` each, under the environment of the code in ``roots``.

    ``rejected``: the entries found and not served (file, unit, reason);
    ``write_error``: why writing stopped (None while it works)."""

    def __init__(self, root, roots=CODE_ROOTS, warn=_warn):
        if not str(root):
            raise ValueError("a cache folder needs a name ('' is not one)")
        self.root, self.roots, self.warn = Path(root), tuple(roots), warn
        self.rejected: list[dict] = []
        self.write_error: str | None = None

    def key(self, inputs, env: dict | None = None) -> str:
        return unit_key(inputs, self.roots, env)

    def path(self, key: str) -> Path:
        return self.root / f"{key}.json"

    def get(self, inputs, check=None, env: dict | None = None):
        """The result of the unit ``inputs`` when its entry passes every test
        (see the module docstring), else None: absent, or rejected and listed.
        ``check(result, inputs)``: the reason a result is not its unit's, or None."""
        env = environment(self.roots) if env is None else env
        key = self.key(inputs, env)
        path = self.path(key)
        try:
            st = path.stat()
            if not stat.S_ISREG(st.st_mode):  # a FIFO, a device (e.g. a link to /dev/zero): never read
                return self._reject(path, inputs, "not a regular file")
            if st.st_size > MAX_ENTRY_BYTES:
                return self._reject(path, inputs, f"{st.st_size} bytes, above the {MAX_ENTRY_BYTES} an entry may hold")
            with path.open("rb") as f:
                text = f.read(MAX_ENTRY_BYTES + 1).decode("utf-8")
        except FileNotFoundError:
            return None
        except (OSError, UnicodeDecodeError) as exc:
            return self._reject(path, inputs, f"unreadable ({getattr(exc, 'strerror', None) or exc})")
        try:
            entry = json.loads(text)
        except ValueError as exc:
            return self._reject(path, inputs, f"not JSON ({str(exc)[:80]})")
        if not isinstance(entry, dict) or set(entry) != {"schema", "key", "inputs", "environment", "digest", "result"}:
            got = sorted(entry) if isinstance(entry, dict) else type(entry).__name__
            return self._reject(path, inputs, f"not a cache entry of schema {SCHEMA} (holds {got})")
        if entry["key"] != key:
            return self._reject(path, inputs, f"its key {str(entry['key'])[:16]} is another unit's")
        if entry["inputs"] != inputs:
            return self._reject(path, inputs, f"its inputs are another unit's ({describe(entry['inputs'])})")
        if entry["environment"] != env:
            return self._reject(path, inputs, "computed in another environment: "
                                + differences(env, entry["environment"], me="now", them="entry"))
        if entry["schema"] != SCHEMA or self.key(entry["inputs"], entry["environment"]) != key:
            return self._reject(path, inputs, "its inputs and environment do not hash to its key")
        if entry["digest"] != digest(entry["result"]):
            return self._reject(path, inputs, "its result was changed after it was written (digest mismatch)")
        if check is not None:
            try:
                why = check(entry["result"], inputs)
            except Exception as exc:  # noqa: BLE001 - a result of another shape is a mismatch, not a crash
                why = f"a result of another shape ({type(exc).__name__}: {exc})"
            if why:
                return self._reject(path, inputs, f"its result is not its unit's: {why}")
        return entry["result"]

    def _reject(self, path: Path, inputs, reason: str) -> None:
        self.rejected.append({"file": path.name, "unit": describe(inputs), "reason": reason})
        return None

    def put(self, inputs, result, env: dict | None = None) -> None:
        """Write ``result`` atomically (a temporary file in the same folder,
        then ``os.replace``), group-readable.  A failed write (a full disk, a
        folder gone read-only) is one warning line; later puts are skipped."""
        if self.write_error is not None:
            return
        env = environment(self.roots) if env is None else env
        key = self.key(inputs, env)
        entry = {"schema": SCHEMA, "key": key, "inputs": inputs, "environment": env, "digest": digest(result),
                 "result": result}  # the result's key order kept: the same as computed
        tmp = None
        try:
            self.root.mkdir(parents=True, exist_ok=True)
            fd, tmp = tempfile.mkstemp(dir=self.root, prefix=f".{key[:16]}.", suffix=".tmp")
            with os.fdopen(fd, "w") as f:
                _share_with_group(f.fileno(), self.root)
                json.dump(entry, f)
            os.replace(tmp, self.path(key))
        except OSError as exc:
            if tmp is not None:
                Path(tmp).unlink(missing_ok=True)
            self.write_error = f"{type(exc).__name__}: {exc.strerror or exc}"
            self.warn(f"cannot write to the cache {self.root} ({self.write_error}); continuing without "
                      "writing to it (results are computed as usual)")
        except BaseException:
            if tmp is not None:
                Path(tmp).unlink(missing_ok=True)
            raise

    def keys(self) -> set[str]:
        return {p.stem for p in self.root.glob("*.json")} if self.root.is_dir() else set()

    def facts(self) -> dict:
        """What run.json says about the cache: its folder, the entries rejected, a failed write."""
        return {"folder": str(self.root), "rejected": list(self.rejected), "write_error": self.write_error}


def _share_with_group(fd: int, folder: Path) -> None:
    """Mode 0640 and the folder's group (when this user may give it)."""
    os.fchmod(fd, 0o640)
    try:
        gid = folder.stat().st_gid
        if os.fstat(fd).st_gid != gid:
            os.fchown(fd, -1, gid)
    except OSError:
        pass


def cached_map(executor, fn, items: list, inputs: list, cache: UnitCache | None = None, on_result=None,
               resources: dict | None = None, keep=None, check=None, roots=None,
               backend: bool = True) -> tuple[list, dict]:
    """``executor.map(fn, items)`` where a unit whose entry in ``cache``
    passes :meth:`UnitCache.get` is read, not run, and each computed result
    is stored as it completes.  ``inputs[i]``: what item i's result depends
    on (its key, with the environment of the code in ``roots``, default the
    cache's or :data:`CODE_ROOTS`).  Returns (results in the order of
    ``items``, {"cached": n, "computed": m}).  Units with equal inputs run
    once; ``resources``: what each asks of a cluster
    (:meth:`~.executor.RayExecutor.map`); ``keep(result)``: False for a result
    not to store (computed again next time, e.g. an error); ``check(result,
    inputs)``: why a cached result is not its unit's (None: it is);
    ``backend=False``: the array backend is not part of the environment (the
    inputs name the device).  The executor's workers must run in this
    environment (:class:`~.executor.WorkerMismatch` otherwise)."""
    roots = tuple(roots if roots is not None else cache.roots if cache is not None else CODE_ROOTS)
    env = environment(roots, backend=backend)
    out = [None] * len(items)
    todo: dict[str, list[int]] = {}
    for i, u in enumerate(inputs):
        hit = cache.get(u, check, env) if cache is not None else None
        if hit is not None:
            out[i] = hit
            if on_result:
                on_result(i, hit)
        else:
            todo.setdefault(unit_key(u, roots, env), []).append(i)
    order = list(todo)

    def store(j: int, result) -> None:
        idx = todo[order[j]]
        if cache is not None and (keep is None or keep(result)):
            cache.put(inputs[idx[0]], result, env)
        for i in idx:
            out[i] = result
            if on_result:
                on_result(i, result)

    executor.map(fn, [items[todo[k][0]] for k in order], on_result=store, resources=resources, environment=env)
    return out, {"cached": len(items) - sum(len(v) for v in todo.values()), "computed": len(order)}
