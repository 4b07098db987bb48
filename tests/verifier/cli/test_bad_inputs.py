"""The command-line contract on bad and unusual inputs, one case per row:
``--json`` prints exactly ONE JSON object on stdout, stderr holds at most one
line (exactly one, ``mha-verify: ...``, whenever the outcome is neither
verified nor refuted), the exit code is the documented one, and nothing
prints a traceback.  In-process (``verifier.cli.main``) for speed.

Run as a script (``python tests/verifier/cli/test_bad_inputs.py``) it runs
every case through the real ``mha-verify`` in subprocesses and prints one
line per case: the scripted run the issue asks for.
"""
from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest

ROOT = Path(__file__).resolve().parents[3]
RNG = np.random.default_rng(0)
E, Q = RNG.standard_normal((6, 3, 5)), RNG.standard_normal((6, 5))


def _dep():
    q = Q.copy()
    q[4] = 2 * q[0] - 3 * q[5]  # dependent up to float64 rounding
    return q


def _f32_dep():
    c = RNG.standard_normal((3, 3, 6)).astype(np.float32)
    c[1, 2] = c[1, 0] + c[1, 1]
    return c


#: file name -> arrays (or a writer taking the path)
FILES = {
    "ok.npz": dict(contexts=E, queries=Q),
    "dep.npz": dict(contexts=E, queries=_dep()),
    "f32dep.npz": dict(contexts=_f32_dep(), queries=RNG.standard_normal((3, 6)).astype(np.float32)),
    "ints.npz": dict(contexts=RNG.integers(-5, 6, (6, 3, 5)), queries=RNG.integers(-5, 6, (6, 5))),
    "f16.npz": dict(contexts=E.astype(np.float16), queries=Q.astype(np.float16)),
    "nged.npz": dict(contexts=RNG.standard_normal((4, 6, 5)), queries=RNG.standard_normal((4, 5))),
    "gpt2like.npz": dict(contexts=RNG.standard_normal((2, 1024, 768)).astype(np.float32),
                         queries=RNG.standard_normal((2, 768)).astype(np.float32)),
    "complex.npz": dict(contexts=E + 1j, queries=Q),
    "object.npz": dict(contexts=np.array([None, 1.0], dtype=object), queries=Q),
    "strings.npz": dict(contexts=np.array([[["a"]]]), queries=Q),
    "nan.npz": dict(contexts=np.where(E > 1, np.nan, E), queries=Q),
    "inf.npz": dict(contexts=E, queries=np.full_like(Q, np.inf)),
    "rank2.npz": dict(contexts=E[0], queries=Q),
    "nocontexts.npz": dict(queries=Q),
    "noqueries.npz": dict(contexts=E),
    "mismatch.npz": dict(contexts=E, queries=Q[:4]),
    "badlabels.npz": dict(contexts=E, queries=Q, labels=np.zeros((5, 1))),
    "overflow.npz": dict(contexts=E * 1e200, queries=Q),
    "empty.npz": dict(contexts=np.zeros((0, 3, 5)), queries=np.zeros((0, 5))),
}


#: token-sequence data (Dana et al.), JSON
SEQUENCE_FILES = {
    "dana_sum.json": {"N": 2, "sequences": [[0, 0]], "conditionals": [[0.5000000009313226, 0.49999999906867654]]},
    "dana_both.json": {"N": 2, "sequences": [[0, 0]], "targets": [1], "conditionals": [[0.5, 0.5]]},
    "dana_n1.json": {"N": 1, "sequences": [[0, 0]], "targets": [0]},
    "dana_bign.json": {"N": 10**12, "sequences": [[0, 0]], "targets": [0]},
    "dana_heavy.json": {"N": 3, "sequences": [[0, 0], [0, 1], [1, 1], [2, 2], [1, 2]],
                        "conditionals": [[0.5, 0.25, 0.25]] * 5, "prior": [1e308] * 5},
    "dana_decimals.json": {"N": 3, "sequences": [[0, 0]], "conditionals": [[0.1, 0.2, 0.7]]},
    "dana_bigprior.json": {"N": 2, "sequences": [[0, 0], [0, 1]], "targets": [0, 1], "prior": [2**53 + 1, 2**53]},
    "dana_priors.json": {"N": 2, "sequences": [[0, 0], [0, 1]], "targets": [0, 1], "priors": [1, 3]},
    "dana_strings.json": {"N": 2, "sequences": [[0, 0]], "conditionals": [["0.5", "0.5"]]},
    "ks_ok.json": {"sequences": [[0, 1], [1, 0], [1, 1]], "labels": [0, 1, 1], "embeddings": [[1, 0], [0, 1]]},
}

