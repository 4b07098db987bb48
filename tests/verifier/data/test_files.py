"""The one reader (verifier/data/files.py): what every paper's data file goes through."""
import json
import time
import zipfile
from fractions import Fraction

import numpy as np
import pytest

from verifier.data.files import MAX_NUMBER_CHARS, read_data_file
from verifier.errors import InvalidInstance

REQ, OPT = ("contexts", "queries"), ("labels",)


def write_json(tmp_path, text, name="d.json"):
    p = tmp_path / name
    p.write_text(text)
    return p


def test_json_numbers_are_the_exact_decimals_written(tmp_path):
    p = write_json(tmp_path, '{"queries": [[0.1, 1e-400, 12345678901234567890123456789.5]], '
                             '"contexts": [[[1, 2]]], "labels": [[18446744073709551617]]}')
    f = read_data_file(p, required=REQ, optional=OPT)
    q = f["queries"].values
    assert q[0, 0] == Fraction(1, 10) and q[0, 1] == Fraction(1, 10**400)
    assert q[0, 2] == Fraction(24691357802469135780246913579, 2)
    assert f["labels"].values[0, 0] == 2**64 + 1  # an integer beyond int64 stays an integer
    assert f["contexts"].values.dtype == np.int64
    assert all(a.precision.exact for a in f.arrays.values())


@pytest.mark.parametrize("text, needle", [
    ('{"contexts": [[["1"]]], "queries": [[1]]}', "a string"),
    ('{"contexts": [[[true]]], "queries": [[1]]}', "a boolean"),
    ('{"contexts": [[[null]]], "queries": [[1]]}', "null"),
    ('{"contexts": [[[NaN]]], "queries": [[1]]}', "NaN"),
    ('{"contexts": [[[Infinity]]], "queries": [[1]]}', "Infinity"),
    ('{"contexts": [[[1]]], "queries": [[1]], "queries": [[2]]}', "appears twice"),
    ('{"contexts": [[[1, 2], [3]]], "queries": [[1]]}', "ragged"),
    ('{"contexts": [[[1]]], "queries": [[1]], "lables": [[1]]}', "'lables' is not one this statement reads"),
    ('{"contexts": [[[1]]]}', "missing array 'queries'"),
    ('[1, 2]', "a JSON object"),
    ('{"contexts": [[[1e100000000]]], "queries": [[1]]}', "exponent"),
    ('{"contexts": [[[' + "1" * (MAX_NUMBER_CHARS + 1) + ']]], "queries": [[1]]}', "digits"),
    ('{"contexts": [[[0.' + "1" * MAX_NUMBER_CHARS + ']]], "queries": [[1]]}', "characters"),
    ('{"contexts": ' + "[" * 5000 + "]" * 5000 + ', "queries": [[1]]}', "deep"),
    ('{"contexts": [[[1]]], "queries": [[1]]', "not valid JSON"),
])
def test_bad_json_is_one_line(tmp_path, text, needle):
    t0 = time.perf_counter()
    with pytest.raises(InvalidInstance, match=needle) as exc:
        read_data_file(write_json(tmp_path, text), required=REQ, optional=OPT)
    assert "\n" not in str(exc.value) and time.perf_counter() - t0 < 30  # no hang on a huge exponent


def test_npz_reading_and_refusals(tmp_path):
    good = tmp_path / "g.npz"
    np.savez(good, contexts=np.zeros((1, 1, 2), np.float32), queries=np.ones((1, 2), np.float16))
    f = read_data_file(good, required=REQ, optional=OPT)
    assert f["contexts"].values.dtype == np.float32 and f["contexts"].precision.kind == "float"
    assert read_data_file(good, required=REQ, optional=OPT, exact_input=True)["queries"].precision.exact
    for name, arrays, needle in [
        ("s.npz", dict(contexts=np.array([[["a"]]]), queries=np.ones((1, 1))), "holds strings"),
        ("typo.npz", dict(contexts=np.ones((1, 1, 2)), queries=np.ones((1, 2)), lables=np.ones((1, 1))),
         "'lables' is not one this statement reads"),
        ("miss.npz", dict(queries=np.ones((1, 2))), "missing array 'contexts'"),
        ("cplx.npz", dict(contexts=np.ones((1, 1, 2)) * 1j, queries=np.ones((1, 2))), "complex"),
    ]:
        p = tmp_path / name
        np.savez(p, **arrays)
        with pytest.raises(InvalidInstance, match=needle):
            read_data_file(p, required=REQ, optional=OPT)
    obj = tmp_path / "o.npz"
    np.savez(obj, contexts=np.array([[[None]]], dtype=object), queries=np.ones((1, 1)))
    with pytest.raises(InvalidInstance, match="object array"):
        read_data_file(obj, required=REQ, optional=OPT)
    odd = tmp_path / "m.npz"
    with zipfile.ZipFile(odd, "w") as z:
        z.writestr("contexts.npy", b"not an npy")
        z.writestr("notes.txt", "hello")
    with pytest.raises(InvalidInstance, match="not an .npy|not a valid .npy"):
        read_data_file(odd, required=REQ, optional=OPT)


def test_paths_that_are_not_files(tmp_path):
    with pytest.raises(InvalidInstance, match="directory"):
        read_data_file(tmp_path, required=REQ)
    with pytest.raises(InvalidInstance, match="no such file"):
        read_data_file(tmp_path / "nope.npz", required=REQ)
    npy = tmp_path / "a.npy"
    np.save(npy, np.ones(3))
    with pytest.raises(InvalidInstance, match="single .npy"):
        read_data_file(npy, required=REQ)


def test_the_reading_is_reported(tmp_path):
    p = write_json(tmp_path, json.dumps({"contexts": [[[1, 2]]], "queries": [[0.5, 1]]}))
    f = read_data_file(p, required=REQ, optional=OPT)
    assert "JSON numbers" in f.reading["queries"] and "exact" in f.reading["queries"]


def test_an_npz_member_given_twice_is_refused(tmp_path):
    import io
    import warnings

    def npy(a):
        b = io.BytesIO()
        np.save(b, a)
        return b.getvalue()

    p = tmp_path / "twice.npz"
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        with zipfile.ZipFile(p, "w") as z:
            z.writestr("contexts.npy", npy(np.ones((1, 1, 2))))
            z.writestr("queries.npy", npy(np.ones((1, 2))))
            z.writestr("queries.npy", npy(np.zeros((1, 2))))
    with pytest.raises(InvalidInstance, match="appears twice"):
        read_data_file(p, required=REQ, optional=OPT)
