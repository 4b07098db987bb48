"""Theorem 1's deciding lines and evidence pinned (mutation testing, issue 9):
every path of memorize (exact readout up to T = CERTIFIED_T, float readout
above it, skip connection, construction failure, the d_h < r refutation,
readout not assembled, exact readout not enclosed) returns well-formed
evidence with the right numbers; the saved weights' certificate and the size
hypotheses at their boundaries."""
import numpy as np
import pytest

from proofs.mahdavi2024 import theorem1_memorization as t1
from proofs.mahdavi2024.step2_linear_readout import TOLERANCE
from proofs.mahdavi2024.theorem1_memorization import (
    CERTIFIED_T,
    FAR,
    check_theorem1,
    control_dh_too_small,
    memorize,
    saved_weights_certificate,
    size_hypotheses,
)
from verifier.arith.compare import Decision
from verifier.data.instances import from_arrays, make_instance
from verifier.statements.evidence import Step

SIZE_NAMES = ["d_v >= d_out >= 1", "d_out <= d", "T <= H(r-1)+1"]


def well_formed(ev, sid="theorem1"):
    assert ev.statement == sid
    assert isinstance(ev.claimed, str) and ev.claimed.startswith("yhat = y for every example")
    assert isinstance(ev.measured, dict) and ev.measured
    assert isinstance(ev.method, str) and ev.method
    assert isinstance(ev.reason, str)
    if ev.method.startswith("exact comparisons"):  # the structural cap decided: no arithmetic precision
        assert ev.prec_bits is None
    else:
        assert isinstance(ev.prec_bits, int) and ev.prec_bits >= 53
    assert [h.name for h in ev.hypotheses][:3] == SIZE_NAMES
    assert all(isinstance(h.detail, str) and h.detail for h in ev.hypotheses[:3])
    for s in ev.trail:
        assert isinstance(s, Step) and isinstance(s.title, str) and s.title
        assert isinstance(s.uses, str) and s.uses and isinstance(s.data, dict)
    for c in ev.certificates:
        assert isinstance(c, dict) and isinstance(c.get("kind"), str) and c["kind"]


def _steps(ev, prefix):
    return [s for s in ev.trail if s.title.startswith(prefix)]


def test_exact_readout_path_numbers():
    inst = make_instance(H=3, n=3, d=5, seed=0)
    ev = memorize(inst, prec=128, seed=0)  # statement_id defaults to theorem1
    well_formed(ev)
    assert ev.verdict == "verified" and ev.certified
    assert ev.method == "rank(Z) = T: arb balls; readout residual: arb balls (reported)"
    assert ev.claimed == "yhat = y for every example"
    scale = float(np.abs(np.asarray(inst.labels)).max())
    assert ev.tolerance == TOLERANCE * scale
    worst = ev.measured["max |yhat - y| with the exact readout (ball)"]
    assert ev.margin == 1.0 - ev.certificates[0]["residual_norm_upper"] and 0 < ev.margin <= 1  # the rank certificate
    assert worst < ev.tolerance  # the residual, reported beside it
    kinds = [c["kind"] for c in ev.certificates]
    assert kinds[0] == "rank(Z) = T: nonsingular minor"
    assert "residual ball (exact readout), reported beside the rank certificate" in kinds
    saved = [c for c in ev.certificates if c["kind"].startswith("saved float64 weights")][0]
    assert saved["far from the labels"] is False and saved["skip"] is False
    step = _steps(ev, "The float64 weights as saved")[0]
    assert step.uses == "--save-weights" and step.data == {k: v for k, v in saved.items() if k != "kind"}
    rank_step = _steps(ev, "rank(Z) = T certified")[0]
    assert rank_step.uses == "Prop. 1 + Step 2" and rank_step.data["T"] == inst.T
    readout = _steps(ev, "Readout: W_V^h = [M_h, 0], W_O, W_D; forward pass (Eqs. 1-6)")[0]
    assert readout.uses == "Step 2" and "with skip" not in readout.title
    assert readout.data == {"max |yhat - y| (float64 weights, numpy)":
                            ev.measured["max |yhat - y| of the float64 weights (numpy)"]}


