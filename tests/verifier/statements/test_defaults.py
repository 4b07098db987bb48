"""Every statement's default instance (``mha-verify check X`` with no options) is one the statement
applies to: it never answers hypotheses-unmet, except the statements whose point is an unmet
hypothesis (listed with the reason).  A sharpening of a paper is shown through its finding, not
through a default."""
import pytest

from verifier.statements import registry
from verifier.statements.runner import build_instance, run_check

#: statements whose default instance is, on purpose, outside their hypotheses
UNMET_ON_PURPOSE: dict[str, str] = {}


def implemented():
    return sorted(sid for sid, st in registry.load_all().items() if st.implemented)


@pytest.mark.parametrize("sid", implemented())
def test_the_default_instance_meets_the_statements_hypotheses(sid):
    ev = run_check(sid, build_instance(sid), seed=0)
    if sid in UNMET_ON_PURPOSE:
        assert ev.verdict == "hypotheses-unmet", (sid, ev.reason)
    else:
        assert ev.verdict != "hypotheses-unmet", (sid, ev.reason)
        assert ev.verdict != "error", (sid, ev.reason)


def test_a_resized_default_still_applies():
    """The issue's case: `check proposition3 --n 3 --d 5` (the rest default) ran on T = m(d+2)+1, outside
    the printed hypothesis T > m(d+2)+1; T now follows d."""
    ev = run_check("proposition3", build_instance("proposition3", n=3, d=5), seed=0)
    assert ev.verdict != "hypotheses-unmet", ev.reason


def test_every_remedy_named_is_an_option_that_exists():
    """Reasons name command-line options (--prec, --exhaustive-limit, --exact-input, ...); each exists."""
    import re
    from pathlib import Path

    from verifier.cli import _parser
    from verifier.cli.suggest import _all_flags

    flags = set(_all_flags(_parser()))
    root = Path(__file__).resolve().parents[3]
    # remedies of the experiments name benchmarks/run_experiments.py's options (the campaign's command)
    flags |= set(re.findall(r"add_argument\(\"(--[a-z][a-z0-9-]*)\"", (root / "benchmarks/run_experiments.py").read_text()))
    named = set()
    for path in list((root / "proofs").rglob("*.py")) + list((root / "verifier").rglob("*.py")):
        for m in re.finditer(r"(?<![\w-])--[a-z][a-z0-9-]*", path.read_text()):
            named.add(m.group(0))
    unknown = sorted(n for n in named if n not in flags and n not in ALLOWED_OTHER)
    assert not unknown, unknown


#: double-dash words in the code that are not options of this command line (other tools' flags)
ALLOWED_OTHER = {"--another-machine", "--survivors", "--summary", "--scale", "--device", "--base", "--long-markdown",
                 "--only", "--out-dir", "--no-deps", "--upgrade", "--index-url",
                 "--porcelain", "--short", "--untracked-files",  # git's, for --version
                 "--exhaustive-limt", "--flag"}  # a doctest's misspelling; a docstring's placeholder
