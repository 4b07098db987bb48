"""The re-checker's data readers (verifier/recheck.py: ``number``, ``array``, ``Exact``, ``mha_data``, the statement's
weights text, ``_numpy``), attacked where its mutation run left survivors: every array of the MHA kinds read with
its interval entries (spec 4.2) and each interval's both ends used; the optional query bias read and named; bad
entries, intervals and base64 texts refused with exit 2 and a line that names the field; the limits of spec 3
(a number's text, an array's entries) and of the float path (2^400) exactly at and just beyond their bounds.

The small MHA certificates here are written by hand: one example, two tokens of dimension 1, one head, so that
their values are known exactly (with the bias b_Q = -1 every logit is 0, the softmax is (1/2, 1/2) and
z = 1/2 exactly: the residual against the label 1/2 is 0).
"""
from __future__ import annotations

import copy
from fractions import Fraction

import pytest
from test_recheck import GENUINE, redigest

from verifier import recheck

NOT_A_NUMBER = "is not \"p/q\" or a decimal within 800 digits and exponent 400"


def cert(kind: str, claim: dict, data: dict) -> dict:
    return redigest({"format": recheck.FORMAT, "kind": kind, "about": "", "claim": claim, "data": data})


#: T = 1 example, n = 2 tokens (0 and 1) of dimension d = 1, H = 1 head with d_h = 1
LAYER = dict(T=1, n=2, d=1, H=1, d_h=1, shared=False, contexts=[[["0"], ["1"]]], queries=[["1"]],
             W_K=[[["1"]]], W_Q=[[["1"]]])
#: with the readout W_V = W_O = W_D = 1, yhat = z; b_Q = -1 makes the logit p = 1 - 1 = 0, so z = 1/2 = y exactly
READOUT = dict(LAYER, d_v=1, d_out=1, b_Q=[["-1"]], labels=[["1/2"]], W_V=[[["1"]]], W_O=[["1"]], W_D=[["1"]],
               skip=False)


def residual(tol: str = "0", relation: str = "<=", drop: tuple = (), **data) -> dict:
    d = {k: v for k, v in dict(READOUT, **data).items() if k not in drop}
    return cert("mha-readout-residual", {"relation": relation, "tol": tol}, d)


def judge(c: dict) -> tuple:
    return recheck.check_certificate(copy.deepcopy(c))


def statement(tol: str, weights: str) -> str:
    return (f"mha-readout-residual: max_t,j |yhat^(t)_j - y^(t)_j| <= {tol} for the given {weights} at every point "
            f"of the intervals of the data and weights (T = 1, Eqs. 1-8): Z (intervals, 128 bits)")


# -- the query bias b_Q (spec 4.2: optional) --------------------------------------------------------------------
def test_the_query_bias_is_read_and_named():
    """z = 1/2 exactly with b_Q = -1 (residual 0: proved <= 0); without b_Q the logit is 1, z = e/(e + 1) and the
    residual e/(e + 1) - 1/2 = 0.2311 > 0: refused; the statement names b_Q only when the file has it."""
    assert judge(residual()) == (0, statement("0", "W_K, W_Q, b_Q, W_V, W_O, W_D"))
    assert judge(residual(drop=("b_Q",))) == (1, "max |yhat - y| is enclosed in [0.231059, 0.231059]: <= 0 not shown")
    assert judge(residual("1", drop=("b_Q",))) == (0, statement("1", "W_K, W_Q, W_V, W_O, W_D"))


def test_the_feature_rank_statement_names_the_query_bias():
    data = dict(LAYER, contexts=[[["1"], ["2"]]], rows=[0], cols=[0])  # z is in [1, 2]: a nonsingular 1 x 1 minor
    with_bias = judge(cert("mha-feature-rank", {"rank_at_least": 1}, dict(data, b_Q=[["1/2"]])))
    assert with_bias[0] == 0 and "key/query weights (query bias b_Q), at every point" in with_bias[1]
    without = judge(cert("mha-feature-rank", {"rank_at_least": 1}, data))
    assert without[0] == 0 and "key/query weights, at every point" in without[1]