def test_rank_not_certified_is_said_so_in_the_trail():
    from proofs.mahdavi2024.theorem1_memorization import control_too_many_examples

    ev = control_too_many_examples()
    well_formed(ev)
    assert not _steps(ev, "rank(Z) = T certified")
    step = _steps(ev, "rank(Z) <= 5 < T for any weights: the construction is not attempted")[0]
    assert step.uses.startswith("structural caps") and step.data["cap"] == 5 < ev.measured["T"]
    capped = ev.hypotheses[-1]
    assert capped.status == "refuted" and capped.detail.startswith("rank(Z) <= 5 < T = 6 for ANY weights")


def test_callers_precision_and_seed_reach_the_construction():
    inst = make_instance(H=3, n=3, d=5, seed=0)
    ev = check_theorem1(inst, prec=192)
    assert ev.certificates[0]["prec_bits"] >= 192 and ev.prec_bits == 192
    assert ev.measured["readout precision bits"] >= 192
    key = "max |yhat - y| of the float64 weights (numpy)"
    a, b = (memorize(inst, prec=128, seed=s) for s in (0, 1))
    assert a.measured[key] != b.measured[key]  # another seed, another construction (Claim 1 targets, Lemma 3)
    assert a.certificates[0]["residual_norm_upper"] != b.certificates[0]["residual_norm_upper"]


def test_large_labels_scale_the_tolerance_and_not_the_far_flag():
    inst = make_instance(H=3, n=3, d=5, seed=0)
    Y = np.asarray(inst.labels) * 1e10
    ev = check_theorem1(from_arrays(np.asarray(inst.contexts), np.asarray(inst.queries), Y, H=3))
    assert ev.verdict == "verified" and ev.tolerance == TOLERANCE * float(np.abs(Y).max())
    saved = [c for c in ev.certificates if c["kind"].startswith("saved float64 weights")][0]
    assert saved["far from the labels"] is False


@pytest.mark.parametrize("T", [CERTIFIED_T, CERTIFIED_T + 1])
def test_certified_readout_boundary(T):
    inst = make_instance(H=30, n=3, d=4, T=T, seed=0, d_out=1)
    ev = check_theorem1(inst)
    well_formed(ev)
    assert ev.verdict == "verified" and ev.certified
    exact = "max |yhat - y| with the exact readout (ball)" in ev.measured
    saved = any(c["kind"].startswith("saved float64 weights") for c in ev.certificates)
    assert exact == saved == (T <= CERTIFIED_T)
    assert ev.method == ("rank(Z) = T: arb balls; readout residual: "
                         + ("arb balls (reported)" if T <= CERTIFIED_T else "float64 (reported)"))
    assert ev.measured["max |yhat - y| of the float64 weights (numpy)"] < 1e-9


@pytest.mark.parametrize("T", [8, CERTIFIED_T + 1])
def test_skip_connection_shifts_the_labels(T):
    inst = make_instance(H=30, n=3, d=4, T=T, seed=0, d_out=2)
    ev = memorize(inst, prec=128, seed=0, skip=True)
    well_formed(ev)
    assert ev.verdict == "verified" and ev.claimed == "yhat = y for every example (skip connection)"
    assert ev.measured["max |yhat - y| of the float64 weights (numpy)"] < 1e-9
    readout = _steps(ev, "Readout:")[0]
    assert readout.uses == "Step 2, App. C" and readout.title.endswith(" with skip: labels shifted by W_D^T e")
    if T <= CERTIFIED_T:
        saved = [c for c in ev.certificates if c["kind"].startswith("saved float64 weights")][0]
        assert saved["skip"] is True and saved["max |yhat - y| <="] < 1e-9


def test_exact_readout_not_enclosed_falls_back_to_float(monkeypatch):
    inst = make_instance(H=3, n=3, d=5, seed=0)
    monkeypatch.setattr(t1, "exact_readout_residual",
                        lambda *a, **k: (Decision.UNDECIDED, float("inf"), float("inf"), None, 1024))
    ev = check_theorem1(inst)
    well_formed(ev)
    # rank(Z) = T is certified: an exact readout exists whatever its enclosure shows (issue 32)
    assert ev.verdict == "verified" and ev.certified
    assert "the verdict rests on the rank certificate" in ev.reason
    step = _steps(ev, "exact readout not enclosed")[0]
    assert step.uses == "Step 2" and step.data == {"up to bits": 1024}
    assert ev.measured["max |yhat - y| of the float64 weights (numpy)"] < 1e-9  # the float readout was used


