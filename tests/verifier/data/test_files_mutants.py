"""The one reader (verifier/data/files.py) on the edges that mutation testing
found untested: the exact limits (nesting 32, 1000 characters, exponent 1000,
the int64 range, the JSON byte cap), ragged shapes numpy accepts as object
arrays, the second line of defence behind the .npz header screen, and the
parts of each one-line refusal that a user relies on (the array's name, the
limit, the names expected)."""
import io
import json
import zipfile
from fractions import Fraction

import numpy as np
import pytest

from verifier.data import files
from verifier.data.files import MAX_EXPONENT, MAX_NUMBER_CHARS, read_data_file
from verifier.errors import InvalidInstance


def _json(tmp_path, obj_or_text, name="d.json"):
    p = tmp_path / name
    p.write_text(obj_or_text if isinstance(obj_or_text, str) else json.dumps(obj_or_text))
    return p


def _refusal(path, required=(), optional=("x", "y")) -> str:
    with pytest.raises(InvalidInstance) as e:
        read_data_file(path, required=required, optional=optional)
    msg = str(e.value)
    assert msg.startswith(f"{path.name}: ") and "\n" not in msg, msg  # one line, naming the file
    return msg


def _cli(path, capsys) -> str:
    """``check assumption1 --data path``: exit 2, bad-input, one stderr line, no traceback."""
    from verifier.cli import main

    if isinstance(path, str):  # a JSON text for the contexts
        tmp, contexts = path.split("|", 1)
        path = _json(files.Path(tmp), '{"contexts": %s, "queries": [[1, 2]]}' % contexts, "cli.json")

    code = main(["check", "assumption1", "--data", str(path), "--json"])
    out, err = capsys.readouterr()
    assert code == 2 and "Traceback" not in out + err, (code, err)
    obj = json.loads(out)
    assert obj["verdict"] == "bad-input" and obj["exit_code"] == 2
    lines = err.strip().splitlines()
    assert len(lines) == 1 and lines[0].startswith("mha-verify: "), err
    return obj.get("message") or obj.get("reason") or ""


# ---- names -------------------------------------------------------------------------------------------------

def test_an_unknown_name_lists_every_expected_name(tmp_path):
    msg = _refusal(_json(tmp_path, {"N": 1, "lables": [1]}), required=("N",), optional=("labels", "prior"))
    assert "array 'lables' is not one this statement reads" in msg
    assert "(expected: N, labels, prior)" in msg


def test_a_missing_name_lists_what_the_file_has_and_what_is_expected(tmp_path):
    msg = _refusal(_json(tmp_path, {"b": [1], "a": [2]}), required=("N", "a", "b"), optional=())
    assert "missing array 'N'" in msg and "has: a, b;" in msg and "expected: N, a, b" in msg
    msg = _refusal(_json(tmp_path, {}, "e.json"), required=("N",), optional=("prior",))
    assert "missing array 'N' (has: none; expected: N, prior)" in msg


def test_arrays_carry_their_names_origin_and_exact_input(tmp_path):
    p = tmp_path / "d.npz"
    np.savez(p, x=np.array([0.5, 1.0]))
    f = read_data_file(p, required=("x",))
    assert f["x"].name == "x" and f["x"].origin == "npz" and f.exact_input is False
    assert f["x"].reading.startswith("x: float64; ") and "JSON" not in f["x"].reading
    assert f.get("x") is f["x"]
    sentinel = object()
    assert f.get("y", sentinel) is sentinel and f.get("y") is None
    g = read_data_file(_json(tmp_path, {"x": [1]}), required=("x",), exact_input=True)
    assert g["x"].name == "x" and g["x"].origin == "json" and g.exact_input is True
    assert g["x"].reading.startswith("x: JSON numbers")


# ---- JSON: limits ------------------------------------------------------------------------------------------

def _nested(levels: int) -> str:
    return "[" * levels + "1" + "]" * levels


def test_json_nesting_32_levels_below_the_top_is_read_33_refused(tmp_path, capsys):
    f = read_data_file(_json(tmp_path, '{"x": %s}' % _nested(33)), required=("x",))
    assert f["x"].values.shape == (1,) * 33 and f["x"].values.reshape(-1).tolist() == [1]
    p = _json(tmp_path, '{"x": %s}' % _nested(34), "deep.json")
    msg = _refusal(p, required=("x",))
    assert "array 'x' is nested deeper than 32 levels" in msg
    assert "nested deeper than 32" in _cli(f"{tmp_path}|{_nested(34)}", capsys)


def test_json_nested_beyond_the_parser_is_one_line(tmp_path):
    msg = _refusal(_json(tmp_path, '{"x": ' + "[" * 100000 + "]" * 100000 + "}"))
    assert msg.endswith(": JSON nested too deeply")


