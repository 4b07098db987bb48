"""Every way a run ends has its exit code and its line (README, "Exit codes"):
a signal (SIGINT 130, SIGTERM 143, SIGHUP 129), a cluster lost or running
other code (4), a closed stdout (the verdict's own code), sizes above the
memory budget (2, before anything is allocated: under a ulimit here), and
under ``report --json`` stdout holds the one JSON object alone whatever else
writes to it.  The real processes: subprocesses."""
from __future__ import annotations

import json
import os
import resource
import signal
import subprocess
import sys
import time
import zipfile
from pathlib import Path

import pytest

from verifier.cli import main

ROOT = Path(__file__).resolve().parents[3]
ENV = {**os.environ, "PYTHONPATH": str(ROOT)}
CLI = [sys.executable, "-m", "verifier.cli"]


def one_json(out: str) -> dict:
    obj = json.loads(out)  # exactly one JSON object: json.loads refuses anything more
    assert isinstance(obj, dict)
    return obj


def ending_lines(err: str) -> list[str]:
    """stderr's lines but the report's progress lines."""
    return [line for line in err.splitlines() if not line.startswith("mha-verify report: ")]


@pytest.mark.parametrize("sig, json_mode", [(signal.SIGINT, True), (signal.SIGTERM, True), (signal.SIGTERM, False),
                                            (signal.SIGHUP, True)])
