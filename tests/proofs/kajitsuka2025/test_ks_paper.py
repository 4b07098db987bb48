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
    with pytest.raises(InvalidInstance, match=message):
        from_arrays(bad.pop("sequences"), bad.pop("labels"), V=3, **bad)


def test_files(tmp_path):
    p = tmp_path / "d.json"
    p.write_text(json.dumps({"sequences": [[0, 1], [1, 0]], "labels": [1, 0], "embeddings": [[1, 0], [0, 1]]}))
    inst = load_token_sequences(p)
    assert (inst.N, inst.S, inst.V, inst.C) == (2, 2, 2, 2) and inst.source == "file:d.json"
    np.savez(tmp_path / "d.npz", sequences=np.array([[0, 1]]))
    with pytest.raises(InvalidInstance, match="missing 'labels'"):
        load_token_sequences(tmp_path / "d.npz")
    (tmp_path / "x.json").write_text("[1")
    with pytest.raises(InvalidInstance, match="cannot read"):
        load_token_sequences(tmp_path / "x.json")
    with pytest.raises(InvalidInstance, match="no such file"):
        load_token_sequences(tmp_path / "none.npz")