#: the second and third papers' .npz files (issue 31: floats at their precision, integers exact)
PAPER_NPZ = {
    "dana_f16table.npz": dict(N=np.array(3), sequences=np.array([[0, 0], [1, 1]]),
                              conditionals=np.array([[1, 0, 0], [0, 0, 1]], dtype=np.float16)),
    "dana_longdouble.npz": dict(N=np.array(2), sequences=np.array([[0, 0]]),
                                conditionals=np.array([[np.longdouble("1e-4000"), np.longdouble(1)]])),
    "dana_f32n.npz": dict(N=np.array(3.0, dtype=np.float32), sequences=np.array([[0, 1]]), targets=np.array([2])),
    "ks_f16ids.npz": dict(sequences=np.zeros((3, 1), dtype=np.int64), labels=np.array([0, 1, 1]),
                          ids=np.array([2048, 2049, 4096], dtype=np.float16)),
    "ks_f32emb.npz": dict(sequences=np.array([[0, 1], [1, 0]]), labels=np.array([0, 1]),
                          embeddings=np.array([[16777216, 1], [16777217, 1]], dtype=np.float32)),
}


def write_files(folder: Path) -> None:
    for name, content in SEQUENCE_FILES.items():
        (folder / name).write_text(json.dumps(content))
    for name, arrays in {**FILES, **PAPER_NPZ}.items():
        np.savez(folder / name, **arrays)
    np.save(folder / "array.npy", E)
    (folder / "garbage.npz").write_bytes(b"this is not a zip archive")
    (folder / "adir.npz").mkdir(exist_ok=True)
    (folder / "afile").write_text("x")


