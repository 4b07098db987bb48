"""The third paper is registered with its own instance options; its lower
bounds are listed as not checkable, with the reason, never run; its data
loader gives one-line errors."""
import json

import numpy as np
import pytest

from verifier.data.token_sequences import from_arrays, load_token_sequences, make_token_instance
from verifier.errors import InvalidInstance, NotImplementedStatement
from verifier.statements import registry

KS_IDS = ("ks_contextual_mapping", "ks_ffn_memorization", "ks_ntp_memorization", "ks_s2s_memorization",
          "ks_ntp_lower", "ks_s2s_lower_hardmax")


def test_paper_and_ids_registered():
    registry.load_all()
    paper = registry.PAPERS["kajitsuka2025"]
    assert set(KS_IDS) <= set(paper.statements)
    assert list(registry.PAPERS)[-1] == "kajitsuka2025"
    assert {"N", "S", "V", "d", "C", "seed"} <= set(registry.instance_options("ks_ffn_memorization").defaults)


@pytest.mark.parametrize("sid", ["ks_ntp_lower", "ks_s2s_lower_hardmax"])
def test_lower_bounds_not_checkable(sid):
    registry.load_all()
    st = registry.REGISTRY[sid]
    assert not st.implemented and "ALL" in st.not_checkable
    with pytest.raises(NotImplementedStatement, match="not checkable"):
        registry.get(sid)


def test_generated_instance_is_exact_and_deterministic():
    a, b = make_token_instance(N=20, S=3, V=4, d=2, C=3, seed=5), make_token_instance(N=20, S=3, V=4, d=2, C=3, seed=5)
    assert a.fingerprint() == b.fingerprint()
    assert np.unique(a.sequences, axis=0).shape[0] == 20 and np.unique(a.ids).size == 20
    assert a.labels.max() < 3 and np.unique(a.embeddings, axis=0).shape[0] == 4


@pytest.mark.parametrize("bad, message", [
    (dict(sequences=[[0, 1]], labels=[0, 1]), "labels"),
    (dict(sequences=[[0, 9]], labels=[0]), "token ids must lie"),
    (dict(sequences=[[0.5, 1]], labels=[0]), "integers"),
    (dict(sequences=[[0, 1]], labels=[-1]), ">= 0"),
    (dict(sequences=[[0, 1]], labels=[0], embeddings=[[1, 2]]), "token ids must lie"),
    (dict(sequences=[0, 1], labels=[0]), "2-d"),
])
def test_bad_arrays_are_one_line(bad, message):
    bad = dict(bad)  # the parameters are shared by every run of the test in one process (mutmut runs it again)
    with pytest.raises(InvalidInstance, match=message):
        from_arrays(bad.pop("sequences"), bad.pop("labels"), V=3, **bad)


def test_files(tmp_path):
    p = tmp_path / "d.json"
    p.write_text(json.dumps({"sequences": [[0, 1], [1, 0]], "labels": [1, 0], "embeddings": [[1, 0], [0, 1]]}))
    inst = load_token_sequences(p)
    assert (inst.N, inst.S, inst.V, inst.C) == (2, 2, 2, 2) and inst.source == "file:d.json"
    np.savez(tmp_path / "d.npz", sequences=np.array([[0, 1]]))
    with pytest.raises(InvalidInstance, match="missing array 'labels'"):
        load_token_sequences(tmp_path / "d.npz")
    (tmp_path / "x.json").write_text("[1")
    with pytest.raises(InvalidInstance, match="not valid JSON"):
        load_token_sequences(tmp_path / "x.json")
    with pytest.raises(InvalidInstance, match="no such file"):
        load_token_sequences(tmp_path / "none.npz")


@pytest.mark.parametrize("name", ["ids", "embeddings", "sequences", "labels", "token_labels"])
@pytest.mark.parametrize("dt", [np.float16, np.float32])
def test_float_arrays_are_not_integers(tmp_path, name, dt):
    """float16 2049 is stored as 2048 and stands for [2047.5, 2049]: two float ids may be one integer or
    not, so 'distinct ids' or 'token-wise separated' would hold for the stored values only.  A float array
    is bad input, one line naming why and --exact-input; with --exact-input an integral float is exact."""
    arrays = {"sequences": np.array([[0, 1], [1, 0]]), "labels": np.array([1, 0]),
              "token_labels": np.array([[0, 1], [1, 1]]), "embeddings": np.array([[2048, 1], [2050, 3]]),
              "ids": np.array([2048, 2050])}
    arrays[name] = arrays[name].astype(dt)
    np.savez(tmp_path / "f.npz", **arrays)
    with pytest.raises(InvalidInstance, match=f"'{name}' holds {np.dtype(dt).name} values; a float stands for "
                                              "every real that rounds to it.*--exact-input"):
        load_token_sequences(tmp_path / "f.npz")
    inst = load_token_sequences(tmp_path / "f.npz", exact_input=True)
    assert inst.ids.tolist() == [2048, 2050] and inst.embeddings[:, 0].tolist() == [2048, 2050]
    arrays[name] = arrays[name].astype(np.float64) + 0.5
    np.savez(tmp_path / "g.npz", **arrays)
    with pytest.raises(InvalidInstance, match="non-integer"):
        load_token_sequences(tmp_path / "g.npz", exact_input=True)


def test_integers_beyond_the_exact_range_are_refused_exactly(tmp_path):
    """Entries at or beyond 2^40 are refused, compared exactly: 2^40 - 1 passes, 2^40 does not; uint64 and
    JSON integers beyond int64 are never wrapped or rounded."""
    ok = {"sequences": [[0]], "labels": [0], "ids": [2**40 - 1]}
    (tmp_path / "a.json").write_text(json.dumps(ok))
    assert load_token_sequences(tmp_path / "a.json").ids.tolist() == [2**40 - 1]
    for ids in ([2**40], [2**64 + 3], [-(2**63) - 1]):
        (tmp_path / "b.json").write_text(json.dumps({**ok, "ids": ids}))
        with pytest.raises(InvalidInstance, match="magnitude >= 2\\^40"):
            load_token_sequences(tmp_path / "b.json")
    np.savez(tmp_path / "c.npz", sequences=np.array([[0]]), labels=np.array([0]),
             ids=np.array([2**64 - 1], dtype=np.uint64))
    with pytest.raises(InvalidInstance, match="magnitude >= 2\\^40"):
        load_token_sequences(tmp_path / "c.npz")


def test_a_misspelled_array_is_refused(tmp_path):
    (tmp_path / "d.json").write_text(json.dumps({"sequences": [[0]], "labels": [0], "id": [3]}))
    with pytest.raises(InvalidInstance, match="array 'id' is not one this statement reads"):
        load_token_sequences(tmp_path / "d.json")
