"""``check <statement> --weights FILE | --hf-model DIR --layer L``: the three
file kinds end to end, and every misuse one line with exit 2.  The
transformers models are built from configs with random weights and saved to
a temporary directory (never downloaded); those tests skip without
transformers."""
from __future__ import annotations

import json

import numpy as np
import pytest

from verifier.cli import main


def run(argv, capsys):
    code = main(argv)
    out, err = capsys.readouterr()
    assert "Traceback" not in out + err
    return code, out, err


@pytest.fixture
def saved(tmp_path, capsys):
    """Theorem 1's weights and data, as --save-weights writes them."""
    code, _, _ = run(["check", "theorem1", "--H", "2", "--n", "3", "--d", "5", "--dout", "2",
                      "--save-weights", str(tmp_path / "w.npz")], capsys)
    assert code == 0
    return tmp_path / "w.npz"


def test_saved_weights_reread(saved, capsys):
    for sid in ("weights_rank", "weights_memorize"):
        code, out, _ = run(["check", sid, "--weights", str(saved), "--json"], capsys)
        ev = json.loads(out)
        assert code == 0 and ev["verdict"] == "verified" and ev["certified"], ev["reason"]
    code, out, err = run(["check", "weights_memorize", "--weights", str(saved), "--tol", "1e-40"], capsys)
    assert code == 3 and err.startswith("mha-verify: inconclusive")  # the float64 weights' intervals straddle it
    code, _, _ = run(["check", "weights_memorize", "--weights", str(saved), "--tol", "1e-40", "--exact-input"], capsys)
    assert code == 1  # the stored float64 weights, exactly: certified above 1e-40


def test_torch_state_dict_with_separate_data(saved, tmp_path, capsys):
    torch = pytest.importorskip("torch")
    f = np.load(saved)
    torch.save({k: torch.from_numpy(f[k]).float() for k in ("W_Q", "W_K", "W_V", "W_O", "W_D")}, tmp_path / "l.pt")
    np.savez(tmp_path / "d.npz", contexts=f["contexts"], queries=f["queries"], labels=f["labels"])
    code, out, _ = run(["check", "weights_rank", "--weights", str(tmp_path / "l.pt"), "--data",
                        str(tmp_path / "d.npz"), "--json"], capsys)
    assert code in (0, 3), out
    code, out, _ = run(["check", "weights_memorize", "--weights", str(tmp_path / "l.pt"), "--data",
                        str(tmp_path / "d.npz"), "--json"], capsys)
    ev = json.loads(out)  # float32 weights of a float64 construction: decided for every value they stand for
    assert ev["verdict"] in ("verified", "refuted", "inconclusive")


def _write(tmp_path, name, **arrays):
    np.savez(tmp_path / name, **arrays)
    return str(tmp_path / name)


@pytest.mark.parametrize("argv, message", [
    (["check", "theorem1", "--weights", "W"], "theorem1 reads no given weights"),
    (["check", "weights_rank", "--weights", "W", "--tol", "1e-3"], "has no tolerance"),
    (["check", "weights_rank", "--weights", "W", "--hf-model", "W"], "give one"),
    (["check", "weights_rank", "--layer", "0"], "--layer picks a layer"),
    (["check", "weights_rank", "--weights", "W", "--H", "3"], "--H 3 conflicts"),
    (["check", "weights_rank", "--weights", "W", "--data", "D"], "give the data once"),
    (["check", "weights_rank", "--weights", "T", "--data", "D"], "transposed"),
    (["check", "weights_rank", "--weights", "K"], "different head count"),
    (["check", "weights_memorize", "--weights", "Q"], "missing array 'W_V'"),
    (["check", "weights_rank", "--weights", "nowhere.npz"], "no such file"),
    (["check", "weights_rank", "--weights", "X.txt"], "unknown suffix"),
    (["check", "weights_memorize", "--hf-model", "X.txt"], "no readout W_D"),
])
def test_misuse_is_one_line_exit_2(saved, tmp_path, capsys, argv, message):
    f = np.load(saved)
    files = {"W": str(saved), "D": _write(tmp_path, "d.npz", contexts=f["contexts"], queries=f["queries"]),
             "T": _write(tmp_path, "t.npz", W_Q=f["W_Q"].transpose(0, 2, 1), W_K=f["W_K"].transpose(0, 2, 1)),
             "K": _write(tmp_path, "k.npz", W_Q=f["W_Q"], W_K=f["W_K"][:1]),
             "Q": _write(tmp_path, "q.npz", W_Q=f["W_Q"], W_K=f["W_K"]), "X.txt": str(tmp_path / "x.txt")}
    (tmp_path / "x.txt").write_text("x")
    argv = [files.get(a, a) for a in argv]
    code, out, err = run(argv + ["--json"], capsys)
    obj = json.loads(out)
    assert code == 2 and obj["verdict"] == "bad-input" and message in obj["message"], obj
    assert len(err.strip().splitlines()) == 1


