"""Files like issue 23's reproducer, through the command: a tiny
well-conditioned matrix (entries ~1e-170) beside one dependent up to one
ulp.  The assumption fails at the data's precision (60-digit mpmath on the
exact floats says so), and no check may say it holds:

* contexts (Assumption 2, and Claim 1 which needs it);
* queries (Assumption 1, and Theorem 1: hypotheses-unmet, not inconclusive);
* mean-shifted queries (Assumption 3);

and the exit codes found beside them: Lemma 4 on duplicated examples is
hypotheses-unmet (Lemma 3's W' needs the queries of J independent), and a
low ``--prec`` is inconclusive ("raise --prec"), never bad input or an error.
"""
import json
from fractions import Fraction

import numpy as np
import pytest

from verifier.cli import main

U = 2.0**-53
TOL = 5 * 2 * U  # max(k, m) eps for a 3 x 5 matrix of float64 data


def rho_mp(rows) -> float:
    """Relative sigma_min of the unit-row matrix, 60 digits, exact input."""
    import mpmath

    with mpmath.workdps(60):
        R = [[mpmath.mpf(Fraction(x).numerator) / Fraction(x).denominator for x in r] for r in rows]
        M = mpmath.matrix([[x / mpmath.sqrt(sum(y * y for y in r)) for x in r] for r in R])
        s = mpmath.svd_r(M, compute_uv=False)
        s = sorted(s[i] for i in range(len(R)))
        return float(s[0] / s[-1])


def dependent_up_to_one_ulp(rng):
    x1, x2 = rng.standard_normal(5), rng.standard_normal(5)
    x3 = x1 + x2
    x3[0] = np.nextafter(x3[0], np.inf)
    return np.stack([x1, x2, x3])


def check(capsys, *args):
    code = main(["check", *map(str, args), "--json"])
    out, err = capsys.readouterr()
    return code, json.loads(out), err


@pytest.fixture(scope="module")
def files(tmp_path_factory):
    d = tmp_path_factory.mktemp("screen")
    rng = np.random.default_rng(0)
    bad = dependent_up_to_one_ulp(rng)
    tiny = rng.standard_normal((3, 5)) * 1e-170
    C = np.concatenate([tiny[None], bad[None], rng.standard_normal((3, 3, 5))])
    np.savez(d / "contexts.npz", contexts=C, queries=rng.standard_normal((5, 5)), labels=rng.standard_normal((5, 1)))
    Q = rng.standard_normal((6, 5))
    Q[0] *= 1e-170
    Q[[1, 2, 3]] = dependent_up_to_one_ulp(rng)
    np.savez(d / "queries.npz", contexts=rng.standard_normal((6, 3, 5)), queries=Q, labels=rng.standard_normal((6, 1)))
    # mean-shifted u^(t) = n e^(t) + sum_i E^(t)_i: integer contexts with E^(3) = E^(1) + E^(2) exactly,
    # e^(3) = e^(1) + e^(2) up to rounding and one ulp; example 0 tiny
    E = rng.integers(-4, 5, (6, 3, 5)).astype(np.float64)
    E[3] = E[1] + E[2]
    e = rng.standard_normal((6, 5))
    e[3] = e[1] + e[2]
    e[3, 0] = np.nextafter(e[3, 0], np.inf)
    E[0] = rng.standard_normal((3, 5)) * 1e-170
    e[0] *= 1e-170
    np.savez(d / "shifted.npz", contexts=E, queries=e, labels=rng.standard_normal((6, 1)))
    Cd = rng.standard_normal((5, 3, 5))
    qd = rng.standard_normal((5, 5))
    Cd[1], qd[1] = Cd[0], qd[0]  # examples 0 and 1 duplicated
    np.savez(d / "dup.npz", contexts=Cd, queries=qd, labels=np.repeat(rng.standard_normal((1, 1)), 5, axis=0))
    Cv = rng.standard_normal((5, 3, 5))
    qv = rng.standard_normal((5, 5))
    np.savez(d / "valid.npz", contexts=Cv, queries=qv, labels=rng.standard_normal((5, 1)))
    return {"dir": d, "bad context": bad, "queries": Q, "E": E, "e": e}