@pytest.mark.parametrize("b_Q, line", [
    ({"x": 1}, "b_Q: missing ['float64']; unexpected ['x']"),
    ("1", "b_Q: expected a list of 1 (shape [1, 1])"),
    (["1"], "b_Q[0]: expected a list of 1 (shape [1, 1])"),
    ([["1", "2"]], "b_Q[0]: expected a list of 1 (shape [1, 1])"),
    ([["x"]], f"b_Q[0][0]: 'x' {NOT_A_NUMBER}"),  # a point entry
    ([[["x", "1"]]], f"b_Q[0][0]: 'x' {NOT_A_NUMBER}"),  # an interval's lower end
    ([[["1", "x"]]], f"b_Q[0][0]: 'x' {NOT_A_NUMBER}"),  # its upper end
    ([[["1", "0"]]], "b_Q[0][0]: an interval is [lo, hi] with lo <= hi"),  # empty
    ([[["0", "1", "2"]]], "b_Q[0][0]: an interval is [lo, hi] with lo <= hi"),
    ([[["0"]]], "b_Q[0][0]: an interval is [lo, hi] with lo <= hi"),
    ([[[]]], "b_Q[0][0]: an interval is [lo, hi] with lo <= hi"),
])
def test_a_bad_query_bias_is_ill_formed_and_named(b_Q, line):
    assert judge(residual(b_Q=b_Q)) == (2, line)


# -- interval entries (spec 4.2): in every array, both ends used ------------------------------------------------------
#: every array of the layer and its readout with interval entries (two of them points [a, a]); the residual
#: |z + e W_D - y| <= 1 + 21/20 < 2 on the whole box (z in [-1/10, 11/10], the skip connection adds e W_D <= 21/20)
BOXES = dict(contexts=[[[["-1/10", "0"]], [["1", "11/10"]]]], queries=[[["1", "1"]]], W_K=[[[["9/10", "1"]]]],
             W_Q=[[[["1", "11/10"]]]], b_Q=[[["-1", "-9/10"]]], labels=[[["1/2", "3/5"]]], W_V=[[[["1", "1"]]]],
             W_O=[[["9/10", "1"]]], W_D=[[["1", "21/20"]]], skip=True)


def test_every_mha_array_may_hold_intervals():
    assert judge(residual("2", **BOXES)) == (0, statement("2", "W_K, W_Q, b_Q, W_V, W_O, W_D (skip connection)"))


@pytest.mark.parametrize("name", sorted(recheck.BOXED))
def test_each_boxed_array_reads_its_intervals(name):
    """One interval entry [a, a] (a point written as an interval) in one array at a time: the same proof."""
    key = {"E": "contexts", "e": "queries", "y": "labels"}.get(name, name)
    data = copy.deepcopy(READOUT)
    entry = data[key]
    while isinstance(entry[0], list):
        entry = entry[0]
    entry[0] = [entry[0], entry[0]]
    assert judge(residual(**{key: data[key]})) == (0, statement("0", "W_K, W_Q, b_Q, W_V, W_O, W_D"))


def test_an_interval_s_upper_end_counts():
    """W_D = 0: yhat = 0 exactly, and the residual is |y| for y in [0, 1], up to 1 at y = 1: "<= 1/2" is false there,
    so it is refused (a reader that dropped the upper end would see only y = 0 and accept)."""
    assert judge(residual("1/2", W_D=[["0"]], labels=[[["0", "1"]]])) == \
        (1, "max |yhat - y| is enclosed in [0, 1]: <= 0.5 not shown")


def test_an_interval_s_lower_end_counts():
    """As above with y in [-1, 0]: the residual reaches 1 at y = -1: refused (a reader that took the
    upper end for both would see only y = 0 and accept); "<= 1" holds on the whole box."""
    assert judge(residual("1/2", W_D=[["0"]], labels=[[["-1", "0"]]])) == \
        (1, "max |yhat - y| is enclosed in [0, 1]: <= 0.5 not shown")
    assert judge(residual("1", W_D=[["0"]], labels=[[["-1", "0"]]]))[0] == 0


def test_arrays_of_the_other_kinds_hold_no_intervals():
    """Spec 4.2 allows intervals in the MHA arrays only: the shared-context cap's context is points (exit 2)."""
    c = copy.deepcopy(GENUINE["check.proposition2"])
    c["data"]["context"][0][0] = ["0", "1"]
    assert judge(redigest(c)) == (2, "context[0][0]: \"['0', '1']\" is not an exact number")


def test_entries_name_their_place():
    c = copy.deepcopy(GENUINE["check.proposition1"])
    c["data"]["contexts"][0][2][4] = "1/0"
    assert judge(redigest(c)) == (2, "contexts[0][2][4]: '1/0' has denominator 0")
    c["data"]["contexts"][0][2][4] = "0x10"
    assert judge(redigest(c)) == (2, f"contexts[0][2][4]: '0x10' {NOT_A_NUMBER}")


