"""The verdict table of verifier/statements/evidence.py, case by case, and the JSON form.

Rules (STATEMENTS.md, last section):
a refuted hypothesis (or one failing at the data's precision) ->
hypotheses-unmet, whatever the conclusion (one rule for every statement);
conclusion TRUE -> verified; FALSE with every hypothesis certified -> refuted;
anything else -> inconclusive.
"""
import json

import pytest
from hypothesis import given
from hypothesis import strategies as st

from verifier.arith.compare import Decision
from verifier.statements.evidence import (
    EXIT_CODES,
    HYPOTHESIS_STATUS,
    VERDICTS,
    Hypothesis,
    Step,
    conclude,
    error_evidence,
    hypotheses_status,
    jsonable,
    verdict_of,
)
from verifier.statements.refutations import Refutation

R = Refutation("counterexample", "a witness")  # what a FALSE conclusion rests on


def H(status):
    return Hypothesis(f"h-{status}", status, "")


# (conclusion, hypothesis statuses) -> verdict: the whole table.
TABLE = {
    # no hypotheses at all: "all certified" vacuously
    (Decision.TRUE, ()): "verified",
    (Decision.FALSE, ()): "refuted",
    (Decision.UNDECIDED, ()): "inconclusive",
    # all certified
    (Decision.TRUE, ("certified", "certified")): "verified",
    (Decision.FALSE, ("certified", "certified")): "refuted",
    (Decision.UNDECIDED, ("certified", "certified")): "inconclusive",
    # some only evidenced / assumed
    (Decision.TRUE, ("certified", "evidence")): "verified",
    (Decision.FALSE, ("certified", "evidence")): "inconclusive",
    (Decision.UNDECIDED, ("certified", "evidence")): "inconclusive",
    (Decision.TRUE, ("assumed",)): "verified",
    (Decision.FALSE, ("assumed",)): "inconclusive",
    (Decision.UNDECIDED, ("assumed",)): "inconclusive",
    # some refuted: hypotheses-unmet, even when the conclusion holds on the instance
    (Decision.TRUE, ("certified", "refuted")): "hypotheses-unmet",
    (Decision.TRUE, ("refuted",)): "hypotheses-unmet",
    (Decision.FALSE, ("certified", "refuted")): "hypotheses-unmet",
    (Decision.UNDECIDED, ("certified", "refuted")): "hypotheses-unmet",
    (Decision.FALSE, ("evidence", "refuted")): "hypotheses-unmet",
    (Decision.FALSE, ("assumed", "refuted")): "hypotheses-unmet",
    # fails at the data's precision (user data): unmet even when the
    # conclusion holds for the stored floats
    (Decision.TRUE, ("certified", "fails-at-precision")): "hypotheses-unmet",
    (Decision.FALSE, ("certified", "fails-at-precision")): "hypotheses-unmet",
    (Decision.UNDECIDED, ("fails-at-precision",)): "hypotheses-unmet",
}


@pytest.mark.parametrize("conclusion, statuses", sorted(TABLE, key=str))
def test_verdict_table(conclusion, statuses):
    hyps = [H(s) for s in statuses]
    want = TABLE[(conclusion, statuses)]
    assert verdict_of(conclusion, hyps) == want
    ev = conclude("x", conclusion, claimed="c", measured="m", hypotheses=hyps, refutation=R)
    assert ev.verdict == want
    assert ev.exit_code == EXIT_CODES[want]
    assert ev.reason  # a default reason is always written


@given(st.sampled_from(list(Decision)), st.lists(st.sampled_from(HYPOTHESIS_STATUS), max_size=4))
def test_verdict_rules_hold_for_every_combination(conclusion, statuses):
    hyps = [H(s) for s in statuses]
    v = verdict_of(conclusion, hyps)
    assert v in VERDICTS and v != "error"
    if "fails-at-precision" in statuses or "refuted" in statuses:  # the statement does not apply
        assert v == "hypotheses-unmet"
    elif conclusion is Decision.TRUE:
        assert v == "verified"
    elif conclusion is Decision.FALSE and all(s == "certified" for s in statuses):
        assert v == "refuted"
    else:
        assert v == "inconclusive"


def test_hypotheses_status():
    assert hypotheses_status([]) == "certified"
    assert hypotheses_status([H("certified")]) == "certified"
    assert hypotheses_status([H("certified"), H("evidence")]) == "evidence"
    assert hypotheses_status([H("assumed")]) == "evidence"
    assert hypotheses_status([H("evidence"), H("refuted")]) == "refuted"
    assert hypotheses_status([H("certified"), H("fails-at-precision")]) == "refuted"


def test_default_reasons_name_the_cause():
    assert "raise --prec" in conclude("x", Decision.UNDECIDED, claimed=0, measured=0).reason
    ev = conclude("x", Decision.FALSE, claimed=0, measured=0, hypotheses=[Hypothesis("n < d", "refuted")],
                  refutation=R)
    assert "n < d" in ev.reason
    ev = conclude("x", Decision.FALSE, claimed=0, measured=0, hypotheses=[H("evidence")], refutation=R)
    assert "only evidenced" in ev.reason
    assert conclude("x", Decision.FALSE, claimed=0, measured=0, reason="mine", refutation=R).reason == "mine"


def test_a_conclusion_that_holds_outside_the_hypotheses_is_said_not_counted():
    ev = conclude("x", Decision.TRUE, claimed=0, measured=0, certified=True,
                  hypotheses=[Hypothesis("n < d", "refuted", "n = 5, d = 4")])
    assert ev.verdict == "hypotheses-unmet" and not ev.certified and ev.exit_code == 2
    assert ev.reason.startswith("hypotheses not met on the instance: n < d refuted")
    assert "holds on this instance all the same" in ev.reason


