"""The report's cache serves only what it can vouch for: an entry whose key,
inputs, environment, digest or unit do not match is recomputed and listed,
never served; a valid JSON of another shape is a mismatch, not a crash; an
error is never kept; a failed write is one warning line and the run goes on;
entries are readable by the folder's group."""
from __future__ import annotations

import errno
import io
import json
import os
import stat

import pytest

from verifier.cli import main
from verifier.report import build as report
from verifier.report import cache as cache_mod
from verifier.report import sweep
from verifier.report.cache import UnitCache, cached_map, digest, environment, unit_key
from verifier.report.environment import strip_volatile
from verifier.report.executor import LocalExecutor
from verifier.statements import registry

SIDS = ["lemma1", "lemma2", "dana_thm2"]  # dana_thm2's default instance: a certified refutation


def plain(runs) -> str:
    return json.dumps(strip_volatile(runs), sort_keys=True)


@pytest.fixture(scope="module")
def uncached():
    return sweep.run_statements(SIDS, seed=0, count=1)[0]


@pytest.fixture
def filled(tmp_path, uncached):
    """A cache holding the three units, and {statement: its file}."""
    cache = UnitCache(tmp_path / "cache")
    got, stats = sweep.run_statements(SIDS, seed=0, count=1, cache=cache)
    assert plain(got) == plain(uncached) and stats["computed"] == 3
    files = {json.loads(p.read_text())["inputs"]["statement"]: p for p in cache.root.glob("*.json")}
    assert sorted(files) == sorted(SIDS)
    return cache, files


def rerun(cache, uncached, *, computed: int):
    """The sweep again on ``cache``: the uncached rows, ``computed`` units run."""
    fresh = UnitCache(cache.root)
    got, stats = sweep.run_statements(SIDS, seed=0, count=1, cache=fresh)
    assert plain(got) == plain(uncached)
    assert stats["computed"] == computed, fresh.rejected
    return fresh


def edit(path, fn) -> None:
    entry = json.loads(path.read_text())
    fn(entry)
    path.write_text(json.dumps(entry))


def test_a_clean_cache_is_served_whole(filled, uncached):
    cache, _ = filled
    assert rerun(cache, uncached, computed=0).rejected == []


def test_an_edited_verdict_is_recomputed_never_served(filled, uncached):
    cache, files = filled

    def flip(e):
        e["result"]["evidence"]["verdict"] = e["result"]["record"]["verdict"] = "verified"

    assert json.loads(files["dana_thm2"].read_text())["result"]["evidence"]["verdict"] == "refuted"
    edit(files["dana_thm2"], flip)
    fresh = rerun(cache, uncached, computed=1)
    (rej,) = fresh.rejected
    assert rej["file"] == files["dana_thm2"].name and "dana_thm2" in rej["unit"] and "digest" in rej["reason"]
    assert json.loads(files["dana_thm2"].read_text())["result"]["evidence"]["verdict"] == "refuted"  # healed
    assert rerun(cache, uncached, computed=0).rejected == []


def test_an_edit_with_its_digest_recomputed_is_caught_by_the_unit_check(filled, uncached):
    """The evidence says "verified", its row still "refuted", the digest made to match."""
    cache, files = filled

    def forge(e):
        e["result"]["evidence"]["verdict"] = "verified"
        e["digest"] = digest(e["result"])

    edit(files["dana_thm2"], forge)
    (rej,) = rerun(cache, uncached, computed=1).rejected
    assert "not its unit's" in rej["reason"] and "'refuted'" in rej["reason"]


def test_two_swapped_files_are_both_recomputed(filled, uncached):
    cache, files = filled
    a, b = files["lemma1"].read_bytes(), files["lemma2"].read_bytes()
    files["lemma1"].write_bytes(b)
    files["lemma2"].write_bytes(a)
    fresh = rerun(cache, uncached, computed=2)
    assert {r["file"] for r in fresh.rejected} == {files["lemma1"].name, files["lemma2"].name}
    assert all("another unit's" in r["reason"] for r in fresh.rejected)


def test_a_key_renamed_with_its_file_is_still_another_unit(filled, uncached):
    """lemma1's entry moved to lemma2's file with its key rewritten: its inputs are lemma1's."""
    cache, files = filled
    k2 = files["lemma2"].stem
    edit(files["lemma1"], lambda e: e.update(key=k2))
    files["lemma1"].replace(files["lemma2"])
    (rej,) = rerun(cache, uncached, computed=2).rejected
    assert "inputs are another unit's" in rej["reason"] and "lemma1" in rej["reason"]


@pytest.mark.parametrize("content", [
    "[]", "5", '{"result": 5}', '{"key": "x", "result": {"record": {}}}',
    "not json", '{"schema": 2, "key": 1, "inputs": 1, "environment": 1, "digest": 1, "result": 1',
])
def test_a_file_of_another_shape_is_a_mismatch_not_a_crash(filled, uncached, content):
    cache, files = filled
    files["lemma2"].write_text(content)
    (rej,) = rerun(cache, uncached, computed=1).rejected
    assert rej["file"] == files["lemma2"].name


