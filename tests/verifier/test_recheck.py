"""The standalone re-checker (verifier/recheck.py, docs/CERTIFICATES.md):
every genuine certificate of the corpus (one or more per kind, written by the
exporters: tests/verifier/recheck_corpus/) is accepted, on both arithmetic
paths; every forged file of :func:`forgeries` (the issue's and our own) is
refused with the exit code the spec gives (1: a claim not proved, 2:
ill-formed); the re-checker imports nothing from the project.

These tests run the re-checker in this process (mutation testing sees them);
``test_exit_codes_in_a_subprocess`` runs the script as a reader would.
"""
from __future__ import annotations

import ast
import base64
import copy
import json
import struct
import subprocess
import sys
import time
from pathlib import Path

import pytest

from verifier import recheck

ROOT = Path(__file__).resolve().parents[2]
CORPUS = Path(__file__).resolve().parent / "recheck_corpus"
GENUINE = {p.name[:-5]: json.loads(p.read_text()) for p in sorted(CORPUS.glob("*.json"))}


def redigest(cert: dict) -> dict:
    cert["sha256"] = recheck.digest(cert)
    return cert


def kinds_of(kind: str) -> list:
    return [name for name, c in GENUINE.items() if c["kind"] == kind]


def first(kind: str) -> dict:
    return copy.deepcopy(GENUINE[kinds_of(kind)[0]])


THM2 = "dana_thm2.c_below_half.neg_thm2_C"  # N = 3, d = 2, pi = (1/2, 1/4, 1/4): the right-hand side -0.0555


def edit(cert: dict, old: str, new: str) -> str:
    """The certificate's JSON text with ``old`` replaced (which must occur)."""
    text = json.dumps(cert)
    assert old in text, old
    return text.replace(old, new)


def code(cert) -> int:
    return recheck.check_certificate(cert)[0]


def test_imports_only_the_standard_library_mpmath_and_numpy():
    tree = ast.parse((ROOT / "verifier" / "recheck.py").read_text())
    mods = {a.name.split(".")[0] for n in ast.walk(tree) if isinstance(n, ast.Import) for a in n.names}
    mods |= {n.module.split(".")[0] for n in ast.walk(tree) if isinstance(n, ast.ImportFrom) and n.module}
    mods.discard("mutmut")  # mutation testing's trampolines in its mutated copy (benchmarks/mutation.py), never here
    assert mods <= {"__future__", "base64", "contextlib", "fractions", "hashlib", "itertools", "json", "math", "re",
                    "struct", "sys", "mpmath", "numpy"}, mods


def test_the_corpus_has_every_kind():
    assert {c["kind"] for c in GENUINE.values()} | {"rank-lower-bound"} == set(recheck.KINDS)


@pytest.mark.parametrize("name", sorted(GENUINE))
def test_genuine_certificates_are_accepted(name):
    ok, line = recheck.check_certificate(copy.deepcopy(GENUINE[name]))
    assert ok == 0, (name, line)
    assert line.startswith(GENUINE[name]["kind"] + ": ")
    assert GENUINE[name]["about"] not in line  # the statement proved, never the free text


STATEMENTS = dict(line.split("\t", 1) for line in (CORPUS / "statements.txt").read_text().splitlines())


def test_the_statements_proved_are_pinned():
    """What the re-checker prints for each genuine certificate (interval path: the same on every machine)."""
    assert set(STATEMENTS) == set(GENUINE)
    for name, cert in GENUINE.items():
        assert recheck.check_certificate(copy.deepcopy(cert)) == (0, STATEMENTS[name]), name


def _loosen(cert: dict) -> dict:
    if cert["kind"] == "mha-memorization":
        cert["claim"]["max_abs_residual"] = ["0", "1e-6"]
    return redigest(cert)


@pytest.mark.parametrize("name", [n for n, c in GENUINE.items() if c["kind"].startswith("mha-") and "rank_at_least"
                                  in c["claim"]])
def test_the_float_path_accepts_what_intervals_accept(name, monkeypatch):
    """Every MHA certificate again through the float path (forced: no work is small enough for intervals);
    a memorization claim loosened to [0, 1e-6], which the float enclosure of the residual can show."""
    monkeypatch.setattr(recheck, "MP_WORK", -1)
    ok, line = recheck.check_certificate(_loosen(copy.deepcopy(GENUINE[name])))
    assert ok == 0, line
    assert "float64" in line


