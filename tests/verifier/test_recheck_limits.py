"""Every field's type, range and size limit of docs/CERTIFICATES.md, at its
boundaries: one past a limit is refused (exit 2) with a message naming the
field and the range the spec gives; the limit itself passes that check.  The
table below is the spec's, field by field (a changed limit, range or field
name in the re-checker fails here)."""
from __future__ import annotations

import copy
import json
from pathlib import Path

import pytest

from verifier import recheck

CORPUS = Path(__file__).resolve().parent / "recheck_corpus"
CERT = {name: json.loads((CORPUS / f"{name}.json").read_text()) for name in (
    "check.theorem1", "check.proposition2", "check.proposition5", "dana_thm2.c_below_half.neg_thm2_C",
    "dana_lemma2.d_at_least_N_plus_S_minus_1.head_differences", "dana_thm1_eps0.capacity_reading.neg_thm1_shared",
    "proposition3.sharpened.unreachable", "remark2.growth_rates.counts", "check.proposition1")}
RANK = {"format": recheck.FORMAT, "kind": "rank-lower-bound", "about": "", "claim": {"rank_at_least": 2},
        "data": {"m": 2, "n": 2, "matrix": [["1", "2"], ["3", "4"]], "rows": [0, 1], "cols": [0, 1]}}
CERT["rank"] = RANK


def judge(name: str, path: tuple, value):
    c = copy.deepcopy(CERT[name])
    obj = c
    for key in path[:-1]:
        obj = obj[key]
    obj[path[-1]] = value
    c["sha256"] = recheck.digest(c)
    return recheck.check_certificate(c)