def test_dh_below_r_is_refuted_by_certified_head_ranks():
    ev = control_dh_too_small()
    well_formed(ev)
    assert ev.verdict == "refuted" and ev.certified and ev.method == "arb balls"
    assert ev.measured == {"construction failed at": "factorisation"}
    step = ev.trail[0]
    assert step.title == "Construction failed at factorisation" and step.uses == "factorisation"
    assert step.data["message"].startswith("factorisation: rank W^1 = 3 exceeds d_h = 2")
    for c in ev.certificates:
        assert c["kind"] == "rank W^h >= d_h + 1 (nonsingular minor)" and c["k"] == 3 and c["decision"] == "true"
    assert [c["head"] for c in ev.certificates] == [1]


def test_one_head_of_rank_three_in_d_h_two():
    """Every head certified (H = 1): the refutation path is taken and its certificate reported."""
    ev = check_theorem1(make_instance(H=1, n=3, d=5, d_h=2, T=3, seed=0), force_r=3)
    assert [(c["head"], c["k"], c["decision"]) for c in ev.certificates] == [(1, 3, "true")]


def test_at_most_three_head_certificates_numbered_from_one():
    inst = make_instance(H=5, n=3, d=5, d_h=2, T=11, seed=0)  # T above d_h's capacity: hypotheses unmet
    ev = check_theorem1(inst, force_r=3)  # every one of the 5 heads has rank 3 > d_h
    heads = [c["head"] for c in ev.certificates]
    assert heads == [1, 2, 3]
    assert all(c["k"] == 3 and c["decision"] == "true" for c in ev.certificates)


def test_construction_failure_with_a_clash_reports_both_examples():
    inst = make_instance(H=2, n=3, d=5, seed=0)
    E, e, Y = (np.array(a, dtype=float) for a in (inst.contexts, inst.queries, inst.labels))
    E[1], e[1] = E[0], e[0]
    Y[1] = Y[0] + 1
    ev = check_theorem1(from_arrays(E, e, Y, H=2))
    well_formed(ev)
    assert ev.verdict == "hypotheses-unmet"  # identical queries: Assumption 1 is refuted too
    assert ev.certificates[0] == {"kind": "identical inputs, different labels: yhat(t) = yhat(t') for ANY weights",
                                  "examples": [0, 1], "reading": "identical values given (exact)"}
    assert ev.certificates[1]["kind"].startswith("structural cap")
    assert ev.refutation.kind == "no-choice-works"
    # four distinct examples for T = 5: the cap decides first, the construction is not attempted
    assert ev.trail[0].title.startswith("rank(Z) <= 4 < T for any weights") and ev.measured["T"] == 5


def test_a_clash_under_the_dtype_reading_is_hypotheses_unmet_through_assumption1():
    """The same clash read at the data's precision (float64 values that are not dyadics of few
    bits): Assumption 1 fails at the data's precision (two stored queries are equal), so the
    verdict is hypotheses-unmet whatever the conclusion; the clash is a verdict on the stored data."""
    inst = make_instance(H=2, n=3, d=5, seed=0)
    E, e, Y = (np.array(a, dtype=float) for a in (inst.contexts, inst.queries, inst.labels))
    E[1], e[1] = E[0], e[0]
    Y[1] = Y[0] + 1
    data = from_arrays(E, e, Y, H=2, reading="dtype")
    assert not data.precision.exact_for("contexts", "queries")
    ev = check_theorem1(data)
    well_formed(ev)
    assert ev.verdict == "hypotheses-unmet"
    a1 = next(h for h in ev.hypotheses if h.name == "Assumption 1")
    assert a1.status == "refuted"
    assert ev.certificates[0]["examples"] == [0, 1]
    assert ev.certificates[0]["reading"].startswith("identical as stored") and "counterexample at the stored values" \
        in ev.certificates[0]["reading"]