def rank_cert(matrix, rows, cols, k) -> dict:
    return redigest({"format": recheck.FORMAT, "kind": "rank-lower-bound", "about": "",
                     "claim": {"rank_at_least": k},
                     "data": {"m": len(matrix), "n": len(matrix[0]), "matrix": matrix, "rows": rows, "cols": cols}})


@pytest.mark.parametrize("matrix, rows, cols, k, expect", [
    ([["1", "2"], ["3", "4"]], [0, 1], [0, 1], 2, 0),
    ([["1", "2"], ["2", "4"]], [0, 1], [0, 1], 2, 1),  # singular
    ([[["1", "1"], "0"], ["0", ["-1/2", "1/2"]]], [0, 1], [0, 1], 2, 1),  # the interval holds a singular matrix
    ([["1", "2", "3"], ["2", "4", "7"]], [0, 1], [0, 2], 2, 0),
    ([["1", "2", "3"], ["2", "4", "7"]], [0, 1], [0, 1], 2, 1),  # a singular minor of a rank-2 matrix
    ([["1", "2"], ["3", "4"]], [0, 1], [0, 1], 1, 1),  # the claim is not what the minor shows
    ([["1", "2"], ["3", "4"]], [0], [1], 1, 0),
    ([["1e-300", "0"], ["0", "1e300"]], [0, 1], [0, 1], 2, 0),
    ([["1", "2"], ["3", "4"]], [0, 0], [0, 1], 2, 2),  # a repeated row
    ([["1", "2"], ["3", "4"]], [0, 2], [0, 1], 2, 2),  # out of range
    ([["1", "2"], ["3"]], [0, 1], [0, 1], 2, 2),  # ragged
    ([[["2", "1"], "0"], ["0", "1"]], [0, 1], [0, 1], 2, 2),  # an empty interval
])
def test_rank_lower_bound(matrix, rows, cols, k, expect):
    assert code(rank_cert(matrix, rows, cols, k)) == expect


# -- the forged corpus ------------------------------------------------------------------------------------------

def _set(cert, path, value, digest=True):
    c = copy.deepcopy(cert)
    obj = c
    for key in path[:-1]:
        obj = obj[key]
    if value is KeyError:
        del obj[path[-1]]
    else:
        obj[path[-1]] = value
    return redigest(c) if digest else c


def _raw_about(cert: dict, about: str) -> str:
    """The certificate's JSON text with ``about`` (a printable string) written with its escapes."""
    return json.dumps(_set(cert, ["about"], about))


