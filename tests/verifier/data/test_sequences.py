"""Token-sequence datasets: exact generated conditionals, the kinds, the
readers (.npz, .json) and one-line errors for bad input."""
import json

import numpy as np
import pytest
from hypothesis import given
from hypothesis import strategies as st

from verifier.data.sequences import (
    from_sequences,
    load_sequences,
    make_sequence_instance,
    vary_sequence_options,
)
from verifier.errors import InvalidInstance


@given(st.integers(2, 6), st.integers(1, 3), st.integers(1, 4), st.integers(0, 3),
       st.sampled_from(["table", "positive"]), st.integers(0, 2**20))
def test_generated_instances_are_exact(N, S, d, H, cond, seed):
    T0 = min(H + d, N ** S)
    inst = make_sequence_instance(N=N, S=S, d=d, d_h=1, H=H, T0=T0, conditionals=cond, seed=seed)
    assert inst.T0 == T0 and len({tuple(r) for r in inst.sequences.tolist()}) == T0
    assert np.all(inst.conditionals.sum(axis=1) == 1.0)  # exactly: dyadic entries
    assert inst.is_table == (cond == "table") and inst.is_positive == (cond == "positive")


def test_kinds():
    sl = make_sequence_instance(N=4, S=3, d=2, H=1, T0=5, dataset="shared-last")
    assert sl.u == 1
    dl = make_sequence_instance(N=6, S=2, d=2, H=2, T0=6, dataset="distinct-last", conditionals="table-distinct")
    assert dl.u == 6 and len(set(dl.targets.tolist())) == 6
    assert make_sequence_instance(N=3, S=2, d=2, H=1, dataset="all").T0 == 9


@pytest.mark.parametrize("kwargs, needle", [
    (dict(sequences=[[0, 1], [0, 1]], N=3, targets=[0, 1]), "listed more than once"),
    (dict(sequences=[[0, 3]], N=3, targets=[0]), "token ids must lie"),
    (dict(sequences=[[0, 1]], N=3), "needs 'targets'"),
    (dict(sequences=[[0, 1]], N=3, conditionals=[[0.5, 0.6, 0.0]]), "sums to"),
    (dict(sequences=[[0, 1]], N=3, conditionals=[[np.nan, 0.5, 0.5]]), "NaN"),
    (dict(sequences=[[0, 1]], N=3, targets=[0], prior=[0.0]), "positive"),
    (dict(sequences=[[0.5, 1]], N=3, targets=[0]), "must hold integers; found a non-integer"),
    (dict(sequences=np.array([[0.0, 1.0]]), N=3, targets=[0], exact=False), "'sequences' holds float64 values"),
])
def test_bad_datasets_are_one_line_errors(kwargs, needle):
    with pytest.raises(InvalidInstance, match=needle):
        from_sequences(**kwargs)


def test_readers(tmp_path):
    np.savez(tmp_path / "a.npz", N=3, sequences=np.array([[0, 1], [1, 2]]), targets=np.array([2, 0]))
    inst = load_sequences(tmp_path / "a.npz", d=2, H=1)
    assert inst.targets.tolist() == [2, 0] and inst.source == "file:a.npz" and inst.is_table
    (tmp_path / "b.json").write_text(json.dumps({"N": 3, "sequences": [[0, 1]], "conditionals": [[0.25, 0.25, 0.5]]}))
    assert load_sequences(tmp_path / "b.json").is_positive
    (tmp_path / "c.json").write_text("[1, 2]")
    with pytest.raises(InvalidInstance, match="JSON object"):
        load_sequences(tmp_path / "c.json")
    with pytest.raises(InvalidInstance, match="missing array 'N'"):
        np.savez(tmp_path / "d.npz", sequences=np.array([[0]]))
        load_sequences(tmp_path / "d.npz")


@pytest.mark.parametrize("name, value, needle", [
    ("N", np.array(3.0), "'N' holds float64 values; a float stands for every real"),
    ("sequences", np.array([[0.0, 1.0]], dtype=np.float32), "'sequences' holds float32 values"),
    ("targets", np.array([1.0], dtype=np.float16), "'targets' holds float16 values"),
])
def test_index_arrays_hold_integers_unless_exact_input(tmp_path, name, value, needle):
    """N, sequences and targets are integers: an integral float is bad input, one line naming the remedy;
    --exact-input reads it as the integer it encodes."""
    arrays = {"N": np.array(3), "sequences": np.array([[0, 1]]), "targets": np.array([1])}
    arrays[name] = value
    np.savez(tmp_path / "f.npz", **arrays)
    with pytest.raises(InvalidInstance, match=needle + ".*--exact-input"):
        load_sequences(tmp_path / "f.npz")
    inst = load_sequences(tmp_path / "f.npz", exact_input=True)
    assert (inst.N, inst.sequences.tolist(), inst.targets.tolist()) == (3, [[0, 1]], [1])


def test_exact_input_reads_float_conditionals_exactly(tmp_path):
    row = np.array([[1.0, 0.0, 0.0]], dtype=np.float16)
    np.savez(tmp_path / "t.npz", N=3, sequences=np.array([[0, 0]]), conditionals=row)
    at = load_sequences(tmp_path / "t.npz")
    assert not at.is_table and at.assumption1()[0].value == "undecided" and "float16" in at.reading
    ex = load_sequences(tmp_path / "t.npz", exact_input=True)
    assert ex.is_table and ex.reading == "exact: floats read as the rationals they encode"
    np.savez(tmp_path / "s.npz", N=3, sequences=np.array([[0, 0]]), conditionals=np.array([[0.1, 0.2, 0.7]]))
    with pytest.raises(InvalidInstance, match="sums to 1 - 2.78e-17 = 36028797018963967/36028797018963968 "
                                             r"\(exactly\), not 1.*without --exact-input"):
        load_sequences(tmp_path / "s.npz", exact_input=True)  # the floats as given are not a distribution
    assert load_sequences(tmp_path / "s.npz").at_precision  # at their precision: a distribution rounds to them


def test_vary_keeps_dh_at_most_d():
    rng = np.random.default_rng(0)
    base = {"N": 5, "S": 2, "d": 3, "d_h": None, "H": 2, "T0": None, "seed": 0}
    for _ in range(50):
        o = vary_sequence_options(base, rng)
        assert 1 <= o["d_h"] <= o["d"] and o["N"] >= 2
