"""The certificate format's writing side (docs/CERTIFICATES.md; the reading
side is ``verifier/recheck.py``, which imports nothing from here: tests keep
the two equal): exact numbers, arrays as text or base64, the digest, and the
MHA data shared by the findings' and the checks' certificates
(:mod:`.certificates`, :mod:`.check_certificates`).
"""
from __future__ import annotations

import base64
import hashlib
import json
import math
from fractions import Fraction
from pathlib import Path

import numpy as np

from verifier.arith.structure import block_sum_null_vectors, stochastic_block_null_vectors
from verifier.errors import InvalidInstance
from verifier.model import mha as model

#: the file format :mod:`verifier.recheck` reads (it imports nothing from here: the two are kept equal by tests)
FORMAT = "mha-verify-certificate/2"
TEXT_ENTRIES = 4096  # arrays up to this many entries are written as text ("p/q"), larger ones in base64


def digest(cert: dict) -> str:
    """sha256 of the canonical JSON of every member but sha256 (as verifier.recheck.digest)."""
    body = {k: v for k, v in cert.items() if k != "sha256"}
    return hashlib.sha256(json.dumps(body, sort_keys=True, separators=(",", ":"),
                                     ensure_ascii=True).encode("ascii")).hexdigest()


def exact(x) -> str | int:
    """A float64 (or int) as the exact rational it is."""
    if isinstance(x, (int, np.integer)) and abs(int(x)) < 10**18:
        return int(x)
    return str(Fraction(float(x)))


def encode(a):
    """An array: nested lists of exact rationals, or {"float64": base64} when large."""
    a = np.asarray(a)
    if a.size > TEXT_ENTRIES:
        return {"float64": base64.b64encode(np.ascontiguousarray(a, dtype="<f8").tobytes()).decode("ascii")}
    return a.tolist() if a.dtype.kind in "iu" else _text(a.astype(np.float64))


def _text(a):
    return [_text(x) for x in a] if a.ndim else exact(a.item())


def _decimal(x: Fraction, digits: int, up: bool) -> str:
    """A decimal of ``digits`` significant digits strictly above (up) or below x."""
    if x == 0:
        return "1e-300" if up else "-1e-300"
    e = math.floor(math.log10(abs(float(x)))) - digits + 1 if math.isfinite(math.log10(abs(float(x)))) else 0
    m = x / Fraction(10) ** e
    m = math.floor(m) + 1 if up else math.ceil(m) - 1
    return f"{m}e{e}"


def round_up(x: float, digits: int = 3) -> str:
    return _decimal(Fraction(x), digits, up=True)


def round_down(x: float, digits: int = 3) -> str:
    """Strictly below x, and "0" for x <= 0 (a lower bound of a nonnegative quantity)."""
    return "0" if x <= 0 else _decimal(Fraction(x), digits, up=False)


def certificate(kind: str, claim: dict, data: dict, *, about: str) -> dict:
    cert = {"format": FORMAT, "kind": kind, "claim": claim, "data": data, "about": about}
    cert["sha256"] = digest(cert)
    return cert


def write(cert: dict, path) -> Path:
    path = Path(path)
    small = len(json.dumps(cert["data"])) < 1 << 16
    path.write_text(json.dumps(cert, sort_keys=True, indent=1 if small else None) + "\n")
    return path




class CertificateRefused(InvalidInstance):
    """No certificate file for this verdict (bad input: exit 2, one line)."""


def mha_data(instance, W_K, W_Q, rows, cols) -> dict:
    """The instance and key/query weights as the mha kinds read them."""
    E = np.asarray(instance.contexts)
    shared = bool(model.is_shared(E) or E.shape[0] == 1)
    return {"T": int(instance.T), "n": int(instance.n), "d": int(instance.d), "H": int(W_K.shape[0]),
            "d_h": int(W_K.shape[2]), "shared": shared, "contexts": encode(E[:1] if shared else E),
            "queries": encode(instance.queries), "W_K": encode(W_K), "W_Q": encode(W_Q),
            "rows": [int(i) for i in rows], "cols": [int(j) for j in cols]}


def feature_rank_certificate(instance, W_K, W_Q, rows, cols, *, about: str) -> dict:
    return certificate("mha-feature-rank", {"rank_at_least": len(rows)},
                       mha_data(instance, W_K, W_Q, rows, cols), about=about)


def cap_certificate(instance, why: str, *, about: str) -> dict:
    """The structural cap named ``why`` (a shared context, or constant token sums) as a certificate."""
    E = np.asarray(instance.contexts)
    H, n, d, T = int(instance.H), int(instance.n), int(instance.d), int(instance.T)
    if why.startswith("shared context"):
        V = stochastic_block_null_vectors(H, n)
        return certificate("mha-shared-context-cap", {"rank_at_most": H * n - len(V)},
                           {"T": T, "n": n, "d": d, "H": H, "context": encode(E[0]), "null_vectors": V},
                           about=about)
    if why.startswith("every token sums to"):
        zero = not np.any(np.asarray(E, dtype=np.float64).sum(axis=-1))
        V = block_sum_null_vectors(H, d, zero_sum=bool(zero))
        shared = bool(model.is_shared(E) or T == 1)
        return certificate("mha-token-sum-cap", {"rank_at_most": H * d - len(V)},
                           {"T": T, "n": n, "d": d, "H": H, "shared": shared,
                            "contexts": encode(E[:1] if shared else E), "null_vectors": V}, about=about)
    raise CertificateRefused(f"the cap '{why}' has no certificate kind")