def forgeries() -> list:
    """(label, certificate object or raw bytes, expected exit code): every forged case of issue 33, then ours."""
    thm2, lemma2 = GENUINE[THM2], GENUINE["dana_lemma2.d_at_least_N_plus_S_minus_1.head_differences"]
    feat, mem = GENUINE["check.proposition1"], GENUINE["check.theorem1"]
    floor, relu = GENUINE["dana_thm1_eps0.capacity_reading.neg_thm1_shared"], first("relu-unreachable-labels")
    counts, tcap, scap = first("mha-relu-count-comparison"), first("mha-token-sum-cap"), first("mha-shared-context-cap")
    probe = first("mha-feature-rank")
    ragged = copy.deepcopy(mem)
    ragged["data"]["contexts"][0] = ragged["data"]["contexts"][0][:1]  # one token in context 0, n in the others
    out = [
        # issue 33
        ("the claim is not read: rhs below -1", _set(thm2, ["claim", "rhs_below"], "-1"), 1),
        ("k = 2.5 as text", _set(probe, ["claim", "rank_at_least"], "2.5"), 2),
        ("k = 2.5 as a JSON number", edit(probe, '"rank_at_least": 8', '"rank_at_least": 2.5'), 2),
        ("lemma 2 cap 13.9", edit(lemma2, '"cap": 13', '"cap": 13.9'), 2),
        ("lemma 2 T0 16.99", edit(lemma2, '"T0": 16', '"T0": 16.99'), 2),
        ("lemma 2 S = 1, d = -1, H = 0", _set(_set(_set(lemma2, ["data", "S"], 1), ["data", "d"], -1), ["data", "H"], 0), 2),
        ("ragged contexts", redigest(ragged), 2),
        ("about rewritten, digest kept", _set(thm2, ["about"], "Mahdavi et al. Theorem 1 is false", digest=False), 2),
        ("format rewritten, digest kept", _set(thm2, ["format"], "mha-verify-certificate/1", digest=False), 2),
        ("a 14-character entry 1e100000000", _set(thm2, ["data", "conditionals", 0, 0], "1e100000000"), 2),
        ("N = 10^8 in a small file", _set(thm2, ["data", "N"], 10**8), 2),
        ("JSON Infinity in a claim", edit(thm2, '"rhs_below": "-554e-4"', '"rhs_below": Infinity'), 2),
        ("JSON NaN in the data", edit(thm2, '"d": 2', '"d": NaN'), 2),
        ("deep nesting", "[" * 100000 + "]" * 100000, 2),
        ("five million small values", "[" + "0," * (5 << 20) + "0]", 2),
        ("deep nesting in a field", edit(thm2, '"about": "', '"x": ' + "[" * 3000 + "]" * 3000 + ', "about": "'), 2),
        ("not UTF-8", b"\xff\xfe{\x00}", 2),
        ("not ASCII", edit(thm2, "Thm. 2", "Thm.\u00a02").encode("utf-8"), 2),
        # ours: indices and minors
        ("a repeated row index", _set(feat, ["data", "rows", 0], feat["data"]["rows"][1]), 2),
        ("a row index out of range", _set(feat, ["data", "rows", 0], feat["data"]["T"]), 2),
        ("a negative column index", _set(feat, ["data", "cols", 0], -1), 2),
        ("a column index as text", _set(feat, ["data", "cols", 0], "0"), 2),
        ("a minor one row short", _set(feat, ["data", "rows"], feat["data"]["rows"][:-1]), 2),
        ("rows and cols of different lengths", _set(feat, ["data", "cols"], feat["data"]["cols"][:-1]), 2),
        ("a claim above the minor", _set(feat, ["claim", "rank_at_least"], feat["claim"]["rank_at_least"] + 1), 1),
        ("a claim below the minor", _set(feat, ["claim", "rank_at_least"], feat["claim"]["rank_at_least"] - 1), 1),
        ("a minor that is not one: a zero column", _zero_column(feat), 1),
        ("a zero row in the minor", _zero_row_query(probe), 1),
        ("memorization on a subset of the rows", _set(_set(mem, ["data", "rows"], mem["data"]["rows"][:-1]),
                                                      ["data", "cols"], mem["data"]["cols"][:-1]), 1),
        ("memorization with d_v < d_out", _set(_set(mem, ["data", "d_out"], 2), ["data", "labels"],
                                               [[x, x] for [x] in mem["data"]["labels"]]), 2),
        ("memorization: the residual claimed 1000x smaller", _shrink(mem, 1000), 1),
        ("memorization: the residual's lower end above it", _raise_lower(mem), 1),
        ("memorization: lower above upper", _set(mem, ["claim", "max_abs_residual"], ["1", "0"]), 2),
        ("memorization: the skip connection switched on", _set(mem, ["data", "skip"], True), 1),
        ("memorization: a label changed", _set(mem, ["data", "labels", 0, 0], "1000"), 1),
        ("a size as a boolean", _set(feat, ["data", "T"], True), 2),
        ("shared switched off with one context", _set(feat, ["data", "shared"], False), 2),
        ("a weight array of the wrong shape", _set(feat, ["data", "W_K"], feat["data"]["W_K"][:-1]), 2),
        # ours: changed claims, other kinds, fields, keys, numbers
        ("lemma 2 R + 1", _set(lemma2, ["claim", "R"], lemma2["claim"]["R"] + 1), 1),
        ("lemma 2 T0 not the data's", _set(lemma2, ["claim", "T0"], 15), 1),
        ("lemma 2 a dropped sequence", _set(lemma2, ["data", "sequences"], lemma2["data"]["sequences"][:-1]), 1),
        ("lemma 2 a repeated sequence", _set(lemma2, ["data", "sequences", 0], lemma2["data"]["sequences"][1]), 2),
        ("lemma 2 a token out of range", _set(lemma2, ["data", "sequences", 0], [9, 9]), 2),
        ("lemma 2 H = 1: the cap is not below", _set(_set(_set(lemma2, ["data", "H"], 1), ["claim", "cap"], 5),
                                                     ["claim", "target"], 5), 1),
        ("thm 2 with C < 1/2", _set(thm2, ["data", "d"], 200), 1),
        ("thm 2 a row off the simplex", _set(thm2, ["data", "conditionals", 0, 1], "1/3"), 1),
        ("thm 2 a negative weight", _set(thm2, ["data", "weights", 0], "-1"), 1),
        ("thm 2 a positive claim", _set(thm2, ["claim", "rhs_below"], "1"), 2),
        ("thm 2 denominator 0", _set(thm2, ["data", "weights", 0], "1/0"), 2),
        ("thm 2 801 digits", _set(thm2, ["data", "weights", 0], "1" * 801), 2),
        ("thm 2 exponent 401", _set(thm2, ["data", "weights", 0], "1e401"), 2),
        ("thm 2 a hex number", _set(thm2, ["data", "weights", 0], "0x1p-3"), 2),
        ("thm 2 a trailing newline in a number", _set(thm2, ["data", "weights", 0], "1\n"), 2),
        ("floor kappa0 x 100", _scale_claim(floor, "kappa0", 100), 1),
        ("floor k + 1", _set(floor, ["claim", "k"], floor["claim"]["k"] + 1), 1),
        ("floor alpha x 10", _scale_group(floor, 10), 1),
        ("floor a column out of range", _set(floor, ["data", "groups", 0, "columns"], [0, 7]), 2),
        ("floor T0 > H d_h + d", _set(floor, ["data", "d_h"], 0), 2),
        ("floor d < N - 1", _set(_set(floor, ["data", "d"], 1), ["claim", "k"], 1), 1),
        ("floor a zero conditional", _zero_conditional(floor), 1),
        ("floor T0 not the number of sequences", _set(floor, ["data", "T0"], 2), 2),
        ("relu with 2 units", _set(relu, ["claim", "units"], 2), 1),
        ("relu labels on a line", _set(relu, ["data", "labels"], ["1"] * relu["data"]["T"]), 1),
        ("counts a row changed", _bump_count(counts), 1),
        ("counts a violation dropped", _set(counts, ["claim", "violations", 2], counts["claim"]["violations"][2][1:]), 1),
        ("counts n >= d", _set(counts, ["data", "grid", 0], [1, 4, 4, "lean"]), 2),
        ("token-sum cap claimed one lower", _set(tcap, ["claim", "rank_at_most"], tcap["claim"]["rank_at_most"] - 1), 1),
        ("token-sum cap a vector not null", _set(tcap, ["data", "null_vectors", 0, 0], 2), 1),
        ("token-sum cap a repeated vector", _repeat_vector(tcap), 1),
        ("token-sum cap a token changed", _set(tcap, ["data", "contexts", 0, 0, 0], "7/8"), 1),
        ("shared cap a vector not block-constant", _set(scap, ["data", "null_vectors", 0, 0], 2), 1),
        ("shared cap a vector whose blocks do not sum to 0", _set(scap, ["data", "null_vectors", 0],
                                                                  [1] * len(scap["data"]["null_vectors"][0])), 1),
        ("shared cap claimed one lower", _set(scap, ["claim", "rank_at_most"], scap["claim"]["rank_at_most"] - 1), 1),
        ("a claim about another kind", _set(thm2, ["kind"], "dana-lemma2-rank-cap"), 2),
        ("an unknown kind", _set(thm2, ["kind"], "dana-thm2-positive-rhs"), 2),
        ("an extra data field", _set(thm2, ["data", "extra"], 1), 2),
        ("a missing claim field", _set(lemma2, ["claim", "D"], KeyError), 2),
        ("an extra top-level member", _set(thm2, ["signature"], "x"), 2),
        ("no about", _set(thm2, ["about"], KeyError), 2),
        ("a non-printable about", _set(thm2, ["about"], "a\u0007b"), 2),
        ("an about of 4001 characters", _set(thm2, ["about"], "x" * 4001), 2),
        # strings are printable ASCII (spec Sec. 2), read from the escapes of the text (digests recomputed)
        ("a control character escaped in the about", json.dumps(_set(thm2, ["about"], "a\x01b")), 2),
        ("a tab escaped in a claim string", json.dumps(_set(counts, ["claim", "rows", 0, 3], "lean\t")), 2),
        ("a non-ASCII character escaped in a claim string",
         json.dumps(_set(counts, ["claim", "rows", 0, 3], "l\u00e9an")), 2),
        ("a DEL escaped in the kind", json.dumps(_set(thm2, ["kind"], "dana-thm2\x7f"))[:-1] + "}", 2),
        ("a printable character escaped is that character", edit(_set(thm2, ["about"], "xAy"), '"xAy"',
                                                                 '"x\\u0041y"'), 0),
        ("an escaped backslash before n is printable", _raw_about(thm2, "a\\nb"), 0),
        ("a duplicate key", json.dumps(thm2)[:-1] + ', "kind": "dana-thm2-negative-rhs"}', 2),
        ("a JSON float in the data", edit(thm2, '"d": 2', '"d": 2.0'), 2),
        ("a JSON integer of 19 digits", edit(thm2, '"d": 2', '"d": 1000000000000000000'), 2),
        ("a JSON array at the top", "[1, 2]", 2),
        ("not JSON", "{", 2),
        ("base64 of the wrong length", _b64(feat, "queries", drop=1), 2),
        ("base64 with a NaN entry", _b64(feat, "queries", nan=True), 2),
        ("base64 not base64", _b64(feat, "queries", garbage=True), 2),
        ("a base64 object with an extra member", _b64(feat, "queries", extra=True), 2),
    ]
    return out


