"""Given weights read as data (verifier/data/weights.py): every format, the
meaning of each number (half an ulp each side, exact under --exact-input),
shapes against each other, the memory budget before reading, and one line of
bad input for every malformed file."""
from __future__ import annotations

from fractions import Fraction

import numpy as np
import pytest

from verifier.data.weights import (
    BFLOAT16,
    check_against_data,
    check_memory,
    read_weights,
    weights_from_arrays,
)
from verifier.errors import InvalidInstance

H, D, DH, DV, DOUT = 2, 5, 3, 2, 2


def arrays(dtype=np.float64, seed=0):
    rng = np.random.default_rng(seed)
    return {"W_Q": rng.standard_normal((H, D, DH)).astype(dtype), "W_K": rng.standard_normal((H, D, DH)).astype(dtype),
            "W_V": rng.standard_normal((H, D, DV)).astype(dtype), "W_O": rng.standard_normal((H * DV, D)).astype(dtype),
            "W_D": rng.standard_normal((D, DOUT)).astype(dtype)}


def rounds_to(x: float, lo: Fraction, hi: Fraction, dtype) -> bool:
    """Do the reals just inside [lo, hi] round to x in dtype?  (Checked at the
    two ends moved inward by a relative 2^-80.)"""
    for q in (lo + (hi - lo) / 2**80, hi - (hi - lo) / 2**80):
        if dtype(float(q)) != dtype(x) and np.float64(q.numerator) / np.float64(q.denominator) != x:
            return False
    return True


@pytest.mark.parametrize("dtype, p", [(np.float16, 11), (np.float32, 24), (np.float64, 53)])
def test_a_float_weight_stands_for_its_rounding_interval(tmp_path, dtype, p):
    np.savez(tmp_path / "w.npz", **arrays(dtype))
    w = read_weights(tmp_path / "w.npz", required=("W_Q", "W_K", "W_V", "W_O", "W_D"))
    for name in ("W_Q", "W_O"):
        mid, rad = w.mid[name], w.rad[name]
        x = np.asarray(arrays(dtype)[name], dtype=np.float64)
        assert np.array_equal(mid, x)  # the float64 copy of a float16/32/64 is the value itself
        # the half gap away from zero: 2^(E - p); a ball of that radius contains every real rounding to x
        E = np.floor(np.log2(np.abs(x)))
        assert np.all(rad >= np.ldexp(1.0, (E - p).astype(int)))
        assert np.all(rad <= np.ldexp(1.0, (E - p + 1).astype(int)))


def test_exact_input_reads_the_stored_values(tmp_path):
    np.savez(tmp_path / "w.npz", **arrays(np.float16))
    w = read_weights(tmp_path / "w.npz", exact_input=True)
    assert w.exact and not w.rad


def test_integer_weights_are_exact_and_beyond_2_53_keep_their_rounding(tmp_path):
    a = arrays()
    a["W_Q"] = np.full((H, D, DH), 2**60 + 1, dtype=np.int64)
    np.savez(tmp_path / "w.npz", **a)
    w = read_weights(tmp_path / "w.npz")
    assert w.precision["W_Q"].exact
    assert float(w.rad["W_Q"].max()) >= 1.0  # |2^60 + 1 - fl(2^60 + 1)| = 1 is inside the ball
    assert Fraction(2**60 + 1) <= Fraction(float(w.mid["W_Q"][0, 0, 0])) + Fraction(float(w.rad["W_Q"][0, 0, 0]))


def test_torch_state_dict_and_bfloat16(tmp_path):
    torch = pytest.importorskip("torch")
    a = arrays(np.float32)
    sd = {k: torch.from_numpy(v) for k, v in a.items()}
    sd["W_K"] = sd["W_K"].to(torch.bfloat16)
    sd["skip_connection"] = torch.tensor(True)
    torch.save(sd, tmp_path / "layer.pt")
    w = read_weights(tmp_path / "layer.pt")
    assert w.skip and w.precision["W_K"] is BFLOAT16 and w.precision["W_Q"].p == 24
    k = w.mid["W_K"]
    assert np.array_equal(k, sd["W_K"].float().numpy().astype(np.float64))
    E = np.floor(np.log2(np.abs(k)))
    assert np.all(w.rad["W_K"] >= np.ldexp(1.0, (E - 8).astype(int)))  # bfloat16: 8 significand bits


def test_safetensors(tmp_path):
    pytest.importorskip("safetensors")
    torch = pytest.importorskip("torch")
    from safetensors.torch import save_file

    save_file({k: torch.from_numpy(v) for k, v in arrays(np.float32).items()}, str(tmp_path / "w.safetensors"))
    w = read_weights(tmp_path / "w.safetensors")
    assert (w.H, w.d, w.d_h, w.d_v, w.d_out) == (H, D, DH, DV, DOUT)


