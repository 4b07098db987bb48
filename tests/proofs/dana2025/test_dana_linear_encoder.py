"""Props. 1-3 (the linear sequence encoder L): verified on generated
instances, and each control (bias, d = 1, the claimed rate, (a) below N - 1)
refuted with a certificate."""
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from proofs.dana2025.kl_lower_bounds import ordering_floor, subspace_floor
from proofs.dana2025.prop1_linear_encoder_bound import check_dana_prop1, neg_prop1_bias, random_aot_weights
from proofs.dana2025.prop2_linear_encoder_capacity import check_dana_prop2, control_part_a_small_d
from proofs.dana2025.prop3_circle_construction import check_dana_prop3, neg_prop3_d1, neg_prop3_rate
from verifier.data.sequences import from_sequences, make_sequence_instance
from verifier.model.aot import dkl, logits


@settings(max_examples=5)
@given(st.integers(3, 7), st.integers(1, 4), st.sampled_from(["table", "positive"]), st.integers(0, 1000))
def test_props_verified(N, d, cond, seed):
    inst = make_sequence_instance(N=N, S=2, d=d, H=1, conditionals=cond, seed=seed)
    assert check_dana_prop1(inst, seed=seed).verdict == "verified"
    assert check_dana_prop2(inst, seed=seed).verdict == "verified"
    ev3 = check_dana_prop3(inst, seed=seed)
    assert ev3.verdict == ("verified" if cond == "table" and d >= 2 else
                           "hypotheses-unmet" if cond != "table" or d < 2 else ev3.verdict)


@settings(max_examples=5)
@given(st.integers(0, 10_000))
def test_floors_hold_for_models_in_the_class(seed):
    """Soundness of the floors: random members of the class never beat them."""
    inst = from_sequences([[0, 0], [0, 1], [0, 2]], N=3, targets=[0, 1, 2], d=1, H=1)
    fl = ordering_floor(inst.targets, inst.weights)["floor"]
    w = random_aot_weights(3, 2, 1, 1, 1, seed)
    assert dkl(inst.weights, inst.conditionals, logits(inst.sequences, w)) >= float(fl.lower())
    P = [[0.5, 0.25, 0.25], [0.25, 0.5, 0.25], [0.25, 0.25, 0.5]]
    shared = from_sequences([[0, 2], [1, 2], [2, 2]], N=3, conditionals=P, d=2, d_h=1, H=1)
    kappa = subspace_floor(shared.weights, P, [[0, 1, 2]], 1)["kappa0"]
    w = random_aot_weights(3, 2, 2, 1, 1, seed)
    assert dkl(shared.weights, shared.conditionals, logits(shared.sequences, w)) >= kappa


def test_controls_are_refuted():
    for control in (neg_prop1_bias, control_part_a_small_d, neg_prop3_d1, neg_prop3_rate):
        ev = control()
        assert ev.verdict == "refuted" and ev.certified, control.__name__


def test_rate_holds_for_N_3_and_4():
    for N in (3, 4):
        inst = from_sequences([[j] for j in range(N)], N=N, targets=list(range(N)), d=2, H=1)
        assert check_dana_prop3(inst, rate=True).verdict == "verified"


@pytest.mark.parametrize("control", [False, True])
def test_prop1_evidence_does_not_depend_on_the_ambient_precision(control):
    """Its balls are read at ``prec`` bits inside the checker, so a fresh process (flint at 53 bits), pytest's
    conftest (128) and a Ray worker give the same evidence."""
    from dataclasses import replace

    from verifier.arith.compare import workprec

    def run():
        ev = neg_prop1_bias() if control else check_dana_prop1(make_sequence_instance(N=4, S=2, d=2, T0=6, seed=1))
        return replace(ev, seconds=0.0)

    with workprec(53):
        at53 = run()
    with workprec(300):
        at300 = run()
    assert at53 == at300