def test_json_number_of_exactly_max_chars_is_read_one_more_refused(tmp_path, capsys):
    assert MAX_NUMBER_CHARS == 1000
    digits = "7" * MAX_NUMBER_CHARS
    f = read_data_file(_json(tmp_path, '{"x": [%s]}' % digits), required=("x",))
    assert f["x"].values.tolist() == [int(digits)]
    dec = "0." + "3" * (MAX_NUMBER_CHARS - 2)
    f = read_data_file(_json(tmp_path, '{"x": [%s]}' % dec, "f.json"), required=("x",))
    assert f["x"].values.tolist() == [Fraction(dec)]
    p = _json(tmp_path, '{"x": [%s]}' % (digits + "7"), "long.json")
    assert f"a JSON integer of 1001 digits (at most {MAX_NUMBER_CHARS})" in _refusal(p)
    assert "1001 digits" in _cli(f"{tmp_path}|[[[{digits}7]]]", capsys)
    p = _json(tmp_path, '{"x": [%s]}' % (dec + "3"), "longf.json")
    assert f"a JSON number of 1001 characters (at most {MAX_NUMBER_CHARS})" in _refusal(p)


def test_json_exponent_of_exactly_max_is_read_one_more_refused(tmp_path, capsys):
    assert MAX_EXPONENT == 1000
    f = read_data_file(_json(tmp_path, '{"x": [1e1000, 2.5E-1000]}'), required=("x",))
    assert f["x"].values.tolist() == [Fraction(10**1000), Fraction(5, 2 * 10**1000)]
    for text, shown in (("1e1001", "1001"), ("1e+1001", "+1001"), ("1.5e-1001", "-1001")):
        p = _json(tmp_path, '{"x": [%s]}' % text, "big.json")
        assert f"a JSON number with exponent {shown} (at most {MAX_EXPONENT} in magnitude)" in _refusal(p)
    assert "exponent 1001" in _cli(f"{tmp_path}|[[[1e1001]]]", capsys)


def test_json_byte_cap_is_inclusive(tmp_path, monkeypatch):
    p = _json(tmp_path, '{"x": [1, 2]}')
    monkeypatch.setattr(files, "MAX_JSON_BYTES", p.stat().st_size)
    assert read_data_file(p, required=("x",))["x"].values.tolist() == [1, 2]
    monkeypatch.setattr(files, "MAX_JSON_BYTES", p.stat().st_size - 1)
    msg = _refusal(p)
    assert f"a JSON file of {p.stat().st_size} bytes (at most {p.stat().st_size - 1})" in msg and ".npz" in msg


# ---- JSON: the int64 range and dtypes ----------------------------------------------------------------------

@pytest.mark.parametrize("value", [-2**63, -2**63 + 1, -200, 200, 2**63 - 1])
def test_json_integers_within_int64_are_int64(tmp_path, value):
    a = read_data_file(_json(tmp_path, '{"x": [%d, 0]}' % value), required=("x",))["x"].values
    assert a.dtype == np.int64 and a.tolist() == [value, 0]


@pytest.mark.parametrize("value", [-2**63 - 1, -2**64, 2**63, 2**64 - 1])
def test_json_integers_beyond_int64_stay_exact_python_ints(tmp_path, value):
    a = read_data_file(_json(tmp_path, '{"x": [[%d, 1]]}' % value), required=("x",))["x"].values
    assert a.dtype == object and a.shape == (1, 2) and a.tolist() == [[value, 1]]
    assert type(a[0, 0]) is int


def test_json_empty_list_is_an_empty_int64_array(tmp_path):
    f = read_data_file(_json(tmp_path, '{"x": [], "y": [[], []]}'), required=("x", "y"))
    assert f["x"].values.dtype == np.int64 and f["x"].values.shape == (0,)
    assert f["y"].values.dtype == np.int64 and f["y"].values.shape == (2, 0)


# ---- JSON: bad values, ragged shapes, not an object ---------------------------------------------------------

@pytest.mark.parametrize("text", ['[[1, 2], [3]]', '[[1], 2]', '[[[1]], [2]]', '[1, [2]]', '[[0.5], [1, 2]]'])
def test_json_ragged_arrays_are_refused_naming_the_array(tmp_path, capsys, text):
    p = _json(tmp_path, '{"x": [1], "y": %s}' % text)
    assert "array 'y' is ragged (rows of different lengths)" in _refusal(p)
    assert "'contexts' is ragged" in _cli(f"{tmp_path}|{text}", capsys)


def test_json_null_is_named(tmp_path):
    assert "array 'x' holds null where a number is expected" in _refusal(_json(tmp_path, '{"x": [1, null]}'))