# (arguments with {d} = the data folder, expected exit code, expected JSON
#  verdict, a phrase the message or reason must contain)
CASES = [
    # options, named by the flag typed
    ("check theorem1 --seed -1", 2, "bad-input", "--seed -1"),
    ("check theorem1 --dout 0", 2, "bad-input", "--dout 0"),
    ("check theorem1 --H 0", 2, "bad-input", "--H 0"),
    ("check theorem1 --dh 0", 2, "bad-input", "--dh 0"),
    ("check theorem1 --T 0", 2, "bad-input", "--T 0"),
    ("check theorem1 --prec 8", 2, "bad-input", "--prec 8"),
    ("check theorem1 --prec 100000", 2, "bad-input", "--prec 100000"),
    ("check theorem1 --H abc", 2, "bad-input", "--H"),
    ("check theorem1 --bogus", 2, "bad-input", "--bogus"),
    ("check", 2, "bad-input", "id"),
    ("check lemma99", 2, "bad-input", "unknown statement id 'lemma99'"),
    ("check theorem1 --context nope", 2, "bad-input", "--context"),
    ("check theorem1 --exact-input", 2, "bad-input", "--exact-input"),
    ("check theorem1 --N 3", 2, "bad-input", "option --N does not apply to theorem1"),
    ("check dana_lemma1", 2, "not-implemented", "not checkable"),
    ("list --bogus", 2, "bad-input", "--bogus"),
    # sizes the statement does not apply to: hypotheses, not bad input
    ("check theorem1 --dout 3 --dv 1", 2, "hypotheses-unmet", "d_v >= d_out refuted"),
    ("check theorem1 --dout 6 --dv 6", 2, "hypotheses-unmet", "d_out <= d refuted"),
    ("check appendixC --dout 3 --dv 1", 2, "hypotheses-unmet", "d_v >= d_out refuted"),
    ("check theorem1 --n 5 --d 5", 2, "hypotheses-unmet", "n < d refuted"),
    ("check claim1 --n 7 --d 4", 2, "hypotheses-unmet", "n < d refuted"),
    ("check assumption2 --n 6 --d 5", 1, "refuted", "n = 6 > d = 5"),
    ("check proposition2 --n 4 --d 3 --T 4", 0, "verified", ""),
    ("check proposition2 --context random", 2, "hypotheses-unmet", "hypotheses not met on the instance: shared"),
    # --save-weights
    ("check lemma2 --save-weights {d}/w.npz", 2, "bad-input", "statements that do: theorem1"),
    ("check theorem1 --save-weights /nonexistent-folder/w.npz", 2, "bad-input", "does not exist"),
    ("check theorem1 --save-weights {d}", 2, "bad-input", "is a folder"),
    ("check theorem1 --save-weights /proc/w.npz", 2, "bad-input", "not writable"),
    ("check appendixC --save-weights {d}/afile/w.npz", 2, "bad-input", "does not exist"),
    # files that are not data
    ("check assumption1 --data {d}/absent.npz", 2, "bad-input", "no such file"),
    ("check assumption1 --data {d}/adir.npz", 2, "bad-input", "is a directory"),
    ("check assumption1 --data {d}/array.npy", 2, "bad-input", "single .npy array"),
    ("check assumption1 --data {d}/garbage.npz", 2, "bad-input", "not an .npz archive"),
    ("check assumption1 --data {d}/complex.npz", 2, "bad-input", "complex"),
    ("check assumption1 --data {d}/object.npz", 2, "bad-input", "object array"),
    ("check assumption1 --data {d}/strings.npz", 2, "bad-input", "holds strings"),
    ("check assumption1 --data {d}/nan.npz", 2, "bad-input", "NaN"),
    ("check assumption1 --data {d}/inf.npz", 2, "bad-input", "NaN or infinite"),
    ("check assumption1 --data {d}/rank2.npz", 2, "bad-input", "expected (T, n, d)"),
    ("check assumption1 --data {d}/nocontexts.npz", 2, "bad-input", "missing array 'contexts'"),
    ("check assumption1 --data {d}/noqueries.npz", 2, "bad-input", "missing array 'queries'"),
    ("check assumption1 --data {d}/mismatch.npz", 2, "bad-input", "queries have shape"),
    ("check theorem1 --data {d}/badlabels.npz", 2, "bad-input", "labels have 5 rows"),
    ("check assumption1 --data {d}/overflow.npz", 2, "bad-input", "overflow"),
    ("check assumption1 --data {d}/empty.npz", 2, "bad-input", "empty"),
    # options that contradict the data
    ("check theorem1 --data {d}/ok.npz --n 2 --d 7", 2, "bad-input", "--n 2 conflicts with --data"),
    ("check theorem1 --data {d}/ok.npz --T 9", 2, "bad-input", "--T 9 conflicts"),
    ("check theorem1 --data {d}/ok.npz --context shared", 2, "bad-input", "does not apply to --data"),
    # real data at its precision
    ("check theorem1 --data {d}/dep.npz --H 3", 2, "hypotheses-unmet", "fails at the data's precision"),
    ("check theorem1 --data {d}/dep.npz --H 3 --exact-input", 0, "verified", ""),
    ("check assumption1 --data {d}/dep.npz", 1, "refuted", "fails at the data's precision: the queries [0, 4, 5]"),
    ("check assumption1 --data {d}/dep.npz --exact-input", 0, "verified", ""),
    ("check assumption2 --data {d}/f32dep.npz", 1, "refuted", "fails at the data's precision: the tokens of context 1"),
    ("check assumption1 --data {d}/ints.npz", 0, "verified", ""),
    ("check assumption1 --data {d}/f16.npz", 0, "verified", ""),
    ("check theorem1 --data {d}/ok.npz --H 3", 0, "verified", ""),
    ("check theorem1 --data {d}/nged.npz", 2, "hypotheses-unmet", "n < d refuted (n = 6, d = 5)"),
    # GPT-2-like: n = 1024 > d = 768
    ("check theorem1 --data {d}/gpt2like.npz", 2, "hypotheses-unmet", "n < d refuted (n = 1024, d = 768)"),
    ("check assumption2 --data {d}/gpt2like.npz", 1, "refuted", "n = 1024 > d = 768"),
    ("check lemma2 --data {d}/gpt2like.npz", 2, "hypotheses-unmet", "Assumption 2 refuted"),
    # token sequences (Dana et al.): probabilities at their precision, sizes, contradictory keys
    ("check dana_thm2 --data {d}/dana_sum.json --d 141 --H 1 --dh 1", 2, "bad-input", "sums to 1 - 8.60e-16"),
    ("check dana_thm2 --data {d}/dana_both.json", 2, "bad-input", "both 'targets' and 'conditionals'"),
    ("check dana_corollary1 --data {d}/dana_n1.json", 2, "bad-input", "N = 1"),
    ("check dana_contrib1 --data {d}/dana_n1.json", 2, "bad-input", "N = 1"),
    ("check dana_prop3 --N 1", 2, "bad-input", "N = 1"),
    ("check dana_prop3 --data {d}/dana_bign.json", 2, "bad-input", "largest vocabulary"),
    ("check dana_thm1_eps0 --N 1000000000000", 2, "bad-input", "largest vocabulary"),
    ("check dana_thm1_eps0 --N 1024 --S 3 --dataset all", 2, "bad-input", "largest support checked"),
    ("check dana_thm1_eps0 --S 100000000", 2, "bad-input", "longest sequence checked"),
    ("check dana_thm1_eps --data {d}/dana_heavy.json --d 2 --dh 1 --H 1", 2, "hypotheses-unmet",
     "T_eps <= H d_h + d refuted (T_eps = 4"),
    ("check dana_thm2 --data {d}/dana_decimals.json --d 2 --H 1", 1, "refuted", "C = 4.71 >= 1/2"),
    ("check dana_thm2 --data {d}/dana_decimals.json --d 178 --H 1", 0, "verified", ""),
    ("check dana_contrib1 --N 3 --d 2 --dh 1 --H 1 --dataset all", 2, "hypotheses-unmet",
     "T0 <= H d_h + d refuted (T0 = 9"),
    ("check dana_prop3 --N 2 --d 2", 0, "verified", ""),
    # issue 31: the second and third papers' numbers by their type; --exact-input; options against the file
    ("check dana_prop3 --data {d}/dana_f16table.npz --d 2", 3, "inconclusive",
     "Assumption 1 (point masses) undecided at the data's precision"),
    ("check dana_prop3 --data {d}/dana_f16table.npz --d 2 --exact-input", 0, "verified", ""),
    ("check dana_corollary1 --data {d}/dana_f16table.npz --d 2 --dh 1 --H 1", 3, "inconclusive", "--exact-input"),
    ("check dana_thm2 --data {d}/dana_longdouble.npz --d 2 --H 1 --dh 1", 1, "refuted",
     "for every distribution the data stand for"),
    ("check dana_corollary2 --data {d}/dana_bigprior.json --d 2 --dh 1 --H 1", 2, "hypotheses-unmet",
     "uniform prior refuted"),
    ("check dana_corollary2 --data {d}/dana_priors.json", 2, "bad-input", "array 'priors' is not one"),
    ("check dana_thm2 --data {d}/dana_strings.json", 2, "bad-input", "holds a string"),
    ("check dana_prop3 --data {d}/dana_f32n.npz", 2, "bad-input", "'N' holds float32 values"),
    ("check dana_prop3 --data {d}/dana_f32n.npz --d 2 --exact-input", 0, "verified", ""),
    ("check dana_prop3 --data {d}/dana_decimals.json --N 5", 2, "bad-input", "--N 5 conflicts with --data"),
    ("check dana_prop3 --data {d}/dana_decimals.json --S 3", 2, "bad-input", "--S 3 conflicts with --data"),
    ("check dana_prop3 --data {d}/dana_decimals.json --T0 4", 2, "bad-input", "--T0 4 conflicts with --data"),
    ("check dana_prop3 --data {d}/dana_decimals.json --dataset all", 2, "bad-input", "--dataset draws generated"),
    ("check dana_prop3 --data {d}/dana_decimals.json --conditionals positive", 2, "bad-input",
     "--conditionals draws generated"),
    ("check ks_ffn_memorization --data {d}/ks_f16ids.npz", 2, "bad-input", "'ids' holds float16 values"),
    ("check ks_ffn_memorization --data {d}/ks_f16ids.npz --exact-input", 2, "hypotheses-unmet",
     "id 2048 has labels [0, 1]"),  # float16 2049 is stored as 2048: read exactly, two ids are one
    ("check ks_contextual_mapping --data {d}/ks_f32emb.npz --exact-input", 2, "hypotheses-unmet",
     "ids sharing an embedding"),  # float32 2^24 + 1 is stored as 2^24
    ("check dana_thm2 --data {d}/dana_longdouble.npz --exact-input", 2, "bad-input", "sums to 1 + 1.00e-4000"),
    ("check ks_contextual_mapping --data {d}/ks_f32emb.npz", 2, "bad-input", "'embeddings' holds float32 values"),
    ("check ks_contextual_mapping --data {d}/ks_ok.json --V 9", 2, "bad-input", "--V 9 conflicts with --data"),
    ("check ks_contextual_mapping --data {d}/ks_ok.json --C 7", 2, "bad-input", "--C 7 conflicts with --data"),
    ("check ks_contextual_mapping --data {d}/ks_ok.json --N 4", 2, "bad-input", "--N 4 conflicts with --data"),
    ("check ks_contextual_mapping --data {d}/ks_ok.json --d 3", 2, "bad-input", "--d 3 conflicts with --data"),
    ("check ks_contextual_mapping --data {d}/ks_ok.json --S 2 --N 3 --V 2 --C 2 --d 2", 0, "verified", ""),
    # the report's output folder, checked before any work
    ("report --quick --out /proc/mha-verify-report --json", 2, "bad-input", "--out"),
    ("report --quick --out {d}/afile/sub --json", 2, "bad-input", "cannot write there"),
    ("report --quick --out {d}/afile --json", 2, "bad-input", "not a folder"),
    ("report --seed -1 --json", 2, "bad-input", "--seed -1"),
]


