"""What a person who mistyped meant: the nearest statement ids and options,
and the package's version (with the git commit when run from a checkout).

>>> nearest("theorm1", ["theorem1", "lemma1", "claim1"])
['theorem1']
>>> nearest("--exhaustive-limt", ["--exhaustive-limit", "--exact-input", "--H"])
['--exhaustive-limit', '--exact-input']
"""
from __future__ import annotations

import argparse
import difflib
import subprocess
from pathlib import Path

__all__ = ["nearest", "did_you_mean", "version_text", "Parser", "UsageError"]


def nearest(word: str, choices, n: int = 3) -> list[str]:
    """The choices closest to ``word`` (difflib's ratio, at least 0.6), best first."""
    return difflib.get_close_matches(word, list(choices), n=n, cutoff=0.6)


def did_you_mean(word: str, choices) -> str:
    """``"; did you mean X?"`` (or ``""`` when nothing is close)."""
    near = nearest(word, choices)
    if not near:
        return ""
    return "; did you mean " + (near[0] if len(near) == 1 else ", ".join(near[:-1]) + " or " + near[-1]) + "?"


def version_text() -> str:
    """``mha-verify X.Y.Z`` and, from a git checkout, ``(commit abc1234[, modified])``."""
    from importlib.metadata import PackageNotFoundError, version

    try:
        v = version("mha-verify")
    except PackageNotFoundError:  # pragma: no cover - run from a checkout without installing
        v = "unknown"
    root = Path(__file__).resolve().parents[2]
    commit = ""
    if (root / ".git").exists():
        try:
            head = subprocess.run(["git", "-C", str(root), "rev-parse", "--short", "HEAD"], capture_output=True,
                                  text=True, timeout=5).stdout.strip()
            dirty = subprocess.run(["git", "-C", str(root), "status", "--porcelain", "--untracked-files=no"],
                                   capture_output=True, text=True, timeout=5).stdout.strip()
            commit = f" (commit {head}{', modified' if dirty else ''})" if head else ""
        except (OSError, subprocess.SubprocessError):
            commit = ""
    return f"mha-verify {v}{commit}"


class UsageError(Exception):
    """A command line argparse refuses: reported as bad input, never exit()."""


class Parser(argparse.ArgumentParser):
    def error(self, message):  # one line, through the output contract, with the nearest option
        if message.startswith("unrecognized arguments: "):
            words = [w for w in message.split(": ", 1)[1].split() if w.startswith("-")]
            message += did_you_mean(words[0].split("=")[0], _all_flags(self)) if words else ""
        raise UsageError(f"{message} (see: {self.prog} --help)")


def _all_flags(parser: argparse.ArgumentParser) -> list[str]:
    """Every option string of ``parser`` and of its subcommands."""
    flags = {s for a in parser._actions for s in a.option_strings}
    for sub in (a for a in parser._actions if isinstance(a, argparse._SubParsersAction)):
        flags |= {s for p in sub.choices.values() for a in p._actions for s in a.option_strings}
    return sorted(flags)
