"""The re-checker's file-level checks (verifier/recheck.py, docs/CERTIFICATES.md Secs. 2, 5, 7), at the points
where a mutation run found them untested: what ``main`` prints and returns for forged files (the exact line and
exit code), the labels of missing and extra members, the optional query bias ``b_Q`` (allowed in the MHA kinds
with weights, nowhere else), ``about`` at its limits, the digest's canonical JSON (key order, escaped non-ASCII),
the exact-work budget of Sec. 7.1 (cumulative per file, the common-denominator charge to the unit), the MHA work
W with a query bias, lines flushed file by file, a file read only up to its limit, the catch-all refusal, and the
helpers behind the printed numbers and interval ends (show, _end, meet).

Expected values come from the spec's formulas computed here, or are the exact lines the spec's format gives.
"""
from __future__ import annotations

import copy
import json
import os
import select
import subprocess
import sys
import time
from fractions import Fraction
from pathlib import Path

import pytest
from mpmath import iv, mp
from test_recheck import GENUINE, STATEMENTS, THM2, _set, first, redigest

from verifier import recheck

PROP1 = "check.proposition1"  # mha-feature-rank, shared context, T = 7, n = 3, d = 5, H = 3, d_h = 3, k = 7
LEMMA2 = "dana_lemma2.d_at_least_N_plus_S_minus_1.head_differences"


def genuine(name: str) -> dict:
    return copy.deepcopy(GENUINE[name])


def with_bias(cert: dict, entry="0") -> dict:
    """The certificate with a query bias b_Q of shape (H, d_h), every entry ``entry`` (0: Z unchanged)."""
    c = copy.deepcopy(cert)
    c["data"]["b_Q"] = [[copy.deepcopy(entry) for _ in range(c["data"]["d_h"])] for _ in range(c["data"]["H"])]
    return redigest(c)


def changed(cert: dict, where: tuple, value) -> dict:
    """The certificate with the member at ``where`` set to ``value`` (KeyError: removed), digest recomputed."""
    return _set(cert, list(where), value)


def reversed_keys(x):
    """The same JSON value with every object's keys in reverse sorted order (the digest must not see it)."""
    if isinstance(x, dict):
        return {k: reversed_keys(x[k]) for k in sorted(x, reverse=True)}
    if isinstance(x, list):
        return [reversed_keys(v) for v in x]
    return x


def statement(name: str, bias: bool = False) -> str:
    line = STATEMENTS[name]
    return line.replace("key/query weights,", "key/query weights (query bias b_Q),") if bias else line