def test_evidence_refuses_a_decided_verdict_with_unmet_hypotheses():
    from dataclasses import replace

    ev = conclude("x", Decision.TRUE, claimed=0, measured=0)
    for status in ("refuted", "fails-at-precision"):
        with pytest.raises(ValueError, match="hypotheses-unmet"):
            replace(ev, hypotheses=(Hypothesis("n < d", status),))
    with pytest.raises(ValueError, match="hypotheses-unmet"):
        replace(conclude("x", Decision.FALSE, claimed=0, measured=0, refutation=R), hypotheses=(Hypothesis("h", "refuted"),))


def test_hypothesis_status_is_validated():
    with pytest.raises(ValueError, match="not in"):
        Hypothesis("h", "probably")


def test_exit_codes_are_distinct_and_complete():
    assert set(EXIT_CODES) == set(VERDICTS)
    assert len(set(EXIT_CODES.values())) == len(VERDICTS)
    assert EXIT_CODES["verified"] == 0 and EXIT_CODES["refuted"] == 1


def test_error_evidence():
    ev = error_evidence("x", "boom", instance={"T": 1})
    assert ev.verdict == "error" and ev.exit_code == 4 and ev.reason == "boom"


# ------------------------------------------------------------------- JSON

def _rich_evidence():
    import numpy as np
    from flint import arb, fmpq

    return conclude(
        "lemma2", Decision.FALSE, claimed={"rank": 3}, measured={"rank": np.int64(2), "s": np.float64(0.5)},
        hypotheses=[Hypothesis("n < d", "certified", "3 < 5"), H("evidence")],
        certified=True, method="exact rationals", prec_bits=128, tolerance=None,
        margin=float("nan"), certificates=[{"null_vector": [fmpq(1, 3), fmpq(-2)], "ball": arb(1, 0.5),
                                            "array": np.arange(3), "inf": float("inf")}],
        instance={"T": 5, "shape": (3, 5)}, seconds=0.125, trail=[Step("did it", uses="Eq. (1)", data={"k": 1})],
        refutation=R)


def test_json_round_trip_is_deterministic():
    ev = _rich_evidence()
    s1, s2 = ev.to_json(), _rich_evidence().to_json()
    assert s1 == s2
    d = json.loads(s1)
    assert json.dumps(d, sort_keys=True) == s1  # a fixed point: plain JSON only
    assert d["verdict"] == "inconclusive" and d["measured"] == {"rank": 2, "s": 0.5}
    assert d["margin"] == "nan"
    cert = d["certificates"][0]
    assert cert["null_vector"] == ["1/3", "-2"] and cert["array"] == [0, 1, 2] and cert["inf"] == "inf"
    assert d["hypotheses"][0] == {"name": "n < d", "status": "certified", "detail": "3 < 5"}
    assert d["trail"] == [{"title": "did it", "uses": "Eq. (1)", "data": {"k": 1}}]
    assert "trail" not in json.loads(ev.to_json(with_trail=False))
    for key in ("statement", "verdict", "certified", "claimed", "measured", "margin", "instance", "seconds"):
        assert key in d


@given(st.recursive(st.none() | st.booleans() | st.integers() | st.floats() | st.text(max_size=5),
                    lambda c: st.lists(c, max_size=3) | st.dictionaries(st.text(max_size=3), c, max_size=3),
                    max_leaves=10))
def test_jsonable_gives_plain_json(x):
    y = jsonable(x)
    assert json.loads(json.dumps(y, sort_keys=True)) == y


def test_instance_options_keep_T_relative_to_the_capacity():
    from verifier.statements import registry

    registry.load_all()
    st = registry.REGISTRY["proposition2"]  # default H=3, n=3, T=9 = capacity 7 + 2
    assert st.options()["T"] == 9
    assert st.options(H=20, n=32, d=64)["T"] == 20 * 31 + 1 + 2
    assert st.options(H=20, n=32, d=64, T=5)["T"] == 5  # a given T wins
    assert registry.REGISTRY["theorem1"].options(H=20, n=32, d=64)["T"] is None  # capacity by default


# ------------------------------------------------------------------- refutations (issue 32)

def test_a_false_conclusion_needs_its_refutation():
    with pytest.raises(ValueError, match="needs its Refutation"):
        conclude("x", Decision.FALSE, claimed=0, measured=0)


def test_a_failed_construction_is_inconclusive_never_refuted():
    failed = Refutation("failed-construction", "the draw of W' tied Eq. (21)")
    ev = conclude("x", Decision.FALSE, claimed=0, measured=0, certified=True, refutation=failed, reason="gap 0")
    assert ev.verdict == "inconclusive" and not ev.certified and ev.exit_code == 3
    assert ev.reason == "a failed construction is not a counterexample: the draw of W' tied Eq. (21); gap 0"
    assert ev.refutation == failed and ev.to_dict()["refutation"]["kind"] == "failed-construction"


def test_a_variant_refutation_says_so_and_a_true_carries_none():
    v = Refutation("counterexample", "c = 0 leaves the softmax far from one-hot", variant="c pinned to 0")
    ev = conclude("x", Decision.FALSE, claimed=0, measured=0, certified=True, refutation=v)
    assert ev.verdict == "refuted" and ev.reason.endswith("refutes the variant (c pinned to 0), not the statement")
    assert conclude("x", Decision.TRUE, claimed=0, measured=0, refutation=v).refutation is None
    assert "refutation" not in conclude("x", Decision.TRUE, claimed=0, measured=0).to_dict()