def test_a_link_to_a_device_or_a_huge_file_is_never_read(filled, uncached, monkeypatch):
    cache, files = filled
    files["lemma2"].unlink()
    files["lemma2"].symlink_to("/dev/zero")  # read whole, it would never end
    assert [r["reason"] for r in rerun(cache, uncached, computed=1).rejected] == ["not a regular file"]
    assert not files["lemma2"].is_symlink()  # replaced by the entry computed
    monkeypatch.setattr(cache_mod, "MAX_ENTRY_BYTES", 100)
    fresh = rerun(cache, uncached, computed=3)
    assert len(fresh.rejected) == 3 and all("above the 100 an entry may hold" in r["reason"] for r in fresh.rejected)


def test_a_well_formed_entry_whose_result_has_another_shape_is_a_mismatch(filled, uncached):
    """Key, inputs, environment and digest all right: the result is not a unit's result."""
    cache, files = filled
    for result in ({"record": 1, "evidence": 2}, [1, 2], {"record": {}, "evidence": {}}, "verified"):
        edit(files["lemma2"], lambda e: e.update(result=result, digest=digest(result)))
        (rej,) = rerun(cache, uncached, computed=1).rejected
        assert "another shape" in rej["reason"] or "not its unit's" in rej["reason"]


@pytest.mark.parametrize("variable, value", [("ATEN_CPU_CAPABILITY", "default"), ("MKL_CBWR", "AVX512"),
                                             ("MHA_VERIFY_BACKEND", "torch-cpu")])
def test_an_entry_of_another_backend_or_kernels_is_not_served(filled, uncached, monkeypatch, variable, value):
    """Computed under another setting: its key is another (a miss); moved under this
    setting's key, it is rejected, naming what differs."""
    cache, files = filled
    with monkeypatch.context() as m:
        m.setenv(variable, value)
        other = environment()
        got, stats = sweep.run_statements(SIDS, seed=0, count=1, cache=UnitCache(cache.root))
        assert stats["computed"] == 3  # nothing of the other setting served
    assert len(cache.keys()) == 6
    moved = next(p for p in cache.root.glob("*.json") if json.loads(p.read_text())["environment"] == other
                 and json.loads(p.read_text())["inputs"]["statement"] == "lemma2")
    edit(moved, lambda e: e.update(key=files["lemma2"].stem))  # under this setting's key
    moved.replace(files["lemma2"])
    (rej,) = rerun(cache, uncached, computed=1).rejected
    assert "another environment" in rej["reason"] and value in rej["reason"]


def test_the_key_covers_inputs_code_backend_kernels_and_versions(monkeypatch):
    u = {"statement": "lemma2", "options": {"H": 1}}
    base = environment()
    assert set(base) == {"code", "code_roots", "backend", "kernels", "versions"}
    keys = {unit_key(u)}
    for field, value in (("code", "0" * 64), ("backend", "torch-cpu"),
                         ("kernels", dict(base["kernels"], ATEN_CPU_CAPABILITY="avx512")),
                         ("versions", dict(base["versions"], torch="0.0"))):
        keys.add(unit_key(u, env=dict(base, **{field: value})))
    keys.add(unit_key(u, roots=("verifier", "proofs", "tests")))
    keys.add(unit_key(u, env=environment(backend=False)))  # an experiment: its device is in its inputs
    assert len(keys) == 7


def test_the_fingerprint_covers_every_folder_named(tmp_path, monkeypatch):
    for folder in ("verifier", "tests"):
        (tmp_path / folder).mkdir()
        (tmp_path / folder / "a.py").write_text("x = 1\n")
    monkeypatch.setattr(cache_mod, "ROOT", tmp_path)
    cache_mod.code_fingerprint.cache_clear()
    try:
        before = cache_mod.code_fingerprint(("verifier", "tests"))
        only = cache_mod.code_fingerprint(("verifier",))
        (tmp_path / "tests" / "a.py").write_text("x = 2\n")
        cache_mod.code_fingerprint.cache_clear()
        assert cache_mod.code_fingerprint(("verifier", "tests")) != before
        assert cache_mod.code_fingerprint(("verifier",)) == only
    finally:
        cache_mod.code_fingerprint.cache_clear()