def test_forced_r_with_another_failure_is_not_a_refutation():
    """force_r given but Claim 1 fails (repeated queries): no rank certificate is attempted."""
    inst = make_instance(H=2, n=3, d=5, seed=0)
    q = np.array(inst.queries, dtype=float)
    q[1] = q[0]
    ev = check_theorem1(from_arrays(np.asarray(inst.contexts), q, np.asarray(inst.labels), H=2), force_r=3)
    assert ev.verdict == "hypotheses-unmet" and ev.certificates == ()


def test_readout_not_assembled():
    ev = check_theorem1(make_instance(H=2, n=3, d=5, seed=0, d_out=6, d_v=6))
    well_formed(ev)
    assert ev.verdict == "hypotheses-unmet" and ev.method.startswith("rank(Z) = T: arb balls")
    step = ev.trail[-1]
    assert step.title.startswith("Readout not assembled: Step 2: needs d_v >= d_out") and step.uses == "Step 2"
    assert "Step 2: needs d_v >= d_out" in ev.reason
    assert ev.certificates and ev.certificates[0]["kind"] == "rank(Z) = T: nonsingular minor"


def test_size_hypotheses_at_their_boundaries():
    inst = make_instance(H=2, n=3, d=5, seed=0, d_out=5, d_v=5)  # d_out = d, d_v = d_out
    hs = size_hypotheses(inst)
    assert [h.name for h in hs] == SIZE_NAMES and all(h.status == "certified" for h in hs)
    assert hs[0].detail == "d_v = 5, d_out = 5" and hs[1].detail == "d_out = 5, d = 5"
    assert hs[2].detail == f"T = {inst.T}, H(r-1)+1 = {inst.capacity}"
    over = size_hypotheses(make_instance(H=2, n=3, d=5, seed=0, d_out=6, d_v=6))
    assert [h.status for h in over] == ["certified", "refuted", "certified"]


def test_saved_weights_certificate_numbers(tmp_path):
    inst = make_instance(H=3, n=3, d=5, seed=0, d_out=2)
    path = tmp_path / "w.npz"
    ev = check_theorem1(inst, save_weights=str(path))
    f = np.load(path)
    assert bool(f["skip_connection"]) is False and np.array_equal(f["labels"], np.asarray(inst.labels))
    saved_step = _steps(ev, "Weights saved")[0]
    assert saved_step.uses == "--save-weights" and saved_step.data == {"path": str(path)}
    w = t1.Weights(*(f[k] for k in ("W_Q", "W_K", "W_V", "W_O", "W_D")))
    c = saved_weights_certificate(inst, w, skip=False, prec=16)  # 16 bits: [0, 0.03], wide: the ladder climbs
    assert 16 < c["prec_bits"] <= 1024 and c["max |yhat - y| <="] < 1e-9 and c["far from the labels"] is False
    c128 = saved_weights_certificate(inst, w, skip=False, prec=128)
    assert c128["prec_bits"] == 128 and 0 < c128["max |yhat - y| >="] <= c128["max |yhat - y| <="] < 1e-9
    assert c["relative to max|y| <="] == c["max |yhat - y| <="] / c["max|y|"]
    # the LAST example's label moved by 1: every row is read
    Y = np.array(inst.labels, dtype=float)
    Y[-1, -1] += 1.0
    moved = from_arrays(np.asarray(inst.contexts), np.asarray(inst.queries), Y, H=3)
    c = saved_weights_certificate(moved, w, skip=False, prec=128)
    assert 0.999 < c["max |yhat - y| >="] <= c["max |yhat - y| <="] < 1.001 and c["far from the labels"] is True
    assert saved_weights_certificate(moved, w, skip=False, prec=64)["prec_bits"] == 64  # tight at once: no climb
    # labels at scale 0.5 and 0: the relative residual divides by max|y| only when it is positive
    half = from_arrays(np.asarray(inst.contexts), np.asarray(inst.queries), np.full_like(Y, 0.5), H=3)
    c = saved_weights_certificate(half, w, skip=False, prec=128)
    assert c["max|y|"] == 0.5 and c["relative to max|y| <="] == c["max |yhat - y| <="] / 0.5
    zero = from_arrays(np.asarray(inst.contexts), np.asarray(inst.queries), np.zeros_like(Y), H=3)
    c = saved_weights_certificate(zero, w, skip=False, prec=128)
    assert c["max|y|"] == 0.0 and c["relative to max|y| <="] == c["max |yhat - y| <="]
    assert FAR == 1e-6