def _zero_column(c):
    """Column cols[0] of Z made identically 0 by zeroing that coordinate in the context: Z's minor is singular."""
    c = copy.deepcopy(c)
    d = c["data"]["d"]
    j = c["data"]["cols"][0] % d
    for ctx in c["data"]["contexts"]:
        for tok in ctx:
            tok[j] = "0"
    return redigest(c)


def _zero_row_query(c):
    """Two examples made identical (context and query): two equal rows in the minor."""
    c = copy.deepcopy(c)
    rows = c["data"]["rows"]
    c["data"]["queries"][rows[1]] = copy.deepcopy(c["data"]["queries"][rows[0]])
    if not c["data"]["shared"]:
        c["data"]["contexts"][rows[1]] = copy.deepcopy(c["data"]["contexts"][rows[0]])
    return redigest(c)


def _shrink(c, f):
    lo, hi = (recheck.number(x) for x in c["claim"]["max_abs_residual"])
    return _set(c, ["claim", "max_abs_residual"], [str(lo / f), str(hi / f)])


def _raise_lower(c):
    lo, hi = (recheck.number(x) for x in c["claim"]["max_abs_residual"])
    return _set(c, ["claim", "max_abs_residual"], [str(hi / 2), str(hi)])


def _scale_claim(c, key, f):
    return _set(c, ["claim", key], str(recheck.number(c["claim"][key]) * f))


