"""``mha-verify`` end to end: the listing, the JSON shape, the exit codes (0
verified, 1 refuted, 2 bad input / hypotheses unmet / unknown or
unimplemented id), one clean stderr line, and -- in real subprocesses -- a
closed pipe keeping the verdict's exit code and no traceback ever.  Most
calls run in-process (``verifier.cli.main`` with captured streams): fast."""
import json
import os
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest

from verifier.cli import main
from verifier.statements import registry

ROOT = Path(__file__).resolve().parents[3]
JSON_KEYS = ("statement", "verdict", "certified", "claimed", "measured", "margin", "instance", "seconds",
             "exit_code", "headline")


def mha(*args, timeout=180):
    """The real command, in a subprocess."""
    return subprocess.run([sys.executable, "-m", "verifier.cli", *map(str, args)], cwd=ROOT,
                          capture_output=True, text=True, timeout=timeout)


class Run:
    def __init__(self, code, out, err):
        self.returncode, self.stdout, self.stderr = code, out, err


def run(capsys, *args) -> Run:
    """``main`` in-process with captured stdout / stderr."""
    code = main([str(a) for a in args])
    out, err = capsys.readouterr()
    return Run(code, out, err)


def assert_clean_failure(proc, code=2, *needles):
    """Exit ``code``, exactly one stderr line 'mha-verify: ...', no traceback."""
    assert proc.returncode == code, (proc.returncode, proc.stdout, proc.stderr)
    assert "Traceback" not in proc.stderr and "Traceback" not in proc.stdout
    lines = proc.stderr.strip().splitlines()
    assert len(lines) == 1 and lines[0].startswith("mha-verify: "), proc.stderr
    for needle in needles:
        assert needle in lines[0], lines[0]


def test_list_names_every_statement(capsys):
    proc = run(capsys, "list")
    assert proc.returncode == 0, proc.stderr
    ids = [line.split()[0] for line in proc.stdout.splitlines() if line.strip()]
    assert ids == [sid for p in registry.PAPERS.values() for sid in p.statements]
    for sid in ("definition1", "definition2", "assumption1", "assumption2", "assumption3"):
        line = next(l for l in proc.stdout.splitlines() if l.startswith(sid + " "))
        assert " implemented " in line, line


def test_check_assumption2_json(capsys):
    proc = run(capsys, "check", "assumption2", "--json")
    assert proc.returncode == 0, proc.stderr
    d = json.loads(proc.stdout)
    for key in JSON_KEYS:
        assert key in d, key
    assert d["statement"] == "assumption2" and d["verdict"] == "verified" and d["certified"] is True
    assert d["exit_code"] == 0 and d["headline"].startswith("assumption2: VERIFIED")
    assert d["instance"]["n"] < d["instance"]["d"]
    assert "trail" not in d  # check --json omits the audit trail; audit keeps it


def test_audit_json_has_the_trail(capsys):
    proc = run(capsys, "audit", "assumption2", "--json")
    assert proc.returncode == 0, proc.stderr
    assert json.loads(proc.stdout)["trail"]


def test_check_human_output(capsys):
    proc = run(capsys, "check", "assumption2")
    assert proc.returncode == 0, proc.stderr
    assert proc.stdout.startswith("assumption2: VERIFIED")


def test_headline_says_when_a_hypothesis_is_only_evidenced(capsys):
    """Assumption 1 on sampled subsets only: the conclusion may be
    certified, the hypothesis is not, and the headline says so."""
    from verifier.arith.compare import Decision
    from verifier.cli.output import headline
    from verifier.statements.evidence import Hypothesis, conclude

    ev = conclude("theorem1", Decision.TRUE, claimed="", measured="", certified=True, method="arb balls",
                  hypotheses=[Hypothesis("n < d", "certified"), Hypothesis("Assumption 1", "evidence", "sampled")])
    line = headline(ev)
    assert "conclusion certified" in line and "Assumption 1 only evidenced, not certified" in line


def test_refuted_exit_code_with_a_degenerate_instance(capsys):
    proc = run(capsys, "check", "assumption2", "--degenerate", "rank-deficient-context", "--json")
    assert proc.returncode == 1, (proc.stdout, proc.stderr)
    d = json.loads(proc.stdout)
    assert d["verdict"] == "refuted" and d["certified"] is True


