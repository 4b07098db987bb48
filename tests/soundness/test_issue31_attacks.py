"""Reproducers of an independent adversarial run on the first paper's data (issue 31), each with its
ground truth computed here without the project's arithmetic (exact integers, Fractions):

* verdicts computed on a float64 copy that rounds the values given (int64 beyond 2^53, JSON decimals)
  are never certified refutations of the data (they were: Prop. 1's and Remark 1's structural cap,
  Lemma 3's "no W' works", Prop. 4's conclusion);
* a hypothesis undecided at the data's precision is never reported "certified" (Lemma 2);
* exact data whose float64 copies break an equality (token sums) never end in a checker error;
* valid data of tiny or subnormal magnitude never end in a checker error (exit 4);
* a JSON number beyond float64's range is bad input (exit 2), not an internal error."""
import json
from fractions import Fraction

import numpy as np
import pytest

from verifier.cli import main

E_DUP = np.array([[[1, 2, 3], [0, 1, 5]], [[1, 2, 3], [0, 1, 5]], [[2, 0, 1], [1, 3, 0]]], dtype=np.int64)
Q_DUP = np.array([[2**60, 1, 0], [2**60 + 1, 1, 0], [0, 0, 1]], dtype=np.int64)


def run(capsys, *args):
    code = main([*map(str, args), "--json"])
    return code, json.loads(capsys.readouterr().out)


@pytest.mark.parametrize("sid", ["proposition1", "remark1", "lemma3"])
def test_no_refutation_from_a_float64_copy_that_rounds_the_values_given(capsys, tmp_path, sid):
    """Queries 0 and 1 differ by one at 2^60 (their float64 copies are equal).  Ground truth: the exact
    queries are pairwise independent and W = u v^T (u = e_2, v = (1, -2^60, 0)) separates the examples;
    lemma3's W' = v w^T with w = (1, -2^60, 1) kills e^(0) and gives distinct entries off J."""
    e = [[Fraction(int(x)) for x in row] for row in Q_DUP]
    assert e[0] != e[1] and all(e[i][0] * e[j][1] != e[i][1] * e[j][0] or e[i][2] != e[j][2]
                                for i in range(3) for j in range(i + 1, 3))
    w = [1, -2**60, 1]
    assert sum(a * b for a, b in zip(w, Q_DUP[0].tolist())) == 0
    path = tmp_path / "dup.npz"
    np.savez(path, contexts=E_DUP, queries=Q_DUP)
    code, out = run(capsys, "check", sid, "--data", path, "--H", 3)
    assert out["verdict"] != "refuted" and code != 1, out["reason"]


def test_an_undecided_assumption_is_never_reported_certified(capsys, tmp_path):
    """Two float16 tokens parallel at a point of their intervals (row 2 = lambda row 1, lambda in
    (1.000515, 1.000630)): Assumption 2 is not certified at the data's precision, so Lemma 2's headline
    must not say "hypotheses certified" (its symbolic conclusion may still be verified)."""
    x1 = np.array([-0.947265625, 1.5498046875, -1.212890625], dtype=np.float16)
    x2 = np.array([-0.9482421875, 1.5498046875, -1.212890625], dtype=np.float16)
    path = tmp_path / "f16.npz"
    np.savez(path, contexts=np.stack([x1, x2])[None], queries=np.array([[1.0, 0, 0]], dtype=np.float16))
    code, out = run(capsys, "check", "lemma2", "--data", path)
    if out["verdict"] == "verified":
        a2 = [h for h in out["hypotheses"] if h["name"].startswith("Assumption 2")]
        assert a2 and a2[-1]["status"] != "certified"
        assert "hypotheses certified" not in out["headline"]


def test_exact_token_sums_whose_float64_copies_differ_are_no_error(capsys, tmp_path):
    """JSON decimals (thousandths) with every token summing to exactly 1; their float64 copies have
    several different sums.  Prop. 5's hypothesis holds on the values given: never a checker error."""
    rng = np.random.default_rng(0)

    def token():
        a = [int(v) for v in rng.integers(-999, 1000, 3)]
        return a + [1000 - sum(a)]  # thousandths: the exact sum is 1

    ctx = [[token() for _ in range(3)] for _ in range(8)]
    assert all(sum(Fraction(v, 1000) for v in t) == 1 for c in ctx for t in c)
    sums = {sum(float(Fraction(v, 1000)) for v in t) for c in ctx for t in c}
    assert len(sums) > 1  # float64 breaks the equality
    dec = lambda v: f"{v / 1000:.3f}"  # noqa: E731  (exact: a thousandth written to 3 decimals)
    text = '{"contexts": [' + ", ".join("[" + ", ".join("[" + ", ".join(dec(v) for v in t) + "]" for t in c) + "]"
                                         for c in ctx) + '], "queries": ' + json.dumps(
        [[int(v) for v in rng.integers(-9, 10, 4)] for _ in range(8)]) + "}"
    path = tmp_path / "sums.json"
    path.write_text(text)
    code, out = run(capsys, "check", "proposition5", "--data", path, "--H", 2)
    assert out["verdict"] != "error" and code != 4, out


@pytest.mark.parametrize("scale", [1e-300, 1e-315])
@pytest.mark.parametrize("sid", ["assumption3", "proposition4", "claim1", "lemma3", "lemma4", "theorem1"])
def test_tiny_and_subnormal_data_never_end_in_a_checker_error(capsys, tmp_path, sid, scale):
    rng = np.random.default_rng(7)
    path = tmp_path / "tiny.npz"
    np.savez(path, contexts=rng.standard_normal((3, 2, 3)) * scale, queries=rng.standard_normal((3, 3)) * scale)
    code, out = run(capsys, "check", sid, "--data", path, "--H", 2)
    assert code != 4 and out["verdict"] not in ("error", "bad-input"), (sid, out)


@pytest.mark.parametrize("text", ['{"contexts": [[[1e400, 0, 0], [0, 1, 0]]], "queries": [[1, 0, 0]]}',
                                  '{"contexts": [[[' + "9" * 400 + ', 0, 0], [0, 1, 0]]], "queries": [[1, 0, 0]]}'])
def test_a_json_number_beyond_float64_is_bad_input(capsys, tmp_path, text):
    path = tmp_path / "big.json"
    path.write_text(text)
    code, out = run(capsys, "check", "assumption1", "--data", path)
    assert code == 2 and out["verdict"] == "bad-input" and "1e+100" in out["message"]
