"""The certificate exporters (verifier/report/certificates.py,
check_certificates.py, certificate_format.py): every file they write is
accepted by the standalone re-checker, the writing and reading sides of the
format agree, and a verdict that is not certified gets no file."""
from __future__ import annotations

import json

import numpy as np
import pytest

from verifier import recheck
from verifier.cli import main
from verifier.data.instances import from_arrays, make_instance
from verifier.report import certificate_format as fmt
from verifier.report import certificates, check_certificates
from verifier.statements.runner import run_check


def test_format_and_digest_agree_with_the_re_checker():
    assert fmt.FORMAT == recheck.FORMAT
    c = fmt.certificate("dana-thm2-negative-rhs", {"rhs_below": "0"}, {"x": [1, "1/2"]}, about="a \"quoted\" \\ text")
    assert fmt.digest(c) == recheck.digest(c) == c["sha256"]


def test_numbers_and_arrays_are_written_exactly():
    x = np.array([[0.1, -2.0**-1074], [1e300, 3.0]])
    assert [recheck.number(v) for row in fmt.encode(x) for v in row] == [recheck.number(fmt.exact(v))
                                                                         for v in x.ravel()]
    big = np.random.default_rng(0).standard_normal((70, 70))
    enc = fmt.encode(big)
    assert set(enc) == {"float64"}
    np.testing.assert_array_equal(recheck.array(enc, big.shape, "big").floats(), big)
    assert fmt.encode(np.arange(3)) == [0, 1, 2]


@pytest.mark.parametrize("x", [1.2345e-7, 3.0, 2.5e300, 7e-310, 0.001, 999.999])
def test_rounding_is_strict_and_short(x):
    up, down = recheck.number(fmt.round_up(x)), recheck.number(fmt.round_down(x))
    assert down < recheck.number(fmt.exact(x)) < up
    assert up / recheck.number(fmt.exact(x)) < 1.02 and len(fmt.round_up(x)) < 12
    assert fmt.round_down(-1.0) == "0" and fmt.round_down(0.0) == "0"


@pytest.mark.parametrize("paper", ["dana2025", "mahdavi2024"])
def test_every_finding_certificate_is_accepted(paper, tmp_path):
    paths = certificates.export_findings(paper, tmp_path)
    keys = {p.name.split(".json")[0].rsplit(".", 1)[0] for p in paths}
    assert keys == {k for k, f in certificates.FINDINGS.items() if f.paper == paper and k in certificates.EXPORTERS}
    for p in paths:
        code, line = recheck.check_certificate(recheck.read(p))
        assert code == 0, (p.name, line)


def test_an_earlier_runs_certificate_of_a_finding_is_removed_and_other_files_kept(tmp_path):
    """The folder holds what this run certifies: a file an earlier version wrote for one of the paper's
    findings is gone (it would sit in the committed report, unchecked); files that are not ours stay."""
    stale, other, foreign = (tmp_path / "proposition3.sharpened.json", tmp_path / "dana_thm2.c_below_half.x.json",
                             tmp_path / "mine.json")
    for f in (stale, other, foreign):
        f.write_text("{}")
    paths = certificates.export_findings("mahdavi2024", tmp_path)
    assert not stale.exists() and other.exists() and foreign.exists()  # another paper's finding: not this run's
    assert set(tmp_path.glob("*.json")) == set(paths) | {other, foreign}


CHECKS = {"theorem1": {}, "appendixC": dict(d_out=2, d_v=2), "step2": dict(H=2, n=3, d=5, d_out=2, d_v=3),
          "proposition1": dict(context="shared"), "proposition2": dict(H=2, n=3, d=5, T=7, context="shared"),
          "proposition5": dict(H=2, n=3, d=4, T=8, context="sumconst")}


@pytest.mark.parametrize("sid", sorted(CHECKS))
def test_check_certificates_are_accepted(sid):
    inst = make_instance(**{"H": 3, "n": 3, "d": 5, **CHECKS[sid]}, seed=0)
    ev = run_check(sid, inst, seed=0)
    cert = check_certificates.for_check(sid, inst, ev, seed=0)
    code, line = recheck.check_certificate(json.loads(json.dumps(cert)))
    assert code == 0, line


def test_the_memorization_weights_are_the_checks_own_and_deterministic():
    inst = make_instance(H=3, n=3, d=5, seed=1)
    a, b = (check_certificates.memorization_weights(inst, 1, skip=False) for _ in range(2))
    for x, y in zip(a, b):
        np.testing.assert_array_equal(x, y)
    lo, hi = check_certificates.residual_enclosure(inst, a, skip=False)
    assert 0 <= lo <= hi < 1e-9


def test_no_certificate_for_a_verdict_that_is_not_certified():
    inst = make_instance(H=2, n=3, d=5, degenerate="repeated-queries", seed=0)
    ev = run_check("theorem1", inst, seed=0)
    with pytest.raises(check_certificates.CertificateRefused, match="not certified|hypotheses"):
        check_certificates.for_check("theorem1", inst, ev, seed=0)
    with pytest.raises(check_certificates.CertificateRefused, match="no certificate kind"):
        check_certificates.for_check("lemma1", inst, ev, seed=0)


def test_no_certificate_for_data_read_at_their_precision():
    base = make_instance(H=3, n=3, d=5, seed=0)
    inst = from_arrays(np.array(base.contexts), np.array(base.queries), np.array(base.labels), H=3, reading="dtype")
    ev = run_check("theorem1", inst, seed=0)
    with pytest.raises(check_certificates.CertificateRefused, match="precision"):
        check_certificates.for_check("theorem1", inst, ev, seed=0)


def test_the_command_line_writes_and_refuses(tmp_path, capsys):
    path = tmp_path / "c.json"
    assert main(["check", "theorem1", "--certificate", str(path)]) == 0
    assert recheck.main([str(path)]) == 0
    assert "certificate written" in capsys.readouterr().err
    assert main(["check", "lemma1", "--certificate", str(tmp_path / "x.json")]) == 2
    assert main(["check", "theorem1", "--degenerate", "repeated-queries", "--certificate", str(tmp_path / "y.json")]) == 2
    assert main(["check", "theorem1", "--certificate", str(tmp_path)]) == 2  # a folder
    err = capsys.readouterr().err
    assert not (tmp_path / "x.json").exists() and not (tmp_path / "y.json").exists()
    assert "Traceback" not in err and err.count("\n") == 3
