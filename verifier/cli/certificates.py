"""`mha-verify check ... --certificate FILE`: the certificate of a certified verdict, for verifier/recheck.py.

The target is checked before any work (a statement with a certificate kind, a writable file); the file is
written only for a certified verdict, else one line and exit 2 (docs/CERTIFICATES.md).
"""

from __future__ import annotations

import sys

from verifier.cli.paths import writable_file
from verifier.errors import InvalidInstance


def certificate_target(sid: str, path: str) -> None:
    """--certificate: a statement with a certificate kind, a writable file (before any work)."""
    from verifier.report.check_certificates import CERTIFIABLE

    if sid not in CERTIFIABLE:
        raise InvalidInstance(
            f"--certificate: {sid} has no certificate kind (statements that do: {', '.join(CERTIFIABLE)})"
        )
    writable_file(path, "--certificate")


def write_certificate(sid: str, inst, ev, path: str, *, seed: int, weights=None) -> None:
    """The certificate of a certified verdict (else CertificateRefused: bad input, one line, exit 2)."""
    from verifier.report.certificate_format import CertificateRefused, write
    from verifier.report.check_certificates import for_check

    try:
        cert = for_check(sid, inst, ev, seed=seed, weights=weights)
    except CertificateRefused as exc:
        raise InvalidInstance(f"--certificate: {exc}") from None
    write(cert, path)
    print(f"certificate written: {path} (re-check: python verifier/recheck.py {path})", file=sys.stderr)