def _scale_group(c, f):
    return _set(c, ["data", "groups", 0, "alpha"], str(recheck.number(c["data"]["groups"][0]["alpha"]) * f))


def _zero_conditional(c):
    row = ["0"] + ["1/" + str(c["data"]["N"] - 1)] * (c["data"]["N"] - 1)
    return _set(c, ["data", "conditionals", 0], row)


def _bump_count(c):
    c = copy.deepcopy(c)
    c["claim"]["rows"][0][8] += 1
    return redigest(c)


def _repeat_vector(c):
    c = copy.deepcopy(c)
    c["data"]["null_vectors"].append(c["data"]["null_vectors"][0])
    return redigest(c)


def _b64(c, field, drop=0, nan=False, garbage=False, extra=False):
    c = copy.deepcopy(c)
    flat = [float(recheck.number(x)) for row in c["data"][field] for x in row]
    if nan:
        flat[0] = float("nan")
    raw = struct.pack(f"<{len(flat)}d", *flat)
    text = base64.b64encode(raw[:len(raw) - 8 * drop] if drop else raw).decode()
    if garbage:
        text = "!" + text[1:]
    c["data"][field] = {"float64": text, **({"shape": [1]} if extra else {})}
    return redigest(c)


FORGED = forgeries()


def _judge(item, tmp_path):
    if isinstance(item, dict):
        return recheck.check_certificate(item)
    path = tmp_path / "forged.json"
    path.write_bytes(item if isinstance(item, bytes) else item.encode("ascii", errors="surrogateescape")
                     if isinstance(item, str) and item.isascii() else item.encode("utf-8"))
    try:
        return recheck.check_certificate(recheck.read(path))
    except recheck.IllFormed as exc:
        return 2, str(exc)


@pytest.mark.parametrize("label, item, expect", FORGED, ids=[f[0] for f in FORGED])
def test_forged_files_are_refused(label, item, expect, tmp_path):
    t0 = time.perf_counter()
    got, line = _judge(item, tmp_path)
    assert got == expect, (label, line)
    assert "\n" not in line and line
    assert time.perf_counter() - t0 < 60  # no hang (a generous bound: not a speed target)


MHA_FORGED = [f for f in FORGED if isinstance(f[1], dict) and f[1].get("kind", "").startswith("mha-")
              and "rank_at_least" in f[1].get("claim", {})]