def test_saved_skip_weights_are_certified_with_the_skip(tmp_path):
    inst = make_instance(H=3, n=3, d=5, seed=0, d_out=2)
    path = tmp_path / "w.npz"
    ev = memorize(inst, prec=128, seed=0, skip=True, save=str(path))
    assert ev.verdict == "verified"
    f = np.load(path)
    assert bool(f["skip_connection"]) is True
    w = t1.Weights(*(f[k] for k in ("W_Q", "W_K", "W_V", "W_O", "W_D")))
    assert saved_weights_certificate(inst, w, skip=True, prec=128)["max |yhat - y| <="] < 1e-9
    assert saved_weights_certificate(inst, w, skip=False, prec=128)["max |yhat - y| >="] > 1e-3


def test_far_weights_reason(tmp_path, monkeypatch):
    """Queries scaled by 1e50 (issue 9): exact weights exist, the float64 ones miss the labels."""
    inst = make_instance(H=3, n=3, d=5, d_out=2, d_v=2, seed=0)
    far = from_arrays(inst.contexts, inst.queries * 1e50, inst.labels, H=3, d_v=2)
    ev = memorize(far, prec=128, seed=0, skip=True, save=str(tmp_path / "w.npz"))
    assert ev.verdict == "verified"
    assert ev.reason.startswith("exact weights exist (rank(Z) = T certified), but the float64 weights saved do NOT")
    assert ev.reason.endswith("float64 cannot represent the exact weights here")
    plain = memorize(far, prec=128, seed=0, skip=True).reason
    assert "the float64 weights do NOT memorize" in plain
    monkeypatch.setattr(t1, "memorization_decision", lambda *a: Decision.UNDECIDED)
    ev = memorize(far, prec=128, seed=0, skip=True)
    assert ev.reason.startswith("the float64 weights miss the labels: certified max |yhat - y| >= ")


def test_duplicates_reading_names_both_inputs_and_their_exactness():
    """Identical inputs are exact only when contexts AND queries are read exactly (integers,
    --exact-input, arrays given in Python); a user's floats, dyadic or not, stand for intervals:
    identical as stored, and the reading describes both arrays."""
    from proofs.mahdavi2024.theorem1_memorization import duplicates_reading
    from verifier.data.instances import from_arrays

    rng = np.random.default_rng(0)
    E, e, y = rng.standard_normal((4, 3, 5)), rng.standard_normal((4, 5)), rng.standard_normal((4, 1))
    dy = lambda a: np.round(a * 4) / 4  # noqa: E731  (dyadic: exact under the dtype reading)
    assert duplicates_reading(from_arrays(E, e, y, H=2)) == "identical values given (exact)"
    ints = lambda a: np.round(a * 4).astype(np.int64)  # noqa: E731  (integers: exact under the dtype reading)
    assert duplicates_reading(from_arrays(ints(E), ints(e), y, H=2, reading="dtype")) == "identical values given (exact)"
    for Ec, ec in ((E, e), (E, dy(e)), (dy(E), e), (dy(E), dy(e))):
        text = duplicates_reading(from_arrays(Ec, ec, y, H=2, reading="dtype"))
        assert text.startswith("identical as stored") and "contexts float64: " in text and "queries float64: " in text


def test_a_clash_needs_the_same_context_and_the_same_query():
    from proofs.mahdavi2024.theorem1_memorization import conflicting_duplicates
    from verifier.data.instances import from_arrays

    rng = np.random.default_rng(1)
    E, e, y = rng.standard_normal((4, 3, 5)), rng.standard_normal((4, 5)), rng.standard_normal((4, 1))
    E[1] = E[0]  # the same context, another query, another label: no clash
    assert conflicting_duplicates(from_arrays(E, e, y, H=2)) is None
    E[3], e[3] = E[0], e[0]  # the same context and query, another label
    assert conflicting_duplicates(from_arrays(E, e, y, H=2)) == (0, 3)