def _args(case: str, folder: Path) -> list[str]:
    return [a.replace("{d}", str(folder)) for a in case.split()]


@pytest.fixture(scope="module")
def data_folder(tmp_path_factory):
    folder = tmp_path_factory.mktemp("inputs")
    write_files(folder)
    return folder


def check_outcome(case, code, verdict, needle, got_code, out, err):
    """The contract for one case; returns the JSON object."""
    assert "Traceback" not in out + err, (case, err)
    assert got_code == code, (case, got_code, out[-500:], err)
    obj = json.loads(out)  # exactly one JSON object: json.loads refuses anything more
    assert isinstance(obj, dict) and obj["verdict"] == verdict, (case, obj.get("verdict"))
    assert obj["exit_code"] == code
    lines = err.strip().splitlines()
    if code in (0, 1):
        assert len(lines) <= 1, (case, err)
    else:
        assert len(lines) == 1 and lines[0].startswith("mha-verify: "), (case, err)
    text = obj.get("message") or obj.get("reason") or ""
    assert needle in text, (case, text)
    assert "allow_pickle" not in out + err and "unsafely" not in out + err
    return obj


@pytest.mark.parametrize("case, code, verdict, needle", CASES, ids=[c[0] for c in CASES])
def test_one_json_object_one_line_documented_code(capsys, data_folder, case, code, verdict, needle):
    from verifier.cli import main

    args = _args(case, data_folder)
    if "--json" not in args:
        args.append("--json")
    got = main(args)
    out, err = capsys.readouterr()
    check_outcome(case, code, verdict, needle, got, out, err)


def test_there_are_at_least_40_cases():
    assert len(CASES) >= 40


def scripted_run() -> int:
    """Every case through the real command; one line per case; returns the
    number of cases that broke the contract."""
    import tempfile

    folder = Path(tempfile.mkdtemp(prefix="mha-verify-inputs-"))
    write_files(folder)
    broken = 0
    for case, code, verdict, needle in CASES:
        args = _args(case, folder)
        if "--json" not in args:
            args.append("--json")
        p = subprocess.run([sys.executable, "-m", "verifier.cli", *args], cwd=ROOT, capture_output=True, text=True,
                           env={**os.environ, "PYTHONPATH": str(ROOT)}, timeout=600)
        try:
            check_outcome(case, code, verdict, needle, p.returncode, p.stdout, p.stderr)
            status = "ok"
        except (AssertionError, ValueError) as exc:
            broken += 1
            status = f"BROKEN {exc!r}"[:300]
        print(f"{p.returncode:3d}  {verdict:17s} {status:4s}  mha-verify {case}")
    print(f"{len(CASES)} cases, {len(CASES) - broken} kept the contract, {broken} broke it")
    return broken


if __name__ == "__main__":
    sys.exit(1 if scripted_run() else 0)