@pytest.mark.parametrize("label, item, expect", MHA_FORGED, ids=[f[0] for f in MHA_FORGED])
def test_forged_mha_files_are_refused_on_the_float_path_too(label, item, expect, monkeypatch):
    monkeypatch.setattr(recheck, "MP_WORK", -1)
    got, line = recheck.check_certificate(copy.deepcopy(item))
    assert got == expect, (label, line)


def test_the_issue_forgeries_with_their_digest_recomputed_are_still_refused():
    """The digest is not what refuses them: each was recomputed above (only the two 'digest kept' cases rely on it)."""
    thm2 = copy.deepcopy(GENUINE[THM2])
    c = _set(thm2, ["about"], "Mahdavi et al. Theorem 1 is false")
    ok, line = recheck.check_certificate(c)
    assert ok == 0 and "Theorem 1 is false" not in line  # about is never vouched for, never printed
    assert recheck.check_certificate(_set(thm2, ["format"], "mha-verify-certificate/1"))[0] == 2


def test_a_directory_and_a_missing_file(tmp_path):
    for p in (tmp_path, tmp_path / "missing.json"):
        with pytest.raises(recheck.IllFormed):
            recheck.read(p)


def test_main_reports_one_line_per_file_and_the_worst_code(tmp_path, capsys):
    good = tmp_path / "good.json"
    good.write_text(json.dumps(copy.deepcopy(GENUINE[THM2])))
    bad = tmp_path / "bad.json"
    bad.write_text(json.dumps(_set(copy.deepcopy(GENUINE[THM2]), ["claim", "rhs_below"], "-1")))
    assert recheck.main([str(good)]) == 0
    assert recheck.main([str(good), str(bad)]) == 1
    assert recheck.main([str(bad), str(tmp_path)]) == 2
    assert recheck.main([]) == 2
    lines = capsys.readouterr().out.splitlines()
    assert [ln.split(": ")[1] for ln in lines] == ["ACCEPTED", "ACCEPTED", "REJECTED", "REJECTED", "ILL-FORMED"]


def test_main_reads_sys_argv_and_prints_usage(tmp_path, capsys, monkeypatch):
    monkeypatch.setattr(sys, "argv", ["recheck.py"])
    assert recheck.main() == 2
    assert capsys.readouterr().err == ("usage: python verifier/recheck.py CERT.json [...]   (exit 0 accepted, 1 "
                                       "rejected, 2 ill-formed)\n")
    missing = tmp_path / "missing.json"
    monkeypatch.setattr(sys, "argv", ["recheck.py", str(missing)])
    assert recheck.main() == 2
    assert capsys.readouterr().out == f"{missing}: ILL-FORMED: unreadable: No such file or directory\n"


def test_numbers_are_read_exactly():
    from fractions import Fraction

    assert recheck.number("-12.5e-3") == Fraction(-1, 80)
    assert recheck.number("3/6") == Fraction(1, 2)
    assert recheck.number(7) == 7
    assert recheck.number("1e-400") == Fraction(1, 10**400)
    assert recheck.number("0." + "0" * 798 + "1") == Fraction(1, 10**799)
    for bad in ("1e401", "1/0", "", "1.", ".5", "+1", "1e", "nan", True, 1.5, None, "1" * 801, "1 "):
        with pytest.raises(recheck.IllFormed):
            recheck.number(bad)


def test_exit_codes_in_a_subprocess(tmp_path):
    """python verifier/recheck.py as a reader runs it: 0, 1, 2, one line per file, never a traceback."""
    files = {"good": json.dumps(copy.deepcopy(GENUINE[THM2])),
             "bad": json.dumps(_set(copy.deepcopy(GENUINE[THM2]), ["claim", "rhs_below"], "-1")),
             "inf": edit(GENUINE[THM2], '"rhs_below": "-554e-4"', '"rhs_below": Infinity'),
             "deep": "[" * 100000 + "]" * 100000}
    for name, text in files.items():
        (tmp_path / name).write_text(text)
    (tmp_path / "bytes").write_bytes(b"\xff\xfe")
    script = str(ROOT / "verifier" / "recheck.py")
    for args, expect in ((["good"], 0), (["bad"], 1), (["inf"], 2), (["deep"], 2), (["bytes"], 2), (["."], 2),
                         (["good", "bad"], 1), (["good", "bad", "deep"], 2), ([], 2)):
        p = subprocess.run([sys.executable, script, *args], cwd=tmp_path, capture_output=True, text=True, timeout=120)
        assert p.returncode == expect, (args, p.stdout, p.stderr)
        assert "Traceback" not in p.stdout + p.stderr
        assert len(p.stdout.splitlines()) == len(args)