def test_a_signal_ends_the_run_with_its_code_and_one_line(tmp_path, sig, json_mode):
    out = tmp_path / "out"
    args = [*CLI, "report", "--quick", "--out", str(out)] + (["--json"] if json_mode else [])
    p = subprocess.Popen(args, cwd=ROOT, env=ENV, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    deadline = time.monotonic() + 120
    while not out.exists() and p.poll() is None and time.monotonic() < deadline:  # the run has started
        time.sleep(0.05)
    time.sleep(0.5)
    p.send_signal(sig)
    stdout, stderr = p.communicate(timeout=120)
    name = signal.Signals(sig).name
    assert p.returncode == 128 + sig, (p.returncode, stderr[-2000:])
    assert "Traceback" not in stdout + stderr
    lines = ending_lines(stderr)
    assert len(lines) == 1 and lines[0] == ("mha-verify: interrupted" if sig == signal.SIGINT
                                            else f"mha-verify: interrupted by {name}"), stderr[-1000:]
    if json_mode:
        obj = one_json(stdout)
        assert obj["verdict"] == "interrupted" and obj["exit_code"] == 128 + sig
    else:
        assert stdout == ""


def test_a_signal_that_python_wraps_still_ends_the_run_with_its_code(tmp_path, monkeypatch, capsys):
    """A signal while a class body is imported: Python 3.11 wraps the handler's
    exception in a RuntimeError ("Error calling __set_name__"); CI met it once
    as exit 4, "internal error"."""
    from verifier.report import build

    class SignalsOnSetName:
        def __set_name__(self, owner, name):
            os.kill(os.getpid(), signal.SIGTERM)
            for _ in range(1000):  # the handler runs at the next bytecode
                pass

    def imported_under_a_signal(**kw):
        type("Example", (), {"raises": SignalsOnSetName()})
        return 0

    monkeypatch.setattr(build, "write_report", imported_under_a_signal)
    assert main(["report", "--quick", "--out", str(tmp_path), "--json"]) == 128 + signal.SIGTERM
    out, err = capsys.readouterr()
    obj = one_json(out)
    assert obj["verdict"] == "interrupted" and obj["exit_code"] == 128 + signal.SIGTERM
    assert err.strip().splitlines() == ["mha-verify: interrupted by SIGTERM"]


@pytest.mark.parametrize("args, code", [(["check", "lemma2"], 0), (["check", "dana_thm2"], 1),
                                        (["check", "dana_thm2", "--json"], 1), (["check", "lemma99"], 2),
                                        (["list"], 0)])
def test_a_closed_stdout_keeps_the_verdict_s_code(args, code):
    p = subprocess.run([*CLI, *args], cwd=ROOT, env=ENV, stderr=subprocess.PIPE, text=True, timeout=300,
                       preexec_fn=lambda: os.close(1))
    assert p.returncode == code and "Traceback" not in p.stderr, p.stderr[-2000:]


def test_a_lost_cluster_is_exit_4_and_one_line(tmp_path, monkeypatch, capsys):
    from verifier.report import build
    from verifier.report.executor import ClusterLost, WorkerMismatch

    for exc in (ClusterLost("the Ray cluster failed under the run: LocalRayletDiedError: The task's local raylet "
                            "died."), WorkerMismatch("a Ray worker runs in another environment than this driver")):
        def lost(**kw):
            raise exc

        monkeypatch.setattr(build, "write_report", lost)
        assert main(["report", "--quick", "--out", str(tmp_path), "--json"]) == 4
        out, err = capsys.readouterr()
        obj = one_json(out)
        assert obj["verdict"] == "error" and obj["exit_code"] == 4 and str(exc) in obj["message"]
        assert err.strip().splitlines() == [f"mha-verify: error: {exc}"]


NOISY = """
import os, subprocess, sys
from pathlib import Path
from verifier.report import build
from verifier.cli import main

def noisy(*, out, **kw):
    print("(raylet) a worker died: printed by a library on sys.stdout")
    os.write(1, b"(raylet) written on file descriptor 1\\n")
    subprocess.run(["echo", "(gcs) a child process's stdout"])
    (Path(out) / "results.json").write_text('{"summary": {"exit_code": 0}}')
    return 0

build.write_report = noisy
sys.exit(main(sys.argv[1:]))
"""


def test_report_json_stdout_is_the_one_object_whatever_else_writes_there(tmp_path):
    p = subprocess.run([sys.executable, "-c", NOISY, "report", "--quick", "--out", str(tmp_path), "--json"], cwd=ROOT,
                       env=ENV, capture_output=True, text=True, timeout=300)
    assert p.returncode == 0, p.stderr
    assert one_json(p.stdout)["verdict"] == "report"
    assert p.stderr.count("(raylet)") == 2 and "(gcs)" in p.stderr


def _limited():
    resource.setrlimit(resource.RLIMIT_AS, (3 << 30, 3 << 30))  # 3 GiB of address space


def _members(path, members) -> None:
    with zipfile.ZipFile(path, "w", zipfile.ZIP_DEFLATED) as zf:
        for name, data in members:
            zf.writestr(name, data)


@pytest.mark.skipif(not sys.platform.startswith("linux"), reason="RLIMIT_AS: Linux")
def test_sizes_above_the_budget_are_one_line_under_a_ulimit(tmp_path):
    """Each refused before anything is allocated: under a 3 GiB address-space limit the
    run still ends with its line and exit 2 (not killed, not a MemoryError)."""
    import numpy as np

    sys.path.insert(0, str(ROOT / "tests" / "verifier" / "data"))
    from test_budget import declared_bomb, npy_header

    declared_bomb(tmp_path / "bomb.npz")
    good = npy_header((6, 5)) + np.zeros((6, 5)).tobytes()
    _members(tmp_path / "notnpy.npz", [("queries.npy", good), ("contexts.npy", b"not an array")])
    _members(tmp_path / "extra.npz", [("queries.npy", good), ("readme.txt", b"hello")])
    (tmp_path / "digits.json").write_text('{"N": 5, "sequences": [[0, 1], [1, 0]], "conditionals": '
                                          '[[1, 0, 0, 0, 0], [0, 0, 0, 0, ' + "1" * 400 + "]]}")
    cases = [("check theorem1 --dh 100000000", "d_h = 100000000"), ("check theorem1 --H 1000000", "H = 1000000"),
             ("check assumption1 --data {d}/bomb.npz", "bomb.npz (contexts"),
             ("check assumption1 --data {d}/notnpy.npz", "'contexts.npy' is not a valid .npy"),
             ("check assumption1 --data {d}/extra.npz", "'readme.txt' is not an .npy"),
             ("check dana_thm2 --data {d}/digits.json", "not 1: give probabilities that sum to 1")]
    for case, needle in cases:
        args = case.replace("{d}", str(tmp_path)).split() + ["--json"]
        p = subprocess.run([*CLI, *args], cwd=ROOT, env=ENV, capture_output=True, text=True, timeout=300,
                           preexec_fn=_limited)
        assert p.returncode == 2, (case, p.returncode, p.stderr[-1000:])
        obj = one_json(p.stdout)
        assert obj["verdict"] == "bad-input" and needle in obj["message"], (case, obj["message"])
        assert len(p.stderr.strip().splitlines()) == 1 and "Traceback" not in p.stderr
        if "budget" in obj["message"]:
            assert "above the memory budget of" in obj["message"] and "--max-memory" in obj["message"]


def test_max_memory_raises_or_lowers_the_budget(capsys):
    assert main(["check", "theorem1", "--max-memory", "100M", "--json"]) == 2
    obj = one_json(capsys.readouterr().out)
    assert "above the memory budget of 100 MiB" in obj["message"]
    assert main(["check", "theorem1", "--dh", "2000", "--json"]) == 0  # the default budget: it fits
    capsys.readouterr()
    assert main(["check", "theorem1", "--max-memory", "lots", "--json"]) == 2
    assert "--max-memory lots" in one_json(capsys.readouterr().out)["message"]


DRIVER = """
import importlib.util, os, sys
from pathlib import Path
from verifier.report import build
from verifier.cli import main

real = importlib.util.find_spec
importlib.util.find_spec = lambda name, *a: object() if name == "ray" else real(name, *a)  # Ray not needed

def report(*, out, **kw):
    how = os.environ["HOW"]
    if how == "exit":
        os._exit(1)  # as Ray's core ends a driver whose raylet died: no line, code 1
    (Path(out) / "results.json").write_text('{"summary": {"exit_code": 1}}')
    return 1

build.write_report = report
sys.exit(main(sys.argv[1:]))
"""


@pytest.mark.parametrize("how, code", [("exit", 4), ("refuted", 1)])
def test_a_ray_driver_that_ends_without_a_result_is_exit_4_with_one_line(tmp_path, how, code):
    """report --executor ray runs its driver as a child (verifier/cli/driver.py): a child that
    dies without its outcome is 4 and one line, never its own code 1; one that ends is its code."""
    p = subprocess.run([sys.executable, "-c", DRIVER, "report", "--quick", "--out", str(tmp_path), "--executor", "ray",
                        "--json"], cwd=ROOT, env={**ENV, "HOW": how}, capture_output=True, text=True, timeout=300)
    assert p.returncode == code and "Traceback" not in p.stderr, p.stderr[-2000:]
    obj = one_json(p.stdout)
    assert obj["exit_code"] == code
    if how == "exit":
        assert obj["verdict"] == "error" and "exit code 1" in obj["message"]
        assert ending_lines(p.stderr) == [f"mha-verify: error: {obj['message']}"]
