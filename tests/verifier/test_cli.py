"""``mha-verify`` end to end, in subprocesses: the listing, the JSON shape,
the exit codes (0 verified, 1 refuted, 2 bad input / hypotheses unmet /
unknown or unimplemented id) and one clean stderr line for bad input."""
import json
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest

from verifier.statements import registry

ROOT = Path(__file__).resolve().parents[2]
JSON_KEYS = ("statement", "verdict", "certified", "claimed", "measured", "margin", "instance", "seconds")


def mha(*args, timeout=180):
    return subprocess.run([sys.executable, "-m", "verifier.cli", *map(str, args)], cwd=ROOT,
                          capture_output=True, text=True, timeout=timeout)


def assert_clean_failure(proc, code=2, *needles):
    """Exit ``code``, exactly one stderr line 'mha-verify: ...', no traceback."""
    assert proc.returncode == code, (proc.returncode, proc.stdout, proc.stderr)
    assert "Traceback" not in proc.stderr and "Traceback" not in proc.stdout
    lines = proc.stderr.strip().splitlines()
    assert len(lines) == 1 and lines[0].startswith("mha-verify: "), proc.stderr
    for needle in needles:
        assert needle in lines[0], lines[0]


def test_list_names_every_statement():
    proc = mha("list")
    assert proc.returncode == 0, proc.stderr
    ids = [line.split()[0] for line in proc.stdout.splitlines() if line.strip()]
    registry.load_all()
    assert ids == [sid for p in registry.PAPERS.values() for sid in p.statements]
    for sid in ("definition1", "definition2", "assumption1", "assumption2", "assumption3"):
        line = next(l for l in proc.stdout.splitlines() if l.startswith(sid + " "))
        assert " implemented " in line, line


def test_check_assumption2_json():
    proc = mha("check", "assumption2", "--json")
    assert proc.returncode == 0, proc.stderr
    d = json.loads(proc.stdout)
    for key in JSON_KEYS:
        assert key in d, key
    assert d["statement"] == "assumption2" and d["verdict"] == "verified" and d["certified"] is True
    assert d["instance"]["n"] < d["instance"]["d"]
    assert "trail" not in d  # check --json omits the audit trail; audit keeps it


def test_audit_json_has_the_trail():
    proc = mha("audit", "assumption2", "--json")
    assert proc.returncode == 0, proc.stderr
    assert json.loads(proc.stdout)["trail"]


def test_check_human_output():
    proc = mha("check", "assumption2")
    assert proc.returncode == 0, proc.stderr
    assert proc.stdout.startswith("assumption2: VERIFIED")


def test_refuted_exit_code_with_a_degenerate_instance():
    proc = mha("check", "assumption2", "--degenerate", "rank-deficient-context", "--json")
    assert proc.returncode == 1, (proc.stdout, proc.stderr)
    d = json.loads(proc.stdout)
    assert d["verdict"] == "refuted" and d["certified"] is True


def test_repeated_queries_refute_assumption1():
    proc = mha("check", "assumption1", "--degenerate", "repeated-queries", "--json")
    assert proc.returncode == 1, (proc.stdout, proc.stderr)
    assert json.loads(proc.stdout)["verdict"] == "refuted"


def test_assumption1_on_user_data_is_certified(tmp_path):
    rng = np.random.default_rng(7)
    path = tmp_path / "data.npz"
    np.savez(path, contexts=rng.standard_normal((6, 3, 5)), queries=rng.standard_normal((6, 5)))
    proc = mha("check", "assumption1", "--data", path, "--json")
    assert proc.returncode == 0, proc.stderr
    d = json.loads(proc.stdout)
    assert d["verdict"] == "verified" and d["certified"] is True
    assert d["instance"]["source"] == "file:data.npz" and d["instance"]["T"] == 6


def _save(path, **arrays):
    np.savez(path, **arrays)
    return path


@pytest.mark.parametrize("make, needle", [
    (lambda p, E, e: _save(p, contexts=np.where(E > 1, np.nan, E), queries=e), "NaN"),
    (lambda p, E, e: _save(p, contexts=E, queries=np.full_like(e, np.inf)), "NaN or infinite"),
    (lambda p, E, e: _save(p, contexts=E[0], queries=e), "expected (T, n, d)"),
    (lambda p, E, e: _save(p, contexts=E, queries=e[:, :3]), "queries have shape"),
    (lambda p, E, e: _save(p, queries=e), "missing array 'contexts'"),
    (lambda p, E, e: _save(p, contexts=E), "missing array 'queries'"),
    (lambda p, E, e: p.write_bytes(b"garbage") and p, "not an .npz archive"),
    (lambda p, E, e: p.with_name("absent.npz"), "no such file"),
])
def test_bad_npz_files_exit_2_with_one_line(tmp_path, make, needle):
    rng = np.random.default_rng(0)
    path = make(tmp_path / "bad.npz", rng.standard_normal((4, 3, 5)), rng.standard_normal((4, 5)))
    proc = mha("check", "assumption1", "--data", path, "--json")
    assert_clean_failure(proc, 2, "bad input", needle)
    assert proc.stdout == ""


def test_n_gt_d_is_not_bad_input():
    proc = mha("check", "assumption2", "--n", 6, "--d", 5, "--json")  # Assumption 2 simply fails
    assert proc.returncode == 1 and json.loads(proc.stdout)["verdict"] == "refuted", proc.stderr


def test_unknown_id_exits_2():
    assert_clean_failure(mha("check", "lemma99"), 2, "unknown statement id 'lemma99'")


def test_unimplemented_statement_exits_2():
    reg = registry.load_all()
    missing = [sid for sid, st in reg.items() if not st.implemented and not st.not_checkable]
    if not missing:
        pytest.skip("every statement has a checker")
    assert_clean_failure(mha("check", missing[0]), 2, "has no checker yet")