def test_a_pickle_that_is_not_a_state_dict_is_refused(tmp_path):
    torch = pytest.importorskip("torch")
    torch.save([1, 2, 3], tmp_path / "x.pt")
    with pytest.raises(InvalidInstance, match="state dict"):
        read_weights(tmp_path / "x.pt")
    (tmp_path / "y.pt").write_bytes(b"not a pickle at all")
    with pytest.raises(InvalidInstance, match="weights_only"):
        read_weights(tmp_path / "y.pt")


@pytest.mark.parametrize("change, message", [
    (lambda a: a.update(W_Q=a["W_Q"].transpose(0, 2, 1)), "W_K has shape .* transposed|expected"),
    (lambda a: a.update(W_K=a["W_K"][:1]), "different head count"),
    (lambda a: a.update(W_O=a["W_O"].T), r"W_O has shape .*transposed"),
    (lambda a: a.update(W_D=a["W_D"].T), r"W_D has shape .*transposed"),
    (lambda a: a.update(W_Q=a["W_Q"][0]), "3-D"),
    (lambda a: a.pop("W_O"), "the readout needs all of"),
    (lambda a: a.update(W_V=np.where(np.arange(DV) == 0, np.nan, a["W_V"])), "NaN"),
    (lambda a: a.update(lables=a["W_D"]), "not one this statement reads"),
])
def test_malformed_weights_are_one_line_of_bad_input(tmp_path, change, message):
    a = arrays()
    change(a)
    np.savez(tmp_path / "w.npz", **a)
    with pytest.raises(InvalidInstance, match=message) as exc:
        read_weights(tmp_path / "w.npz")
    assert "\n" not in str(exc.value)


def test_missing_required_weight(tmp_path):
    a = arrays()
    a.pop("W_D")
    a.pop("W_V")
    a.pop("W_O")
    np.savez(tmp_path / "w.npz", **a)
    assert read_weights(tmp_path / "w.npz").H == H  # W_Q, W_K alone: weights_rank's
    with pytest.raises(InvalidInstance, match="missing array 'W_V'"):
        read_weights(tmp_path / "w.npz", required=("W_Q", "W_K", "W_V", "W_O", "W_D"))


def test_shapes_against_the_data():
    from verifier.data.instances import make_instance

    w = weights_from_arrays(arrays())
    check_against_data(w, make_instance(H=H, n=3, d=D))
    with pytest.raises(InvalidInstance, match="d = 5, but the data's tokens have d = 3"):
        check_against_data(w, make_instance(H=H, n=2, d=3))
    wt = weights_from_arrays({"W_Q": np.ones((H, DH, D)), "W_K": np.ones((H, DH, D))})  # given transposed
    with pytest.raises(InvalidInstance, match=r"transposed\? W_Q given as \(H, d_h, d\)"):
        check_against_data(wt, make_instance(H=H, n=2, d=D))


def test_the_memory_budget_is_checked_before_reading(tmp_path, monkeypatch):
    monkeypatch.setenv("MHA_VERIFY_MAX_MEMORY_GIB", "0.001")
    with pytest.raises(InvalidInstance, match="above the budget"):
        check_memory({"W_Q": (12, 768, 64), "W_K": (12, 768, 64)}, T=757, n=197)
    big = {"W_Q": np.lib.format.open_memmap(tmp_path / "W_Q.npy", mode="w+", dtype=np.float32, shape=(64, 512, 64)),
           "W_K": np.zeros((64, 512, 64), np.float32)}
    np.savez(tmp_path / "w.npz", **big)
    with pytest.raises(InvalidInstance, match="above the budget"):
        read_weights(tmp_path / "w.npz")
    monkeypatch.setenv("MHA_VERIFY_MAX_MEMORY_GIB", "lots")
    with pytest.raises(InvalidInstance, match="not a number"):
        check_memory({}, T=1)


def test_query_bias_becomes_a_row_against_a_constant_one():
    """E W_K (W_Q^T e + b_Q) == E W_K (W_Q'^T e') with e' = [e, 1], W_Q' = [W_Q; b_Q] (exact here: integers)."""
    from verifier.data.instances import from_arrays
    from verifier.model import mha

    rng = np.random.default_rng(1)
    a = {k: rng.integers(-3, 4, v.shape).astype(np.float64) for k, v in arrays().items() if k in ("W_Q", "W_K")}
    a["b_Q"] = rng.integers(-3, 4, (H, DH)).astype(np.float64)
    inst = from_arrays(rng.integers(-3, 4, (4, 3, D)).astype(float), rng.integers(-3, 4, (4, D)).astype(float), H=H)
    w = weights_from_arrays(a, exact_input=True)
    E, e, WK, WQ = w.key_query(inst)
    got = mha.logits(E, e.mid, WK.mid, WQ.mid)
    p = np.einsum("td,hdk->htk", inst.queries, a["W_Q"]) + a["b_Q"][:, None, :]
    want = np.einsum("tnd,hdk,htk->thn", inst.contexts, a["W_K"], p)
    assert np.array_equal(got, want)