def test_a_tiny_context_does_not_hide_a_bad_one(capsys, files):
    assert rho_mp(files["bad context"]) < TOL  # fails at the data's precision (exact truth)
    code, ev, _ = check(capsys, "assumption2", "--data", files["dir"] / "contexts.npz", "--H", 2)
    assert ev["verdict"] == "refuted" and code == 1
    assert ev["measured"]["at the data's precision"] == "fails"
    assert ev["measured"]["over the data's intervals"]["witness"] == [1]
    code, ev, _ = check(capsys, "claim1", "--data", files["dir"] / "contexts.npz", "--H", 2)
    assert ev["verdict"] == "hypotheses-unmet" and code == 2


def test_a_tiny_query_does_not_hide_dependent_ones(capsys, files):
    assert rho_mp(files["queries"][[1, 2, 3]]) < TOL
    code, ev, _ = check(capsys, "assumption1", "--data", files["dir"] / "queries.npz", "--H", 2)
    assert ev["verdict"] == "refuted" and ev["measured"]["at the data's precision"] == "fails"
    assert rho_mp(files["queries"][ev["measured"]["over the data's intervals"]["witness"]]) <= TOL
    code, ev, err = check(capsys, "theorem1", "--data", files["dir"] / "queries.npz", "--H", 5)
    assert ev["verdict"] == "hypotheses-unmet" and code == 2, ev["reason"]
    a1 = [h for h in ev["hypotheses"] if h["name"] == "Assumption 1"]
    assert a1 and a1[0]["status"] == "fails-at-precision"


def test_a_tiny_mean_shifted_query_does_not_hide_dependent_ones(capsys, files):
    E, e = files["E"], files["e"]
    u = [[3 * Fraction(e[t, j]) + sum(Fraction(E[t, i, j]) for i in range(3)) for j in range(5)] for t in (1, 2, 3)]
    assert rho_mp(u) < TOL
    code, ev, _ = check(capsys, "assumption3", "--data", files["dir"] / "shifted.npz", "--H", 2)
    assert ev["verdict"] == "refuted" and ev["measured"]["at the data's precision"] == "fails", ev["reason"]


def test_lemma4_on_duplicated_examples_is_hypotheses_unmet(capsys, files):
    code, ev, err = check(capsys, "lemma4", "--data", files["dir"] / "dup.npz", "--H", 2)
    assert code == 2 and ev["verdict"] == "hypotheses-unmet", (ev["verdict"], ev["reason"])
    assert any(h["status"] == "refuted" and "Lemma 3" in h["name"] for h in ev["hypotheses"])


@pytest.mark.parametrize("sid", ["lemma4", "appendixB2"])
@pytest.mark.parametrize("prec", [16, 24])
def test_a_low_prec_is_inconclusive_not_bad_input(capsys, files, sid, prec):
    """--exact-input: the floats are the rationals they encode, so only the precision can leave it undecided."""
    code, ev, err = check(capsys, sid, "--data", files["dir"] / "valid.npz", "--H", 2, "--prec", prec, "--exact-input")
    assert code in (0, 1, 3) and ev["verdict"] in ("verified", "refuted", "inconclusive"), ev
    if code == 3:
        assert "raise --prec" in err and "Traceback" not in err


def test_lemma4_at_16_bits_names_the_remedy_or_agrees_with_128_bits(capsys, files):
    code, ev, err = check(capsys, "lemma4", "--data", files["dir"] / "valid.npz", "--H", 2, "--prec", 16,
                          "--exact-input")
    assert code in (0, 3), ev
    if code == 3:
        assert "raise --prec" in ev["reason"]
    else:  # decided at 16 bits: the same verdict as at 128
        code128, ev128, _ = check(capsys, "lemma4", "--data", files["dir"] / "valid.npz", "--H", 2, "--exact-input")
        assert (code128, ev128["verdict"]) == (code, ev["verdict"])
