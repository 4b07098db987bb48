"""Resumable sweeps: each unit of work's result on disk, keyed by a content
hash of what it depends on.

A unit (a statement on one instance) is keyed by SHA-256 of its statement
id, its instance options (sizes, context, seed, ...), the arithmetic's
precision, and the code: :func:`code_fingerprint` hashes every source file
of ``verifier/`` and ``proofs/`` with the versions of the numerical
libraries, so any change to the code makes every key new (never a stale
result).  One JSON file per unit, written whole to a temporary file and
moved into place (``os.replace``, atomic): a sweep killed at any moment
leaves each file complete or absent, and the rerun computes the absent ones
only.

>>> import tempfile
>>> c = UnitCache(tempfile.mkdtemp())
>>> k = c.key({"statement": "lemma2", "options": {"H": 1}, "prec": 128})
>>> c.get(k) is None
True
>>> c.put(k, {"verdict": "verified"}); c.get(k)
{'verdict': 'verified'}
"""
from __future__ import annotations

import functools
import hashlib
import json
import os
import tempfile
from pathlib import Path

#: Bumped when the layout of a cached unit changes.
SCHEMA = 1
_PACKAGES = ("verifier", "proofs")
_LIBRARIES = ("numpy", "scipy", "mpmath", "python-flint", "sympy", "torch")


@functools.lru_cache(maxsize=None)
def code_fingerprint() -> str:
    """SHA-256 over every ``.py`` file of the verifier's packages (relative
    path and bytes, in sorted order) and the numerical libraries' versions."""
    import importlib

    h = hashlib.sha256()
    for pkg in _PACKAGES:
        root = Path(importlib.import_module(pkg).__file__).parent
        for f in sorted(root.rglob("*.py")):
            h.update(f"{pkg}/{f.relative_to(root).as_posix()}\0".encode())
            h.update(f.read_bytes())
            h.update(b"\0")
    for lib in _LIBRARIES:
        try:
            version = importlib.metadata.version(lib)
        except importlib.metadata.PackageNotFoundError:
            version = "absent"
        h.update(f"{lib}={version}\0".encode())
    return h.hexdigest()


def unit_key(inputs: dict) -> str:
    """The content hash of a unit's ``inputs`` (JSON-able) with the code's
    fingerprint and :data:`SCHEMA`."""
    blob = json.dumps({"inputs": inputs, "code": code_fingerprint(), "schema": SCHEMA}, sort_keys=True)
    return hashlib.sha256(blob.encode()).hexdigest()


class UnitCache:
    """Results of units in ``root`` (created on first use), one
    ``<key>.json`` each."""

    def __init__(self, root):
        self.root = Path(root)

    @staticmethod
    def key(inputs: dict) -> str:
        return unit_key(inputs)

    def path(self, key: str) -> Path:
        return self.root / f"{key}.json"

    def get(self, key: str):
        """The cached result, or None (absent or unreadable: recomputed)."""
        try:
            return json.loads(self.path(key).read_text())["result"]
        except (OSError, ValueError, KeyError, TypeError):
            return None

    def put(self, key: str, result) -> None:
        """Write ``result`` atomically: a temporary file in the same folder,
        then ``os.replace``."""
        self.root.mkdir(parents=True, exist_ok=True)
        fd, tmp = tempfile.mkstemp(dir=self.root, prefix=f".{key[:16]}.", suffix=".tmp")
        try:
            with os.fdopen(fd, "w") as f:
                json.dump({"key": key, "result": result}, f)  # key order kept: the same as computed
            os.replace(tmp, self.path(key))
        except BaseException:
            Path(tmp).unlink(missing_ok=True)
            raise

    def keys(self) -> set[str]:
        return {p.stem for p in self.root.glob("*.json")} if self.root.is_dir() else set()


def cached_map(executor, fn, items: list, keys: list[str], cache: UnitCache | None = None,
               on_result=None, resources: dict | None = None, keep=None) -> tuple[list, dict]:
    """``executor.map(fn, items)`` where a unit whose key is in ``cache`` is
    read, not run, and each computed result is stored as it completes.
    Returns (results in the order of ``items``, {"cached": n, "computed": m}).
    Units with equal keys run once; ``resources``: what each asks of a cluster
    (:meth:`~.executor.RayExecutor.map`); ``keep(result)``: False for a result not
    to store (computed again next time, e.g. an error)."""
    out = [None] * len(items)
    todo: dict[str, list[int]] = {}
    for i, k in enumerate(keys):
        hit = cache.get(k) if cache is not None else None
        if hit is not None:
            out[i] = hit
            if on_result:
                on_result(i, hit)
        else:
            todo.setdefault(k, []).append(i)
    order = list(todo)

    def store(j: int, result) -> None:
        k = order[j]
        if cache is not None and (keep is None or keep(result)):
            cache.put(k, result)
        for i in todo[k]:
            out[i] = result
            if on_result:
                on_result(i, result)

    executor.map(fn, [items[todo[k][0]] for k in order], on_result=store, resources=resources)
    computed = len(order)
    return out, {"cached": len(items) - sum(len(v) for v in todo.values()), "computed": computed}
