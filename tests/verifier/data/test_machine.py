"""verifier/data/machine.py: the CPU's model name, one reading for run.json and the campaign's provenance."""
from __future__ import annotations

from pathlib import Path

from verifier.data import machine


def test_the_model_name_line_is_read(monkeypatch, tmp_path):
    info = tmp_path / "cpuinfo"
    info.write_text("processor\t: 0\nmodel name\t: Some CPU 9000 @ 3.0GHz\nflags\t: x\n")
    real = Path.read_text
    monkeypatch.setattr(Path, "read_text", lambda self, *a, **k: real(info if str(self) == "/proc/cpuinfo" else self,
                                                                      *a, **k))
    assert machine.cpu_model() == "Some CPU 9000 @ 3.0GHz"


def test_without_cpuinfo_platform_names_it(monkeypatch):
    def missing(self, *a, **k):
        raise OSError("no /proc here")

    monkeypatch.setattr(Path, "read_text", missing)
    monkeypatch.setattr(machine.platform, "processor", lambda: "")
    monkeypatch.setattr(machine.platform, "machine", lambda: "x86_64")
    assert machine.cpu_model() == "x86_64"
