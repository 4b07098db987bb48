"""The paths a run writes (``--save-weights FILE``, ``--out DIR``,
``--cache DIR``): proved writable before any work is done, one line of bad
input otherwise.

>>> import tempfile
>>> writable_folder(tempfile.mkdtemp(), "--out")
"""
from __future__ import annotations

from pathlib import Path

from verifier.errors import InvalidInstance

__all__ = ["writable_file", "writable_folder"]


def writable_file(path: str, flag: str) -> None:
    """``path`` can be written: not a folder, its folder exists, and a file
    can be opened there (tried, and removed again if it was not there)."""
    p = Path(path)
    if p.is_dir():
        raise InvalidInstance(f"{flag} {path}: is a folder; give a file name (e.g. weights.npz)")
    folder = p.parent if str(p.parent) else Path(".")
    if not folder.is_dir():
        raise InvalidInstance(f"{flag} {path}: folder {folder} does not exist")
    existed = p.exists()
    try:
        with p.open("ab"):
            pass
    except OSError as exc:
        raise InvalidInstance(f"{flag} {path}: not writable ({exc.strerror or exc})") from None
    if not existed:
        p.unlink(missing_ok=True)


def writable_folder(path: str, flag: str) -> None:
    """Create ``path`` if needed and prove a file can be written in it,
    before any work is done."""
    import tempfile

    if not path.strip():
        raise InvalidInstance(f"{flag} {path!r}: give a folder name (an empty name is not the current folder)")
    p = Path(path)
    if p.exists() and not p.is_dir():
        raise InvalidInstance(f"{flag} {path}: exists and is not a folder")
    try:
        p.mkdir(parents=True, exist_ok=True)
        with tempfile.NamedTemporaryFile(dir=p, prefix=".mha-verify-probe-"):
            pass
    except OSError as exc:
        raise InvalidInstance(f"{flag} {path}: cannot write there ({exc.strerror or exc})") from None