def test_json_that_is_not_an_object_or_not_json(tmp_path):
    assert _refusal(_json(tmp_path, "[1, 2]")).endswith(": expected a JSON object of named arrays")
    msg = _refusal(_json(tmp_path, '{"x": [1,', "bad.json"))
    assert "not valid JSON: Expecting value" in msg


# ---- .npz ---------------------------------------------------------------------------------------------------

def test_npz_that_is_a_single_npy_or_not_a_zip(tmp_path):
    p = tmp_path / "a.npz"
    with p.open("wb") as fh:
        np.save(fh, np.arange(3))
    assert _refusal(p).endswith(": a single .npy array; save an .npz with named arrays "
                                 "(np.savez(path, name=array, ...))")
    q = tmp_path / "g.npz"
    q.write_bytes(b"PK not really a zip archive at all")
    assert _refusal(q).endswith(": not an .npz archive (not a zip file) and not .json")


@pytest.mark.parametrize("array, needle", [
    (np.array([1 + 2j]), "array 'c' is complex (complex128)"),
    (np.array(["a"]), "array 'c' holds strings"),
    (np.array([b"a"]), "array 'c' holds strings (bytes8)"),
    (np.array(["2020-01-01"], dtype="datetime64[D]"), "array 'c' has dtype datetime64[D], not a number type"),
    (np.zeros(2, dtype=[("a", "f8")]), "array 'c' has dtype void64, not a number type"),
])
def test_npz_non_numeric_arrays_named_with_their_dtype(tmp_path, array, needle):
    p = tmp_path / "d.npz"
    np.savez(p, c=array)
    assert needle in _refusal(p, optional=("c",))


def test_numeric_guard_refuses_an_object_array():
    with pytest.raises(InvalidInstance, match=r"^d\.npz: array 'w' is an object array; expected integers"):
        files._numeric(files.Path("d.npz"), "w", np.array([1, None], dtype=object))


_UNPICKLED = []


def _record():
    _UNPICKLED.append(1)
    return 0


class _Loud:
    def __reduce__(self):
        return (_record, ())


def test_npz_object_array_never_unpickled_even_past_the_header_screen(tmp_path, monkeypatch):
    """Second line of defence: with the header screen out of the way,
    np.load still runs with allow_pickle=False and the refusal names the array."""
    p = tmp_path / "o.npz"
    np.savez(p, x=np.array([1.0]), w=np.array([_Loud()], dtype=object))
    monkeypatch.setattr(files, "check_npz_members", lambda path: {})
    _UNPICKLED.clear()
    msg = _refusal(p, optional=("x", "w"))
    assert _UNPICKLED == []
    assert "array 'w' is an object array; expected integers or floats" in msg


def test_npz_non_npy_member_past_the_header_screen(tmp_path, monkeypatch):
    p = tmp_path / "m.npz"
    with zipfile.ZipFile(p, "w") as z:
        buf = io.BytesIO()
        np.save(buf, np.arange(2))
        z.writestr("x.npy", buf.getvalue())
        z.writestr("readme.txt", b"hello")
    monkeypatch.setattr(files, "check_npz_members", lambda path: {})
    assert "member 'readme.txt' is not an .npy array" in _refusal(p)


def test_npz_truncated_member_is_one_line_with_the_reason(tmp_path, capsys):
    buf = io.BytesIO()
    np.save(buf, np.arange(10.0))
    p = tmp_path / "t.npz"
    with zipfile.ZipFile(p, "w") as z:
        z.writestr("x.npy", buf.getvalue()[:-16])
    msg = _refusal(p)
    assert "cannot read as .npz: ValueError: EOF: reading array data" in msg
    bad = tmp_path / "contexts.npz"
    with zipfile.ZipFile(bad, "w") as z:
        z.writestr("contexts.npy", buf.getvalue()[:-16])
        z.writestr("queries.npy", buf.getvalue())
    assert "cannot read as .npz" in _cli(bad, capsys)


@pytest.mark.parametrize("exc, shown", [
    (ValueError("member x is damaged. If you trust the file, pass allow_pickle=True\nsecond line"),
     "cannot read as .npz: ValueError: member x is damaged"),
    (RuntimeError(), "cannot read as .npz: RuntimeError: "),
    (EOFError("first line\nsecond line"), "cannot read as .npz: EOFError: first line"),
])
def test_npz_reader_errors_keep_the_type_and_first_sentence_only(tmp_path, monkeypatch, exc, shown):
    p = tmp_path / "d.npz"
    np.savez(p, x=np.arange(2))

    def broken(*args, **kwargs):
        raise exc

    monkeypatch.setattr(files.np, "load", broken)
    msg = _refusal(p)
    assert msg.endswith(shown), msg