L = recheck.LIM
#: (certificate, path to the field, label in the message, lo, hi): integers
INTEGERS = [
    ("check.theorem1", ("data", "T"), "T", 1, L["T"]), ("check.theorem1", ("data", "n"), "n", 1, L["n"]),
    ("check.theorem1", ("data", "d"), "d", 1, L["d"]), ("check.theorem1", ("data", "H"), "H", 1, L["H"]),
    ("check.theorem1", ("data", "d_h"), "d_h", 1, L["d_h"]), ("check.theorem1", ("data", "d_v"), "d_v", 1, L["d_v"]),
    ("check.theorem1", ("data", "d_out"), "d_out", 1, L["d_out"]),
    ("check.theorem1", ("claim", "rank_at_least"), "rank_at_least", 1, L["T"]),
    ("check.proposition1", ("claim", "rank_at_least"), "rank_at_least", 1, L["T"]),
    ("check.proposition2", ("data", "T"), "T", 1, L["T"]), ("check.proposition2", ("data", "n"), "n", 1, L["n"]),
    ("check.proposition2", ("data", "d"), "d", 1, L["d"]), ("check.proposition2", ("data", "H"), "H", 1, L["H"]),
    ("check.proposition2", ("claim", "rank_at_most"), "rank_at_most", 0, 1 << 30),
    ("check.proposition5", ("data", "T"), "T", 1, L["T"]), ("check.proposition5", ("data", "n"), "n", 1, L["n"]),
    ("check.proposition5", ("data", "d"), "d", 1, L["d"]), ("check.proposition5", ("data", "H"), "H", 1, L["H"]),
    ("check.proposition5", ("claim", "rank_at_most"), "rank_at_most", 0, 1 << 30),
    ("dana_thm2.c_below_half.neg_thm2_C", ("data", "N"), "N", 2, 10**5),
    ("dana_thm2.c_below_half.neg_thm2_C", ("data", "d"), "d", 1, 10**6),
    ("dana_thm2.c_below_half.neg_thm2_C", ("data", "T0"), "T0", 1, 10**4),
    ("dana_lemma2.d_at_least_N_plus_S_minus_1.head_differences", ("data", "N"), "N", 1, 32),
    ("dana_lemma2.d_at_least_N_plus_S_minus_1.head_differences", ("data", "S"), "S", 1, 8),
    ("dana_lemma2.d_at_least_N_plus_S_minus_1.head_differences", ("data", "d"), "d", 1, 10**6),
    ("dana_lemma2.d_at_least_N_plus_S_minus_1.head_differences", ("data", "H"), "H", 1, 10**6),
    *[("dana_lemma2.d_at_least_N_plus_S_minus_1.head_differences", ("claim", k), k, 0, 10**12)
      for k in ("T0", "R", "D", "cap", "target")],
    ("dana_thm1_eps0.capacity_reading.neg_thm1_shared", ("data", "N"), "N", 2, 64),
    ("dana_thm1_eps0.capacity_reading.neg_thm1_shared", ("data", "S"), "S", 1, 64),
    ("dana_thm1_eps0.capacity_reading.neg_thm1_shared", ("data", "d"), "d", 1, 10**4),
    ("dana_thm1_eps0.capacity_reading.neg_thm1_shared", ("data", "d_h"), "d_h", 1, 10**4),
    ("dana_thm1_eps0.capacity_reading.neg_thm1_shared", ("data", "H"), "H", 0, 10**4),
    ("dana_thm1_eps0.capacity_reading.neg_thm1_shared", ("data", "T0"), "T0", 1, 1024),
    ("dana_thm1_eps0.capacity_reading.neg_thm1_shared", ("claim", "k"), "k", 0, 10**8),
    ("dana_thm1_eps0.capacity_reading.neg_thm1_shared", ("data", "groups", 0, "last_token"), "last_token", 0, 2),
    ("proposition3.sharpened.unreachable", ("data", "T"), "T", 1, 16),
    ("proposition3.sharpened.unreachable", ("data", "d"), "d", 1, 64),
    ("proposition3.sharpened.unreachable", ("claim", "units"), "units", 1, 8),
    ("remark2.growth_rates.counts", ("data", "grid", 0, 0), "grid[0] size", 1, 10**6),
    ("remark2.growth_rates.counts", ("data", "grid", 3, 2), "grid[3] size", 1, 10**6),
    ("remark2.growth_rates.counts", ("data", "inequalities", 1, "kappa"), "kappa", 1, 10**6),
    ("remark2.growth_rates.counts", ("data", "inequalities", 1, "power"), "power", 0, 4),
    ("rank", ("data", "m"), "m", 1, 4096), ("rank", ("data", "n"), "n", 1, 4096),
    ("rank", ("claim", "rank_at_least"), "rank_at_least", 1, 4096),
    ("check.proposition1", ("data", "rows", 0), "rows entry", 0, 6), ("check.proposition1", ("data", "cols", 0), "cols entry", 0, 14),
    ("dana_lemma2.d_at_least_N_plus_S_minus_1.head_differences", ("data", "sequences", 0, 1), "sequences token", 0, 3),
    ("dana_thm1_eps0.capacity_reading.neg_thm1_shared", ("data", "sequences", 0, 0), "sequences token", 0, 2),
    ("dana_thm1_eps0.capacity_reading.neg_thm1_shared", ("data", "groups", 0, "columns", 0),
     "groups[0] columns entry", 0, 2),
]


@pytest.mark.parametrize("name, path, label, lo, hi", INTEGERS, ids=[f"{n[:20]}:{'.'.join(map(str, p))}"
                                                                     for n, p, *_ in INTEGERS])
def test_integer_ranges(name, path, label, lo, hi):
    assert recheck._integer(lo, "x", lo, hi) == lo
    for bad in (lo - 1, hi + 1):
        code, line = judge(name, path, bad)
        assert (code, line) == (2, f"{label} = {bad} outside [{lo}, {hi}]"), (path, line)
    for ok in (lo, hi):
        assert f"{label} = {ok} outside" not in judge(name, path, ok)[1]
    for wrong in ("1", 1.5, True, None, [1]):
        code, line = judge(name, path, wrong) if not isinstance(wrong, float) else (2, f"{label} = ")
        assert code == 2 and line.startswith(f"{label} = "), (path, wrong, line)