def test_assumption1_on_user_data_is_certified(capsys, tmp_path):
    rng = np.random.default_rng(7)
    path = tmp_path / "data.npz"
    np.savez(path, contexts=rng.standard_normal((6, 3, 5)), queries=rng.standard_normal((6, 5)))
    proc = run(capsys, "check", "assumption1", "--data", path, "--json")
    assert proc.returncode == 0, proc.stderr
    d = json.loads(proc.stdout)
    assert d["verdict"] == "verified" and d["certified"] is True
    assert d["instance"]["source"] == "file:data.npz" and d["instance"]["T"] == 6
    assert d["instance"]["reading"].startswith("at the data's precision")


def test_save_weights_writes_a_file(capsys, tmp_path):
    path = tmp_path / "w.npz"
    proc = run(capsys, "check", "theorem1", "--save-weights", path, "--json")
    assert proc.returncode == 0, proc.stderr
    assert {"W_Q", "W_K", "contexts"} <= set(np.load(path).files)


def test_unimplemented_statement_exits_2(capsys):
    reg = registry.load_all()
    missing = [sid for sid, st in reg.items() if not st.implemented]
    if not missing:
        pytest.skip("every statement has a checker")
    proc = run(capsys, "check", missing[0], "--json")
    assert_clean_failure(proc, 2)
    assert json.loads(proc.stdout)["verdict"] == "not-implemented"


# -- real processes: pipes and tracebacks ----------------------------------------

def test_closed_pipe_keeps_the_verdicts_exit_code():
    """`mha-verify audit ... | head -1`: the reader goes away after one line;
    the exit code is still the verdict's (1 refuted here), every time."""
    for _ in range(3):
        p = subprocess.Popen([sys.executable, "-m", "verifier.cli", "audit", "assumption2", "--degenerate",
                              "rank-deficient-context"], cwd=ROOT, stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                             env={**os.environ, "PYTHONUNBUFFERED": "1"})
        p.stdout.readline()
        p.stdout.close()
        err = p.stderr.read().decode()
        assert p.wait(timeout=120) == 1, err
        assert "Traceback" not in err and "BrokenPipe" not in err


def test_no_traceback_from_a_real_process():
    proc = mha("check", "theorem1", "--seed", "-1", "--json")
    assert_clean_failure(proc, 2, "--seed -1")
    assert json.loads(proc.stdout)["verdict"] == "bad-input"


README_DANA = ("dana_thm1_eps0", "--N", 3, "--d", 2, "--dh", 1, "--H", 1, "--dataset", "shared-last", "--T0", 3,
               "--conditionals", "positive")


def test_check_says_a_refutation_is_a_declared_finding_and_keeps_exit_1(capsys):
    """The README's Dana example: refuted, inside a declared family; the headline and the JSON name the finding
    and where the errata write it up, and the exit code stays 1 (the refutation is real)."""
    from verifier.statements.findings import FINDINGS, errata_reference

    registry.load_all()
    f = FINDINGS["dana_thm1_eps0.capacity_reading"]
    proc = run(capsys, "check", *README_DANA, "--json")
    d = json.loads(proc.stdout)
    assert proc.returncode == 1 and d["exit_code"] == 1 and d["verdict"] == "refuted"
    assert d["declared_finding"] == {"key": f.key, "title": f.title, "class": f.class_label,
                                     "errata": errata_reference(f)}
    assert "REFUTED, as declared: " + f.title in d["headline"] and errata_reference(f) in d["headline"]
    text = run(capsys, "check", *README_DANA)
    assert text.returncode == 1 and text.stdout.splitlines()[0] == d["headline"]
    readme = " ".join((ROOT / "README.md").read_text().split())
    assert f"({f.class_label}; {errata_reference(f)}: {f.key})" in readme  # the README quotes today's numbering
    ok = json.loads(run(capsys, "check", "dana_lemma2", "--N", 5, "--S", 2, "--d", 4, "--H", 2, "--T0", 8,
                        "--json").stdout)
    assert ok["verdict"] == "verified" and ok["declared_finding"] is None


def test_check_on_data_at_hand_places_it_in_a_family(capsys, tmp_path):
    """A file whose 10 bigrams use 4 of N = 10 tokens: refuted for d = 5 <= N+S-2, and declared (the family
    depends on the tokens the data use, not on N)."""
    import itertools

    path = tmp_path / "few_tokens.json"
    seqs = [list(s) for s in itertools.product(range(4), repeat=2)][:10]
    path.write_text(json.dumps({"N": 10, "sequences": seqs, "targets": [0] * 10}))
    d = json.loads(run(capsys, "check", "dana_lemma2", "--data", path, "--d", 5, "--H", 2, "--json").stdout)
    assert d["verdict"] == "refuted"
    assert d["declared_finding"]["key"] == "dana_lemma2.d_at_least_N_plus_S_minus_1"
