"""The standalone re-checker accepts the exported certificates and rejects
tampered ones (a changed entry, a dropped row, a swapped index), and it
imports nothing from the project."""
from __future__ import annotations

import ast
import copy
import json
from pathlib import Path

import pytest

from verifier import recheck
from verifier.report import certificates

ROOT = Path(__file__).resolve().parents[2]


@pytest.fixture(scope="module")
def certs():
    return {"thm2": certificates.thm2_certificate(), "lemma2": certificates.lemma2_certificate(),
            "probe": certificates.probe_certificate()}


def _redigest(cert):
    cert["sha256"] = recheck.digest(cert)
    return cert


def test_imports_only_the_standard_library_and_mpmath():
    tree = ast.parse((ROOT / "verifier" / "recheck.py").read_text())
    mods = {a.name.split(".")[0] for n in ast.walk(tree) if isinstance(n, ast.Import) for a in n.names}
    mods |= {n.module.split(".")[0] for n in ast.walk(tree) if isinstance(n, ast.ImportFrom) and n.module}
    assert mods <= {"__future__", "hashlib", "json", "sys", "fractions", "mpmath"}, mods


def test_format_and_digest_agree_with_the_exporter(certs):
    assert certificates.FORMAT == recheck.FORMAT
    for c in certs.values():
        assert certificates.digest(c) == recheck.digest(c) == c["sha256"]


def test_genuine_certificates_are_accepted(certs):
    for name, c in certs.items():
        ok, why = recheck.check_certificate(json.loads(json.dumps(c)))
        assert ok, (name, why)


def test_a_changed_entry_is_rejected(certs):
    c = copy.deepcopy(certs["thm2"])
    c["data"]["conditionals"][0][1] = "1/3"
    assert not recheck.check_certificate(c)[0]  # the digest
    ok, why = recheck.check_certificate(_redigest(c))
    assert not ok and "simplex" in why  # and the mathematics
    c = copy.deepcopy(certs["probe"])
    c["data"]["W_K"][0][0][0] = "0"
    assert "sha256" in recheck.check_certificate(c)[1]


def test_a_dropped_row_is_rejected(certs):
    c = copy.deepcopy(certs["lemma2"])
    c["data"]["sequences"].pop()
    assert not recheck.check_certificate(c)[0]
    ok, why = recheck.check_certificate(_redigest(c))
    assert not ok and "differ" in why  # T0 = 15 no longer the stated 16
    c = copy.deepcopy(certs["probe"])
    c["data"]["contexts"].pop()
    ok, why = recheck.check_certificate(_redigest(c))
    assert not ok


def test_a_swapped_index_is_rejected(certs):
    c = copy.deepcopy(certs["probe"])
    c["data"]["rows"][0] = c["data"]["rows"][1]
    assert not recheck.check_certificate(c)[0]
    ok, why = recheck.check_certificate(_redigest(c))
    assert not ok and "distinct" in why
    c = copy.deepcopy(certs["lemma2"])
    c["data"]["sequences"][0] = [9, 9]
    ok, why = recheck.check_certificate(_redigest(c))
    assert not ok and "tokens" in why


def test_a_false_claim_with_a_valid_digest_is_rejected(certs):
    c = copy.deepcopy(certs["thm2"])
    c["data"]["d"] = 200  # C < 1/2: the right-hand side is positive
    ok, why = recheck.check_certificate(_redigest(c))
    assert not ok and "not certainly negative" in why
    c = copy.deepcopy(certs["lemma2"])
    c["data"]["H"], c["claim"]["cap"], c["claim"]["target"] = 1, 5, 5  # H = 1: cap 5 = min(16, 5)
    ok, why = recheck.check_certificate(_redigest(c))
    assert not ok and "not below" in why
    c = copy.deepcopy(certs["probe"])
    c["claim"]["exceeds"] = c["claim"]["k"]
    assert not recheck.check_certificate(_redigest(c))[0]


@pytest.mark.parametrize("matrix, ok", [([["1", "2"], ["3", "4"]], True), ([["1", "2"], ["2", "4"]], False),
                                         ([[["1", "1"], "0"], ["0", ["-1/2", "1/2"]]], False)])
def test_rank_minors_in_intervals(matrix, ok):
    c = _redigest({"format": recheck.FORMAT, "kind": "rank-lower-bound", "claim": {"shape": [2, 2], "k": 2},
                   "data": {"matrix": matrix, "rows": [0, 1], "cols": [0, 1]}})
    assert recheck.check_certificate(c)[0] is ok


def test_command_line(tmp_path, certs, capsys):
    good, bad = tmp_path / "good.json", tmp_path / "bad.json"
    good.write_text(json.dumps(certs["thm2"]))
    bad.write_text(json.dumps({**certs["thm2"], "kind": "dana-lemma2-rank-cap"}))
    assert recheck.main([str(good)]) == 0
    assert recheck.main([str(good), str(bad)]) == 1
    assert recheck.main([str(tmp_path / "missing.json")]) == 2
    assert "REJECTED" in capsys.readouterr().out