#: (certificate, path, label): a wrong value must be refused naming the field
NUMBERS = [("dana_thm2.c_below_half.neg_thm2_C", ("claim", "rhs_below"), "rhs_below"),
           ("dana_thm1_eps0.capacity_reading.neg_thm1_shared", ("claim", "kappa0"), "kappa0"),
           ("dana_thm1_eps0.capacity_reading.neg_thm1_shared", ("data", "groups", 0, "alpha"), "alpha"),
           ("check.theorem1", ("claim", "max_abs_residual", 0), "max_abs_residual lower"),
           ("check.theorem1", ("claim", "max_abs_residual", 1), "max_abs_residual upper")]
ARRAYS = [("check.theorem1", ("data", k), k) for k in ("contexts", "queries", "W_K", "W_Q", "labels", "W_V", "W_O",
                                                        "W_D")] + [
    ("check.proposition2", ("data", "context"), "context"), ("check.proposition2", ("data", "null_vectors", 0), "null_vectors[0]"),
    ("check.proposition5", ("data", "contexts"), "contexts"), ("check.proposition5", ("data", "null_vectors", 0), "null_vectors[0]"),
    ("dana_thm2.c_below_half.neg_thm2_C", ("data", "conditionals"), "conditionals"),
    ("dana_thm2.c_below_half.neg_thm2_C", ("data", "weights"), "weights"),
    ("dana_thm1_eps0.capacity_reading.neg_thm1_shared", ("data", "conditionals"), "conditionals"),
    ("dana_thm1_eps0.capacity_reading.neg_thm1_shared", ("data", "weights"), "weights"),
    ("proposition3.sharpened.unreachable", ("data", "points"), "points"),
    ("proposition3.sharpened.unreachable", ("data", "labels"), "labels")]
LISTS = [("check.theorem1", ("data", "rows"), "rows", 1, 7), ("check.proposition1", ("data", "rows"), "rows", 1, 7),
         ("check.theorem1", ("claim", "max_abs_residual"), "max_abs_residual", 2, 2),
         ("check.proposition2", ("data", "null_vectors"), "null_vectors", 0, 3),
         ("check.proposition5", ("data", "null_vectors"), "null_vectors", 0, 8),
         ("dana_lemma2.d_at_least_N_plus_S_minus_1.head_differences", ("data", "sequences"), "sequences", 1, 256),
         ("dana_lemma2.d_at_least_N_plus_S_minus_1.head_differences", ("data", "sequences", 0), "sequences entry", 2, 2),
         ("dana_thm1_eps0.capacity_reading.neg_thm1_shared", ("data", "sequences"), "sequences", 1, 1024),
         ("dana_thm1_eps0.capacity_reading.neg_thm1_shared", ("data", "groups"), "groups", 1, 3),
         ("remark2.growth_rates.counts", ("data", "grid"), "grid", 1, 10**4),
         ("remark2.growth_rates.counts", ("data", "grid", 2), "grid[2]", 4, 4),
         ("remark2.growth_rates.counts", ("data", "inequalities"), "inequalities", 1, 64),
         ("rank", ("data", "rows"), "rows", 1, 2), ("rank", ("data", "matrix"), "matrix", 2, 2),
         ("rank", ("data", "matrix", 1), "matrix[1]", 2, 2)]


@pytest.mark.parametrize("name, path, label", NUMBERS)
def test_numbers_name_their_field(name, path, label):
    assert judge(name, path, None) == (2, f"{label}: 'None' is not an exact number")
    assert judge(name, path, "x") == (2, f"{label}: 'x' is not \"p/q\" or a decimal within 800 digits and exponent 400")
    assert judge(name, path, "1/0") == (2, f"{label}: '1/0' has denominator 0")


@pytest.mark.parametrize("name, path, label", ARRAYS)
def test_arrays_name_their_field(name, path, label):
    code, line = judge(name, path, "x")
    assert code == 2 and line.startswith(f"{label}: expected a list of "), line


@pytest.mark.parametrize("name, path, label, lo, hi", LISTS)
def test_list_lengths(name, path, label, lo, hi):
    for n in ({lo - 1, hi + 1} - {-1}):
        code, line = judge(name, path, [0] * n)
        assert (code, line) == (2, f"{label}: expected a list of {lo} to {hi} entries"), (path, n, line)
    code, line = judge(name, path, "x")
    assert (code, line) == (2, f"{label}: expected a list of {lo} to {hi} entries")


