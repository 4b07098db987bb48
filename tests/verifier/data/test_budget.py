"""verifier/data/budget.py: sizes checked against a memory budget before
anything is allocated; an .npz read header first, every member an .npy; a
JSON integer beyond 64 bits bad input."""
from __future__ import annotations

import io
import json
import zipfile

import numpy as np
import pytest
from numpy.lib import format as npy

from verifier.data import budget
from verifier.data.budget import GiB, check_npz_members, check_sizes, load_json, memory_budget, parse_size
from verifier.errors import InvalidInstance


def npy_header(shape, descr="<f8") -> bytes:
    head = io.BytesIO()
    npy.write_array_header_1_0(head, {"descr": descr, "fortran_order": False, "shape": tuple(shape)})
    return head.getvalue()


def declared_bomb(path, gib: int = 12, body: int = 1 << 16) -> None:
    """An .npz whose contexts declare ``gib`` GiB, followed by ``body`` zero bytes (deflated to
    almost nothing): reading it as numpy does would allocate the declared size first."""
    n = gib * GiB // 8 // 15
    with zipfile.ZipFile(path, "w", zipfile.ZIP_DEFLATED) as zf:
        zf.writestr("contexts.npy", npy_header((n, 3, 5)) + bytes(body))
        zf.writestr("queries.npy", npy_header((n, 5)) + bytes(body))


def test_sizes_parse_and_print():
    assert parse_size("16G") == 16 * GiB and parse_size("1.5 GiB") == 3 * GiB // 2 and parse_size("10") == 10
    for bad in ("", "abc", "-1G", "0", "1X", "1e9"):
        with pytest.raises(InvalidInstance, match="--max-memory"):
            parse_size(bad)
    assert budget.format_size(GiB) == "1 GiB" and budget.format_size(5) == "5 B"


def test_the_default_budget_is_stated_and_within_the_machine():
    b = budget.default_budget()
    assert 0 < b <= budget.DEFAULT_MAX_MEMORY and budget.current_budget() == b
    with memory_budget(123):
        assert budget.current_budget() == 123
    assert budget.current_budget() == b


def test_an_estimate_above_the_budget_names_the_size_the_largest_term_and_the_budget():
    with memory_budget(GiB):
        assert check_sizes("x", {"a": GiB // 2, "b": GiB // 2}) == GiB
        with pytest.raises(InvalidInstance) as err:
            check_sizes("theorem1 on d_h = 100000000", {"weights": 100 * GiB, "data": GiB})
    msg = str(err.value)
    assert "d_h = 100000000" in msg and "weights 100 GiB" in msg and "budget of 1 GiB" in msg
    assert "--max-memory 128G" in msg and "\n" not in msg


@pytest.mark.parametrize("sizes, term", [
    ({"H": 2, "n": 3, "d": 5, "d_h": 10**8}, "weights"),
    ({"H": 10**6, "n": 3, "d": 5}, "features Z"),
    ({"H": 2, "n": 3, "d": 5, "T": 10**6}, "T x T minor"),
    ({"N": 5, "S": 4096, "d": 3, "H": 2, "T0": 65536}, "S x S attention"),
    ({"N": 30, "S": 4, "V": 12, "d": 10**8}, "embeddings"),
])
def test_each_paper_s_sizes_have_an_estimate(sizes, term):
    terms = budget.instance_terms(sizes)
    assert max(terms, key=terms.get).startswith(next(k for k in terms if term in k))
    assert sum(terms.values()) > 16 * GiB
    small = {k: (v if v < 100 else 3) for k, v in sizes.items()}
    assert sum(budget.instance_terms(small).values()) < GiB


def test_a_declared_bomb_is_refused_from_its_headers(tmp_path):
    path = tmp_path / "bomb.npz"
    declared_bomb(path)
    assert path.stat().st_size < 100_000
    with pytest.raises(InvalidInstance) as err:
        check_npz_members(path)
    n = 12 * GiB // 8 // 15  # contexts: 12 GiB of float64
    assert f"contexts {n}x3x5 float64" in str(err.value) and "above the memory budget of" in str(err.value)
    shapes = check_npz_members(path, budget_bytes=1 << 50)  # within a budget that large: the declared shapes
    assert shapes["contexts"][0] == (n, 3, 5) and shapes["contexts"][1] == np.float64


def test_every_member_must_be_an_npy(tmp_path):
    good = npy_header((2, 3)) + np.zeros((2, 3)).tobytes()
    cases = {"extra.npz": [("contexts.npy", good), ("notes.txt", b"hello")],
             "nosuffix.npz": [("contexts", good)],
             "garbage.npz": [("contexts.npy", b"\x93NUMPY\x01\x00garbage")],
             "notnpy.npz": [("contexts.npy", b"just bytes, no magic")],
             "object.npz": [("contexts.npy", npy_header((2,), "|O"))],
             "negative.npz": [("contexts.npy", npy_header((2, 3)).replace(b"(2, 3)", b"(-2,3)"))]}
    for name, members in cases.items():
        with zipfile.ZipFile(tmp_path / name, "w") as zf:
            for member, data in members:
                zf.writestr(member, data)
        with pytest.raises(InvalidInstance) as err:
            check_npz_members(tmp_path / name)
        assert "\n" not in str(err.value) and name in str(err.value), name
    np.savez(tmp_path / "ok.npz", contexts=np.zeros((2, 3, 5)), queries=np.zeros((2, 5)))
    assert check_npz_members(tmp_path / "ok.npz") == {"contexts": ((2, 3, 5), np.dtype("<f8")),
                                                      "queries": ((2, 5), np.dtype("<f8"))}


def test_json_integers_beyond_64_bits_and_long_files_are_bad_input(tmp_path):
    p = tmp_path / "big.json"
    p.write_text('{"N": 5, "conditionals": [[1, ' + "1" * 400 + "]]}")
    with pytest.raises(InvalidInstance, match="400 digits, beyond 64 bits"):
        load_json(p)
    p.write_text(json.dumps({"N": 2**64 - 1, "x": [-(2**63), 1.5]}))
    assert load_json(p)["N"] == 2**64 - 1
    with pytest.raises(InvalidInstance, match="budget"):
        load_json(p, budget_bytes=10)
    p.write_text("{not json")
    with pytest.raises(InvalidInstance, match="cannot read big.json as JSON"):
        load_json(p)


def test_the_readers_check_before_loading(tmp_path):
    """The instance readers call the check: a bomb is refused, not loaded."""
    from verifier.data.sequences import load_sequences
    from verifier.statements import registry
    from verifier.statements.runner import build_instance

    registry.load_all()
    declared_bomb(tmp_path / "bomb.npz")
    with pytest.raises(InvalidInstance, match="budget"):
        build_instance("assumption1", data=tmp_path / "bomb.npz")
    with zipfile.ZipFile(tmp_path / "seq.npz", "w") as zf:
        zf.writestr("N.npy", npy_header(()) + np.float64(5).tobytes())
        zf.writestr("sequences.npy", npy_header((10**9, 4096), "<i8"))
    with pytest.raises(InvalidInstance, match="budget"):
        load_sequences(tmp_path / "seq.npz")
    # a 400-digit JSON integer is an exact integer (the one reader), and one line when it makes no distribution
    (tmp_path / "seq.json").write_text('{"N": 2, "sequences": [[0, 1]], "conditionals": [[1, ' + "9" * 400 + "]]}")
    with pytest.raises(InvalidInstance, match="sums to"):
        load_sequences(tmp_path / "seq.json")
