"""ks_s2s_memorization: every (sequence, position) gets a certified ID and
its token label exactly; U = nN distinct contexts with positions; token
labels read from files; the controls are rejected."""
import json

import numpy as np
import pytest

from proofs.kajitsuka2025.s2s_memorization import check_ks_s2s_memorization
from verifier.data.token_sequences import from_arrays, load_token_sequences, make_token_instance
from verifier.errors import InvalidInstance
from verifier.statements import registry
from verifier.statements.runner import run_control


@pytest.mark.parametrize("kw", [dict(N=12, S=3, V=6, d=2, C=3, seed=0), dict(N=80, S=4, V=5, d=3, C=4, seed=2)])
def test_generated_memorized(kw):
    ev = check_ks_s2s_memorization(make_token_instance(**kw))
    m = ev.measured
    assert ev.verdict == "verified" and ev.certified and m["not memorized"] == 0
    assert m["distinct sequence IDs"] == kw["N"] * kw["S"]  # positions make every context distinct


def test_token_labels_from_file_and_bad_shape(tmp_path):
    p = tmp_path / "s2s.json"
    p.write_text(json.dumps({"sequences": [[0, 1, 1], [1, 0, 2]], "labels": [0, 0],
                             "token_labels": [[1, 2, 3], [3, 2, 1]]}))
    ev = check_ks_s2s_memorization(load_token_sequences(p))
    assert ev.verdict == "verified"
    with pytest.raises(InvalidInstance, match="token_labels"):
        from_arrays(np.array([[0, 1]]), np.array([0]), token_labels=np.array([[1, 2, 3]]), V=2)


def test_missing_token_labels_is_hypotheses_unmet():
    inst = from_arrays(np.array([[0, 1]]), np.array([0]), V=2)
    assert check_ks_s2s_memorization(inst).verdict == "hypotheses-unmet"


def test_controls_rejected():
    reg = registry.load_all()
    controls = reg["ks_s2s_memorization"].controls
    assert len(controls) >= 3
    for c in controls:
        ev, ok = run_control("ks_s2s_memorization", c)
        assert ok, (c.description, ev.verdict, ev.reason)