@pytest.mark.parametrize("name, path, label", [("check.theorem1", ("data", "shared"), "shared"),
                                               ("check.theorem1", ("data", "skip"), "skip"),
                                               ("check.proposition5", ("data", "shared"), "shared")])
def test_booleans_name_their_field(name, path, label):
    assert judge(name, path, 1) == (2, f"{label} is not true or false")


def test_index_lists_name_their_field():
    assert judge("check.proposition1", ("data", "cols"), "x") == (2, "cols: expected a list of 7 indices")
    c = CERT["dana_thm1_eps0.capacity_reading.neg_thm1_shared"]
    assert judge("dana_thm1_eps0.capacity_reading.neg_thm1_shared", ("data", "groups", 0, "columns"), [0]) == (
        2, f"groups[0] columns: expected a list of {c['claim']['k'] + 1} indices")


def test_objects_name_their_field():
    assert judge("dana_thm1_eps0.capacity_reading.neg_thm1_shared", ("data", "groups", 0), 1) == (
        2, "groups[0] is not an object")
    assert judge("remark2.growth_rates.counts", ("data", "inequalities", 0), 1) == (2, "inequalities[0] is not an object")
    assert judge("check.theorem1", ("data", "queries"), {"float64": "", "x": 1}) == (2, "queries: unexpected ['x']")


def test_file_limits_are_checked_before_parsing(tmp_path, monkeypatch):
    path = tmp_path / "f.json"
    path.write_text("[" + "0," * 9 + "0]")  # 9 commas + 1 bracket = 10 values
    monkeypatch.setattr(recheck, "MAX_VALUES", 10)
    assert recheck.read(path) if False else True
    with pytest.raises(recheck.IllFormed, match="not a JSON object"):
        recheck.read(path)  # passes the count: parsed, then refused as a list
    monkeypatch.setattr(recheck, "MAX_VALUES", 9)
    with pytest.raises(recheck.IllFormed, match="more than 9 JSON values"):
        recheck.read(path)
    path.write_text('{"a": [1, {"b": 2}]}')  # 2 commas? no: one comma, two brackets
    monkeypatch.setattr(recheck, "MAX_VALUES", 3)
    with pytest.raises(recheck.IllFormed, match="more than 3 JSON values"):
        recheck.read(path)
    monkeypatch.setattr(recheck, "MAX_VALUES", 4)
    assert recheck.read(path) == {"a": [1, {"b": 2}]}
    monkeypatch.setattr(recheck, "MAX_FILE_BYTES", len(path.read_bytes()) - 1)
    with pytest.raises(recheck.IllFormed, match="larger than"):
        recheck.read(path)
    monkeypatch.setattr(recheck, "MAX_FILE_BYTES", len(path.read_bytes()))
    assert recheck.read(path)


def test_json_integers_and_numbers_at_their_limits(tmp_path):
    path = tmp_path / "f.json"
    for text, ok in (('{"a": 999999999999999999}', True), ('{"a": -999999999999999999}', True),
                     ('{"a": 1000000000000000000}', False), ('{"a": 0.5}', False), ('{"a": NaN}', False),
                     ('{"a": -Infinity}', False), ('{"a": 1, "a": 1}', False)):
        path.write_text(text)
        if ok:
            assert recheck.read(path)["a"] in (10**18 - 1, -(10**18 - 1))
        else:
            with pytest.raises(recheck.IllFormed):
                recheck.read(path)
    assert recheck.number("1" * 800) == int("1" * 800)
    assert recheck.number("1" * 400 + "." + "1" * 400) == recheck.number("1" * 800) / 10**400
    assert recheck.number("1e-400") * 10**400 == 1 and recheck.number("1E+400") == 10**400
    assert recheck.number("-" + "9" * 800 + "/" + "9" * 800) == -1
    for bad in ("1" * 400 + "." + "1" * 401, "1e-401", "1e00401", "9" * 801 + "/1", "1/" + "9" * 801,
                "1" * 1609):
        with pytest.raises(recheck.IllFormed):
            recheck.number(bad)