# -- what main prints and returns, file by file ------------------------------------------------------------------
def _cases() -> list:
    thm2, lemma2, prop1, tcap = genuine(THM2), genuine(LEMMA2), genuine(PROP1), first("mha-token-sum-cap")
    counts = first("mha-relu-count-comparison")
    return [
        ("an empty object", {}, 2,
         "ILL-FORMED: the certificate: missing ['about', 'claim', 'data', 'format', 'kind', 'sha256']"),
        ("a missing claim member", changed(lemma2, ("claim", "D"), KeyError), 2, "ILL-FORMED: claim: missing ['D']"),
        ("an extra data member", changed(thm2, ("data", "extra"), 1), 2, "ILL-FORMED: data: unexpected ['extra']"),
        ("an extra top-level member", changed(thm2, ("signature",), "x"), 2,
         "ILL-FORMED: the certificate: unexpected ['signature']"),
        ("claim not an object", changed(thm2, ("claim",), ["-1"]), 2, "ILL-FORMED: claim is not an object"),
        ("data not an object", changed(thm2, ("data",), []), 2, "ILL-FORMED: data is not an object"),
        ("a query bias in an exact kind", changed(thm2, ("data", "b_Q"), [["0"]]), 2,
         "ILL-FORMED: data: unexpected ['b_Q']"),
        ("a query bias in an MHA kind without weights", changed(tcap, ("data", "b_Q"), [["0"]]), 2,
         "ILL-FORMED: data: unexpected ['b_Q']"),
        ("a query bias b_Q = 0 in a feature-rank certificate", with_bias(prop1), 0,
         "ACCEPTED: " + statement(PROP1, bias=True)),
        ("about of exactly 4000 characters", changed(thm2, ("about",), "x" * recheck.MAX_ABOUT), 0,
         "ACCEPTED: " + STATEMENTS[THM2]),
        ("about with the last printable character", changed(thm2, ("about",), " ~ "), 0,
         "ACCEPTED: " + STATEMENTS[THM2]),
        ("about with DEL", changed(thm2, ("about",), "\x7f"), 2,
         "ILL-FORMED: a string is not printable ASCII (an escape of a control or non-ASCII character)"),
        ("every object's keys in reverse order", reversed_keys(thm2), 0, "ACCEPTED: " + STATEMENTS[THM2]),
        ("another format", changed(thm2, ("format",), "mha-verify-certificate/1"), 2,
         "ILL-FORMED: format is not 'mha-verify-certificate/2'"),
        ("the digest kept after an edit", {**thm2, "about": "edited"}, 2,
         "ILL-FORMED: sha256 does not match the file: it was changed after it was written"),
        # an escaped non-ASCII character (the file itself is ASCII): digested as the escape, then refused where read
        ("a non-ASCII number, escaped", changed(thm2, ("claim", "rhs_below"), "\u00e9"), 2,
         "ILL-FORMED: a string is not printable ASCII (an escape of a control or non-ASCII character)"),
        ("the claim not proved", changed(counts, ("claim", "violations"), [[]] * len(counts["claim"]["violations"])),
         1, "REJECTED: the claimed counts or violations differ from the recomputed ones"),
    ]


CASES = _cases()


@pytest.mark.parametrize("label, cert, code, line", CASES, ids=[c[0] for c in CASES])
def test_main_prints_the_verdict_line_and_returns_its_code(label, cert, code, line, tmp_path, capsys):
    path = tmp_path / "cert.json"
    path.write_text(json.dumps(cert, indent=1))  # json.dumps escapes non-ASCII: the file is ASCII
    assert recheck.main([str(path)]) == code, capsys.readouterr().out
    assert capsys.readouterr().out == f"{path}: {line}\n"


def test_the_certificate_not_an_object():
    assert recheck.check_certificate([1, 2]) == (2, "the certificate is not an object")


def test_the_digest_is_of_the_canonical_json():
    """Spec Sec. 2: keys sorted at every level, no whitespace, non-ASCII escaped as \\uXXXX."""
    import hashlib

    body = {"b": ["\u00e9", {"z": 1, "a": True}], "a": "x", "sha256": "ignored"}
    canonical = '{"a":"x","b":["\\u00e9",{"a":true,"z":1}]}'
    assert recheck.digest(body) == hashlib.sha256(canonical.encode("ascii")).hexdigest()


# -- the optional query bias and the MHA work W (spec 4.2, 5) ----------------------------------------------------
def spec_work(data: dict, k: int) -> int:
    """W of spec Sec. 5 for 4.3 (no readout), with the bias's T H d_h additions when b_Q is given."""
    T, n, d, H, dh = (data[x] for x in ("T", "n", "d", "H", "d_h"))
    bias = T * H * dh if "b_Q" in data else 0
    return T * H * (d * dh + n * dh + 2 * n * d) + H * d * dh * (n if data["shared"] else T) + k ** 3 + bias


@pytest.mark.parametrize("name", [PROP1, "proposition5.zero_sum.attained_c0"])  # shared, per example
def test_the_work_of_a_certificate_with_a_query_bias(name, monkeypatch):
    """Interval entries are checked only while W <= MP_WORK (spec 4.2): at W the interval path proves the claim; one
    below, the file is refused with a line that gives W (H = 2, 3 and d_h = 3: the bias term T H d_h counts)."""
    cert = with_bias(genuine(name), ["0", "0"])
    W = spec_work(cert["data"], len(cert["data"]["rows"]))
    assert W < 10**6  # printed exactly in 6 digits
    monkeypatch.setattr(recheck, "MP_WORK", W)
    assert recheck.check_certificate(copy.deepcopy(cert)) == (0, statement(name, bias=True))
    monkeypatch.setattr(recheck, "MP_WORK", W - 1)
    assert recheck.check_certificate(copy.deepcopy(cert)) == (
        2, f"interval entries (b_Q) are checked on the interval path only, up to work {W - 1}; this certificate's "
           f"is {W}")