def test_float16_weights_file(saved, tmp_path, capsys):
    f = np.load(saved)
    path = _write(tmp_path, "h.npz", **{k: f[k].astype(np.float16) for k in ("W_Q", "W_K", "W_V", "W_O", "W_D")},
                  contexts=f["contexts"], queries=f["queries"], labels=f["labels"])
    code, out, _ = run(["check", "weights_memorize", "--weights", path, "--json"], capsys)
    ev = json.loads(out)
    assert code in (1, 3) and ev["verdict"] in ("refuted", "inconclusive")  # float16 cannot hold the fit to 1e-6
    assert "float16" in ev["measured"]["weights read"]["W_Q"]


def test_weights_without_data_generate_an_instance_of_their_sizes(saved, tmp_path, capsys):
    f = np.load(saved)
    path = _write(tmp_path, "kq.npz", W_Q=f["W_Q"], W_K=f["W_K"])
    code, out, _ = run(["check", "weights_rank", "--weights", path, "--n", "2", "--T", "3", "--json"], capsys)
    ev = json.loads(out)
    assert ev["instance"]["d"] == 5 and ev["instance"]["T"] == 3 and ev["instance"]["H"] == 2


# -- transformers directories built from configs ------------------------------------------------------------------

def _vit(tmp_path):
    pytest.importorskip("transformers")
    import torch
    from transformers import ViTConfig, ViTModel

    torch.manual_seed(0)
    m = ViTModel(ViTConfig(hidden_size=32, num_hidden_layers=2, num_attention_heads=4, intermediate_size=64,
                           image_size=16, patch_size=8), add_pooling_layer=False)
    m.save_pretrained(tmp_path / "vit")
    np.savez(tmp_path / "img.npz", pixel_values=np.random.default_rng(0).standard_normal((6, 3, 16, 16)).astype(
        np.float32))
    return str(tmp_path / "vit"), str(tmp_path / "img.npz")


def test_hf_vit_layer(tmp_path, capsys):
    model, data = _vit(tmp_path)
    capsys.readouterr()  # what building the model printed
    code, out, err = run(["check", "weights_rank", "--hf-model", model, "--layer", "1", "--data", data, "--json"],
                         capsys)
    ev = json.loads(out)
    assert code == 0 and ev["verdict"] == "verified", ev["reason"]
    assert (ev["instance"]["n"], ev["instance"]["d"], ev["instance"]["H"]) == (5, 32, 4)
    assert err == ""  # no progress bars, no config chatter
    for argv, message in ((["--layer", "2"], "layers 0..1"), (["--layer", "0", "--data", str(tmp_path / "x.npz")],
                                                              "'input_ids' is not one this statement reads")):
        np.savez(tmp_path / "x.npz", input_ids=np.zeros((2, 3), np.int64))
        code, out, _ = run(["check", "weights_rank", "--hf-model", model, "--data", data, *argv, "--json"], capsys)
        assert code == 2 and message in json.loads(out)["message"]


@pytest.mark.parametrize("kind", ["bert", "gpt2"])
def test_hf_text_layers(tmp_path, capsys, kind):
    pytest.importorskip("transformers")
    import torch
    from transformers import BertConfig, BertModel, GPT2Config, GPT2Model

    torch.manual_seed(0)
    if kind == "bert":
        m = BertModel(BertConfig(hidden_size=32, num_hidden_layers=1, num_attention_heads=4, intermediate_size=64,
                                 vocab_size=50, max_position_embeddings=16), add_pooling_layer=False)
    else:
        m = GPT2Model(GPT2Config(n_embd=32, n_layer=1, n_head=4, vocab_size=50, n_positions=16, bos_token_id=0,
                                 eos_token_id=0))
    m.save_pretrained(tmp_path / kind)
    ids = np.random.default_rng(1).integers(0, 50, (5, 6))
    np.savez(tmp_path / "ids.npz", input_ids=ids)
    code, out, _ = run(["check", "weights_rank", "--hf-model", str(tmp_path / kind), "--layer", "0", "--data",
                        str(tmp_path / "ids.npz"), "--json"], capsys)
    ev = json.loads(out)
    assert code == 0 and ev["verdict"] == "verified", ev["reason"]
    np.savez(tmp_path / "bad.npz", input_ids=ids + 50)
    code, out, _ = run(["check", "weights_rank", "--hf-model", str(tmp_path / kind), "--layer", "0", "--data",
                        str(tmp_path / "bad.npz"), "--json"], capsys)
    assert code == 2 and "vocabulary" in json.loads(out)["message"]