def test_the_soundness_sweep_keys_its_units_by_benchmarks_and_tests_too(tmp_path):
    import importlib.util

    spec = importlib.util.spec_from_file_location("soundness_sweep", cache_mod.ROOT / "benchmarks" / "soundness_sweep.py")
    script = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(script)
    assert {"verifier", "proofs", "benchmarks", "tests"} <= set(script.CODE_ROOTS)
    assert script.main(["--count", "2", "--precision-every", "0", "--cache", str(tmp_path)]) == 0
    entries = [json.loads(p.read_text()) for p in tmp_path.glob("*.json")]
    assert entries and all(e["environment"]["code_roots"] == list(script.CODE_ROOTS) for e in entries)
    assert all(script.belongs(e["result"], e["inputs"]) is None for e in entries)
    swapped = dict(entries[0]["result"], statement="other")
    assert script.belongs(swapped, entries[0]["inputs"])


def test_an_error_is_never_kept(tmp_path, uncached, monkeypatch):
    """A checker that raised (a transient failure, memory running out) is computed again."""
    registry.load_all()

    def broken(instance, **kw):
        raise MemoryError("transient")

    cache = UnitCache(tmp_path)
    with monkeypatch.context() as m:
        m.setattr(registry.REGISTRY["lemma2"], "check", broken)
        got, _ = sweep.run_statements(SIDS, seed=0, count=1, cache=cache)
        assert got["lemma2"]["audit"]["verdict"] == "error"
    assert len(cache.keys()) == 2
    rerun(cache, uncached, computed=1)


def test_a_failed_write_is_one_warning_and_the_run_goes_on(tmp_path, uncached, monkeypatch, capsys):
    def full(fd, folder):
        raise OSError(errno.ENOSPC, "No space left on device")

    monkeypatch.setattr(cache_mod, "_share_with_group", full)
    cache = UnitCache(tmp_path / "cache")
    got, stats = sweep.run_statements(SIDS, seed=0, count=1, cache=cache)
    assert plain(got) == plain(uncached) and stats["computed"] == 3
    err = capsys.readouterr().err.strip().splitlines()
    assert len(err) == 1 and "No space left on device" in err[0] and err[0].startswith("mha-verify: warning: ")
    assert cache.write_error and cache.keys() == set() and not list(cache.root.glob(".*"))


def test_entries_are_readable_by_the_folder_s_group(tmp_path):
    cache = UnitCache(tmp_path)
    cache.put({"x": 1}, {"y": 2})
    (path,) = tmp_path.glob("*.json")
    st = path.stat()
    assert stat.S_IMODE(st.st_mode) == 0o640 and st.st_gid == tmp_path.stat().st_gid
    assert cache.get({"x": 1}) == {"y": 2}


def test_cached_map_with_inputs_of_any_json(tmp_path):
    cache = UnitCache(tmp_path)
    out, stats = cached_map(LocalExecutor(), abs, [-1, -2], ["a", "b"], cache)
    assert out == [1, 2] and stats == {"cached": 0, "computed": 2}
    out, stats = cached_map(LocalExecutor(), abs, [-1, -2], ["a", "b"], cache, check=lambda r, u: "no" if r == 2 else None)
    assert out == [1, 2] and stats == {"cached": 1, "computed": 1} and len(cache.rejected) == 1


def test_an_empty_cache_folder_name_is_bad_input(tmp_path, capsys):
    assert main(["report", "--quick", "--out", str(tmp_path), "--cache", "", "--json"]) == 2
    out, err = capsys.readouterr()
    assert json.loads(out)["verdict"] == "bad-input" and "--cache" in err and len(err.splitlines()) == 1
    assert not list(tmp_path.iterdir())
    with pytest.raises(ValueError):
        UnitCache("")


def test_a_report_from_a_tampered_cache_is_the_report_without_one(tmp_path, uncached):
    """The cache filled, one verdict flipped, two files swapped: the report is byte for
    byte the uncached one, and run.json lists the three entries recomputed."""
    cache = UnitCache(tmp_path / "cache")
    sweep.run_statements(SIDS, seed=0, count=1, cache=cache)
    files = {json.loads(p.read_text())["inputs"]["statement"]: p for p in cache.root.glob("*.json")}
    edit(files["dana_thm2"], lambda e: e["result"]["evidence"].update(verdict="verified"))
    a, b = files["lemma1"].read_bytes(), files["lemma2"].read_bytes()
    files["lemma1"].write_bytes(b)
    files["lemma2"].write_bytes(a)
    codes = {}
    for name, c in (("plain", None), ("cached", cache.root)):
        codes[name] = report.write_report(out=tmp_path / name, mode="quick", seed=0, statements=SIDS, quiet=True,
                                          summary_stream=io.StringIO(), cache=c)
    for f in ("results.json", "REPORT.md", "index.html"):
        assert (tmp_path / "cached" / f).read_bytes() == (tmp_path / "plain" / f).read_bytes(), f
    assert codes["cached"] == codes["plain"]
    facts = json.loads((tmp_path / "cached" / "run.json").read_text())
    assert len(facts["cache"]["rejected"]) == 3 and facts["cache"]["write_error"] is None
    assert facts["units"] == {"cached": 0, "computed": 3, "units": 3}
    assert os.path.isdir(cache.root)