# -- array sizes and base64 arrays (spec 3) --------------------------------------------------------------------------
def test_an_array_of_exactly_2_to_the_27_entries_is_allowed():
    """(T, n, d) = (2^17, 2^10, 1): 2^27 entries, the limit (its base64 text is then checked); d = 2: beyond it."""
    big = dict(LAYER, T=1 << 17, n=1 << 10, contexts={"float64": ""}, rows=[0], cols=[0])
    assert judge(cert("mha-feature-rank", {"rank_at_least": 1}, big)) == \
        (2, "contexts: base64 text is not 1073741824 bytes for shape [131072, 1024, 1]")
    assert judge(cert("mha-feature-rank", {"rank_at_least": 1}, dict(big, d=2))) == \
        (2, "contexts: 268435456 entries (at most 134217728)")


def test_base64_with_characters_outside_its_alphabet_is_ill_formed():
    """24 characters for the 16 bytes of (T, d) = (2, 1): 20 valid ones and 4 others is not base64 (a lenient
    decoder would drop the others and read 15 bytes)."""
    for text in ("A" * 20 + "****", "A" * 20 + "\n\n==", "AAAA AAAAAAAAAAAAAAAAAA="):
        assert judge(residual(T=2, contexts=[[["0"], ["1"]]] * 2, labels=[["1/2"]] * 2,
                              queries={"float64": text})) == (2, "queries: not base64")


def test_base64_text_of_the_right_length_but_another_byte_count_is_ill_formed():
    """8 bytes (one entry) take 12 characters with one '=' of padding; 12 characters with two (7 bytes) or with none
    (9 bytes) have the same length: refused with exit 2, not a traceback (spec 3: exactly 8 s_1...s_r bytes)."""
    for text in ("AAAAAAAAAA==", "AAAAAAAAAAAA"):
        assert judge(residual(queries={"float64": text})) == (2, "queries: base64 text is not 8 bytes for shape [1, 1]")
    ok = judge(residual(queries={"float64": "AAAAAAAA8D8="}))  # e = 1.0 in binary64, little-endian: as READOUT
    assert ok[0] == 0, ok


# -- number texts (spec 3) -------------------------------------------------------------------------------------------
def test_a_number_s_text_is_limited_to_1608_characters():
    """1608 characters pass the length check (and fail the pattern: no number needs as many), 1609 do not."""
    with pytest.raises(recheck.IllFormed) as at_limit:
        recheck.number("1" * 1608, "tol")
    assert str(at_limit.value) == f"tol: '{'1' * 40}' {NOT_A_NUMBER}"
    for n in (1609, 2408, 2409):
        with pytest.raises(recheck.IllFormed) as beyond:
            recheck.number("1" * n, "tol")
        assert str(beyond.value) == f"tol: '{'1' * 40}' is not an exact number"


def test_a_number_without_a_name_is_called_a_number():
    with pytest.raises(recheck.IllFormed, match=r"^a number: 'abc' is not "):
        recheck.number("abc")
    rank = cert("rank-lower-bound", {"rank_at_least": 1}, {"m": 1, "n": 1, "matrix": [["abc"]], "rows": [0], "cols": [0]})
    assert judge(rank) == (2, f"a number: 'abc' {NOT_A_NUMBER}")


# -- the float path's reader -----------------------------------------------------------------------------------------
def test_entries_of_magnitude_2_to_the_400_take_the_float_path():
    """Spec 6: every operand |x| <= 2^400, inclusive; 2^401 is refused (exit 1: not provable there)."""
    a = recheck.Exact((2,), values=[Fraction(2**400), Fraction(-(2**400))]).floats()
    assert a.tolist() == [2.0**400, -(2.0**400)]
    with pytest.raises(recheck.Rejected, match="beyond 2"):
        recheck.Exact((1,), values=[Fraction(2**401)]).floats()


def test_numpy_is_loaded_and_probed_once(monkeypatch):
    import numpy

    monkeypatch.setattr(recheck, "_NP", None)
    assert recheck._numpy() is numpy
    assert recheck._NP is numpy
    assert recheck._numpy() is numpy


def test_base64_text_of_the_wrong_length_or_not_text_is_refused_by_its_length():
    """The length of the text is checked first: an 11-character text (not even base64) and a number both
    get the byte-count line, not 'not base64' or a type error."""
    for text in ("AAAAAAAAAAA", 5, ["AAAAAAAAAAAA"]):
        assert judge(residual(queries={"float64": text})) == (2, "queries: base64 text is not 8 bytes for shape [1, 1]")