# -- the exact-work budget (spec 7.1) --------------------------------------------------------------------------
def w(bits: int) -> int:
    return bits // 64 + 1


def spec_common_charge(values) -> int:
    """(o + 2 r) (32 + 4 w(B) w(b)) of spec 7.1, from the definitions there."""
    fr = [Fraction(v) for v in values]
    twos = {q.denominator: (q.denominator & -q.denominator).bit_length() - 1 for q in fr}
    odd = {q >> s for q, s in twos.items()}
    B = max(twos.values(), default=0) + sum(o.bit_length() for o in odd)
    b = max((max(abs(q.numerator).bit_length(), q.denominator.bit_length()) for q in fr), default=0)
    return (len(odd) + 2 * len(fr)) * (32 + 4 * w(B) * w(b))


def test_the_budget_adds_up_over_a_file(monkeypatch):
    """Thm. 2's certificate charges two common denominators (spec 7.1): its row [1/2, 1/4, 1/4] (o = 1, r = 3,
    B = 3, b = 3: 7 x 36 = 252) and its weights [1] (3 x 36 = 108). A budget of their sum passes; one less refuses
    the second step with the spec's line, naming it and the running total."""
    data = GENUINE[THM2]["data"]
    row, weights = [recheck.number(x) for x in data["conditionals"][0]], [recheck.number(x) for x in data["weights"]]
    assert (spec_common_charge(row), spec_common_charge(weights)) == (252, 108)
    monkeypatch.setattr(recheck, "EXACT_WORK", 360)
    assert recheck.check_certificate(genuine(THM2)) == (0, STATEMENTS[THM2])
    assert recheck.check_certificate(genuine(THM2)) == (0, STATEMENTS[THM2])  # the budget is per file
    monkeypatch.setattr(recheck, "EXACT_WORK", 359)
    assert recheck.check_certificate(genuine(THM2)) == (
        2, "weights: exact arithmetic of about 360 word operations, above the 359 a file may use")
    monkeypatch.setattr(recheck, "EXACT_WORK", 251)
    assert recheck.check_certificate(genuine(THM2)) == (
        2, "conditional row 0: exact arithmetic of about 252 word operations, above the 251 a file may use")


COMMON = [
    [Fraction(1, 2), Fraction(1, 12), Fraction(-5, 3)],
    [Fraction(3**80, 2**70), Fraction(1, 3**50 * 2**3), Fraction(7, 5**60), Fraction(-1, 5**60)],  # B, b > 128
    [Fraction(2**200 + 1, 7**40), Fraction(11, 2**130), Fraction(1, 13**30 * 2**64)],
    [Fraction(5**90, 1)] * 3 + [Fraction(1, 3**41)],
    [Fraction(1, 2**128), Fraction(3, 2**5)],  # B = 129: w(B) = 3 (not 129 // 65 + 1)
    [Fraction(0)],
]


@pytest.mark.parametrize("values", COMMON)
def test_the_common_denominator_and_its_charge(values, monkeypatch):
    """values = c / D with D = 2^s times the distinct odd parts (spec 7.1, its docstring), charged to the unit."""
    monkeypatch.setattr(recheck, "_spent", [0])
    c, D = recheck.common(values, "these values")
    assert [Fraction(x, D) for x in c] == values
    odd = {q.denominator // (q.denominator & -q.denominator) for q in values}
    s = max((q.denominator & -q.denominator).bit_length() - 1 for q in values)
    prod = 1
    for o in odd:
        prod *= o
    assert D == prod << s
    assert recheck._spent[0] == spec_common_charge(values)
    assert recheck.common([(x.numerator, x.denominator) for x in values], "pairs")[1] == D  # pairs alike


def test_the_common_denominator_of_nothing(monkeypatch):
    monkeypatch.setattr(recheck, "_spent", [0])
    assert recheck.common([], "nothing") == ([], 1)
    assert recheck.exact_sum([], "nothing") == (0, 1)
    assert recheck._spent[0] == 0


def test_a_refused_step_names_itself(monkeypatch):
    monkeypatch.setattr(recheck, "_spent", [0])
    monkeypatch.setattr(recheck, "EXACT_WORK", 0)
    with pytest.raises(recheck.IllFormed) as exc:
        recheck.common([Fraction(1, 3)], "my row")
    assert str(exc.value) == "my row: exact arithmetic of about 108 word operations, above the 0 a file may use"


# -- the catch-all, lines flushed, the file's size limit ----------------------------------------------------------
def test_an_unexpected_error_is_one_line_and_exit_2(monkeypatch):
    def boom(claim, data):
        raise ValueError("v" * 300)

    claim_keys, data_keys, _ = recheck.KINDS["dana-thm2-negative-rhs"]
    monkeypatch.setitem(recheck.KINDS, "dana-thm2-negative-rhs", (claim_keys, data_keys, boom))
    assert recheck.check_certificate(genuine(THM2)) == (2, "not checkable: ValueError: " + "v" * 200)


def test_each_line_is_flushed_before_the_next_file_is_read(tmp_path):
    """A reader piping the output sees a file's line before the next file is opened: the second path is a FIFO,
    and once the checker has opened it, the first line is already in the pipe."""
    good = tmp_path / "good.json"
    good.write_text(json.dumps(GENUINE[THM2]))
    fifo = tmp_path / "fifo.json"
    os.mkfifo(fifo)
    env = {k: v for k, v in os.environ.items() if k != "PYTHONUNBUFFERED"}
    env["PYTHONPATH"] = os.pathsep.join([str(Path(recheck.__file__).resolve().parents[1]), env.get("PYTHONPATH", "")])
    p = subprocess.Popen([sys.executable, "-c", "import sys; from verifier import recheck; "
                          "sys.exit(recheck.main(sys.argv[1:]))", str(good), str(fifo)],
                         stdout=subprocess.PIPE, stderr=subprocess.PIPE, env=env)
    try:
        fd = None
        while fd is None and p.poll() is None:  # the writer's open succeeds once the checker opened the FIFO
            try:
                fd = os.open(fifo, os.O_WRONLY | os.O_NONBLOCK)
            except OSError:
                time.sleep(0.01)
        assert fd is not None, p.communicate()
        ready, _, _ = select.select([p.stdout], [], [], 30)  # already readable when the line was flushed
        first_line = p.stdout.readline() if ready else b""
        os.write(fd, b"{}")
        os.close(fd)
        rest, err = p.communicate(timeout=120)
    finally:
        if p.poll() is None:
            p.kill()
            p.wait()
    assert first_line.decode() == f"{good}: ACCEPTED: {STATEMENTS[THM2]}\n", err
    assert rest.decode().startswith(f"{fifo}: ILL-FORMED: the certificate: missing [")
    assert p.returncode == 2


def test_a_file_is_read_only_up_to_its_limit(monkeypatch):
    """An endless stream (like /dev/zero) is refused after MAX_FILE_BYTES + 1 bytes, never read to its end."""
    class Endless:
        def __enter__(self):
            return self

        def __exit__(self, *exc):
            return False

        def read(self, size=-1):
            if size is None or size < 0 or size > 10**6:
                raise MemoryError("an endless stream read to its end")
            return b" " * size

    monkeypatch.setattr(recheck, "MAX_FILE_BYTES", 1000)
    monkeypatch.setattr(recheck, "open", lambda path, mode: Endless(), raising=False)
    with pytest.raises(recheck.IllFormed, match=r"^larger than 1000 bytes$"):
        recheck.read("endless")


# -- the helpers behind printed numbers and interval ends --------------------------------------------------------
@pytest.mark.parametrize("x, digits, text", [
    (0, 6, "0"),
    (Fraction(0), 6, "0"),
    (1, 6, "1"),
    (Fraction(-1, 3), 6, "-0.333333"),
    (Fraction(2, 3), 3, "0.667"),
    (10**400, 6, "1.0e+400"),  # beyond binary64: written as the spec's header shows, never inf
    (-10**400, 6, "-1.0e+400"),
    (Fraction(1, 10**400), 6, "1.0e-400"),  # never 0
    (123456789 * 10**400, 6, "1.23457e+408"),
    (123456789 * 10**400, 3, "1.23e+408"),
    ((123456789 * 10**400, 1), 3, "1.23e+408"),
    (mp.mpf(2) ** 2000, 4, "1.148e+602"),
])
def test_show(x, digits, text):
    assert recheck.show(x, digits) == text


def test_interval_ends_within_2_to_65536_are_converted_and_beyond_are_not():
    """Spec Sec. 5: ends beyond 2^65536 or below 2^-65536 in magnitude prove nothing (None); within, exact."""
    end = lambda x: recheck._end(mp.mpf(x)._mpf_)  # noqa: E731
    for e in (0, 1, -1, 100, 65535, -65535):
        for sign in (1, -1):
            assert end(sign * mp.ldexp(1, e)) == sign * Fraction(2) ** e
    assert end(mp.ldexp(3, 65534)) == 3 * Fraction(2) ** 65534
    assert end(0) == 0
    for x in (mp.ldexp(3, 65535), mp.ldexp(1, 70000), -mp.ldexp(1, 70000), mp.ldexp(1, 131071),
              mp.ldexp(1, -70000), -mp.ldexp(1, -70000), mp.inf, -mp.inf, mp.nan):
        assert end(x) is None, x
    assert recheck.upper(iv.mpf([0, mp.inf])) is None and recheck.lower(iv.mpf([0, mp.inf])) == 0


@pytest.mark.parametrize("v, x, lo, hi", [
    ("1/2", [0, 2], [-1, 1], [0, 5]),
    ("1/2", [-3, 1], [0, 4], [-1, 3]),
    ("-1", [-2, 0], [-1, 1], [-5, -1]),
])
def test_meet_keeps_the_number_that_all_three_enclose(v, x, lo, hi):
    """meet(x, lo, hi) narrows x to [lo's lower end, hi's upper end]: it still encloses any number that x, lo and
    hi all enclose, and lies inside x."""
    x, lo, hi = iv.mpf(x), iv.mpf(lo), iv.mpf(hi)
    got = recheck.meet(x, lo, hi)
    assert mp.mpf(Fraction(v).numerator) / Fraction(v).denominator in got
    assert got.a == max(x.a, lo.a) and got.b == min(x.b, hi.b)


def test_an_object_given_directly_has_its_about_and_numbers_checked():
    """check_certificate on an object (no file text to scan): the about and a number's text are still refused."""
    thm2 = GENUINE[THM2]
    assert recheck.check_certificate(changed(thm2, ("about",), "\x7f")) == (
        2, f"about is not printable ASCII text of at most {recheck.MAX_ABOUT} characters")
    assert recheck.check_certificate(changed(thm2, ("claim", "rhs_below"), "\u00e9")) == (
        2, "rhs_below: 'é' is not \"p/q\" or a decimal within 800 digits and exponent 400")


def test_main_flushes_a_line_before_it_reads_the_next_file(monkeypatch, tmp_path):
    """The same as the subprocess test above, in this process (so that mutation runs see it): main() prints
    a file's line and flushes it before it reads the next file."""
    events = []

    class Out:
        def write(self, s):
            events.append("write")

        def flush(self):
            events.append("flush")

    real_read = recheck.read

    def read(path):
        events.append("read")
        return real_read(path)

    paths = []
    for i in range(2):
        p = tmp_path / f"c{i}.json"
        p.write_text(json.dumps(GENUINE[THM2]))
        paths.append(str(p))
    monkeypatch.setattr(recheck, "read", read)
    monkeypatch.setattr(sys, "stdout", Out())
    assert recheck.main(paths) == 0
    second = [i for i, e in enumerate(events) if e == "read"][1]
    assert "write" in events[:second] and events[:second][-1] == "flush"
