"""Mutation testing of the certificate core with mutmut 3 (issue 9).

A loosened criterion must fail a test.  For each target module, mutmut
generates mutants (operators, comparisons, constants, ...) of every plain
function, runs the tests that call the mutated function (mutmut's own
coverage per function), and records killed / survived / timeout.  Every
survivor is either killed by a new test or listed as equivalent, with a
one-line reason, in ``tests/soundness/mutants_equivalent.json`` (or matched
by one of the :data:`RULES`); ``tests/soundness/MUTANTS.md`` is the summary.

It runs in a scratch copy (``git worktree``) so the working tree is never
mutated, one module at a time (each with its own test selection), niced:

    pip install "mutmut>=3.3,<4"     # the dev extra
    nice -n 10 python benchmarks/mutation.py                 # every target
    nice -n 10 python benchmarks/mutation.py compare rank    # some targets
    nice -n 10 python benchmarks/mutation.py --survivors rank # rerun a target's survivors only
    python benchmarks/mutation.py --summary                  # tables from the last runs

Results: ``reports/experiments/mutation/<target>.json`` (counts, survivors
with their diff) and ``summary.md``.  Not part of CI (tens of minutes).

mutmut 3 does not mutate decorated functions or classes (``@dataclass``,
``@statement``): the deciding logic lives in plain functions for that reason.
"""
from __future__ import annotations

import argparse
import ast
import functools
import io
import json
import os
import shutil
import subprocess
import sys
import time
import tokenize
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
OUT = ROOT / "reports" / "experiments" / "mutation"
# one scratch per worktree: two runs sharing one would delete each other's mutants
SCRATCH = Path(os.environ.get("MUTATION_WORKDIR", f"/tmp/mha-verify-mutation-{ROOT.name}"))

T = "tests/"
SOUND = [T + "soundness/test_planted_false.py", T + "soundness/test_always_true.py",
         T + "soundness/test_issue9_reproductions.py"]
DECIDE = T + "soundness/test_decisions.py"
CLIMB = T + "verifier/arith/test_float_failures_climb.py"  # a float failure (patched) moves on: rank, sigma_min, Kruskal
# the summation-order tests (every product in 6 legal orders) and the adversarial inputs of the float path
FLOAT_ORDERS = [T + "verifier/arith/test_float_accurate.py", T + "verifier/arith/test_float_bounds_adversarial.py",
                T + "verifier/arith/test_float_bounds_orders.py", T + "verifier/arith/test_float_certificates_orders.py"]
# target -> (module, tests that exercise it)
TARGETS: dict[str, tuple[str, list[str]]] = {
    "compare": ("verifier/arith/compare.py", [T + "verifier/arith/test_compare.py", T + "verifier/arith/test_compare_pinned.py",
                                              T + "verifier/arith/test_singular_values.py"] + SOUND[:1]),
    "balls": ("verifier/arith/balls.py", [T + "verifier/arith/test_balls.py", T + "verifier/arith/test_balls_pinned.py", T + "verifier/arith/test_rank.py",
                                          T + "verifier/arith/test_singular_values.py"]),
    "exact": ("verifier/arith/exact.py", [T + "verifier/arith/test_exact.py", T + "verifier/arith/test_exact_pinned.py", T + "verifier/arith/test_null_vectors.py",
                                          T + "proofs/mahdavi2024/test_claim1_fit_one_head.py"] + SOUND[:1]),
    "rank": ("verifier/arith/rank.py", [DECIDE, T + "verifier/arith/test_rank.py", T + "verifier/arith/test_rank_float.py",
                                        T + "verifier/arith/test_rank_pinned.py", CLIMB]
             + SOUND[:2]),
    "null_vectors": ("verifier/arith/null_vectors.py", [T + "verifier/arith/test_null_vectors.py",
                                                        T + "verifier/arith/test_null_vectors_pinned.py"]),
    "singular_values": ("verifier/arith/singular_values.py", [T + "verifier/arith/test_singular_values.py",
                                                              T + "verifier/arith/test_singular_values_pinned.py",
                                                              T + "proofs/mahdavi2024/test_appendixB2_finite_scaling.py",
                                                              T + "proofs/mahdavi2024/test_lemma5_weyl_rank.py", CLIMB]
                        + SOUND[:1]),
    "kruskal": ("verifier/arith/kruskal.py", [DECIDE, T + "verifier/arith/test_kruskal.py", T + "verifier/arith/test_kruskal_pinned.py",
                                              T + "proofs/mahdavi2024/test_assumption1_query_kruskal_rank.py", CLIMB]
                + SOUND[:1]),
    "independence": ("verifier/arith/independence.py", [T + "verifier/arith/test_independence.py",
                                                        T + "verifier/arith/test_independence_pinned.py",
                                                        T + "verifier/arith/test_independence_gram_adversarial.py",
                                                        T + "verifier/arith/test_robustness_screen_overwrite.py",
                                                        T + "verifier/arith/test_gram_blocks.py",
                                                        T + "verifier/arith/test_kruskal.py",
                                                        T + "verifier/arith/test_kruskal_pinned.py",
                                                        T + "verifier/arith/test_rank_float.py"] + SOUND[:1]),
    # the batched Gram certificates (issue 38): against exact rationals in every summation order
    "gram_blocks": ("verifier/arith/gram_blocks.py", [T + "verifier/arith/test_gram_blocks.py",
                                                      T + "verifier/arith/test_independence_gram_adversarial.py",
                                                      T + "proofs/mahdavi2024/test_assumption2_context_rank.py"]),
    "rank_caps": ("verifier/arith/rank_caps.py", [DECIDE, T + "verifier/arith/test_rank_caps_pinned.py", T + "proofs/mahdavi2024/test_proposition1_rank_induction.py",
                                                  T + "proofs/mahdavi2024/test_theorem1_memorization.py"] + SOUND[:2]),
    "float_certificates": ("verifier/arith/float_certificates.py", [T + "verifier/arith/test_float_certificates.py",
                                                                    T + "verifier/arith/test_rank_float.py",
                                                                    T + "verifier/arith/test_float_certificates_pinned.py",
                                                                    T + "verifier/arith/test_float_certificates_adversarial.py",
                                                                    T + "verifier/arith/test_float_failures_climb.py",
                                                                    T + "verifier/arith/test_inverse_first.py"]
                           + FLOAT_ORDERS + SOUND[:1]),
    "mha_balls": ("verifier/model/mha_balls.py", [T + "verifier/model/test_mha_balls.py", T + "verifier/model/test_mha_balls_pinned.py",
                                                  T + "proofs/mahdavi2024/test_claim2_fit_and_saturate.py",
                                                  T + "proofs/mahdavi2024/test_step2_linear_readout.py"]),
    # the whole float path (issue 17): each target with the summation-order tests (tests/summation_orders.py)
    "float_bounds": ("verifier/arith/float_bounds.py", FLOAT_ORDERS + [T + "verifier/arith/test_float_certificates.py",
                                                                       T + "verifier/arith/test_check_ieee_adversarial.py",
                                                                       T + "verifier/model/test_mha_float.py"]),
    "float_accurate": ("verifier/arith/float_accurate.py", FLOAT_ORDERS + [T + "verifier/arith/test_float_accurate_adversarial.py",
                                                                           T + "verifier/model/test_mha_float.py"]),
    "float_exp": ("verifier/arith/float_exp.py", FLOAT_ORDERS + [T + "verifier/arith/test_float_exp_adversarial.py",
                                                                 T + "verifier/model/test_mha_float.py"]),
    "backend": ("verifier/arith/backend.py", FLOAT_ORDERS + [T + "verifier/arith/test_float_certificates.py",
                                                             T + "verifier/arith/test_float_exp_adversarial.py",
                                                             T + "verifier/arith/test_backend_adversarial.py",
                                                             T + "verifier/arith/test_inverse_first.py",
                                                             T + "verifier/model/test_mha_float.py"]),
    "robustness_screen": ("verifier/arith/robustness_screen.py", FLOAT_ORDERS + [T + "verifier/arith/test_robustness_screen.py",
                                                                                 T + "verifier/arith/test_robustness_screen_adversarial.py",
                                                                                 T + "verifier/arith/test_robustness_screen_tight_adversarial.py",
                                                                                 T + "verifier/arith/test_robustness_screen_overwrite.py",
                                                                                 T + "verifier/arith/test_rank_float_orders.py"]),
    # what a user's number means and the certificates over its intervals (issue 31)
    "precision": ("verifier/data/precision.py", [T + "verifier/data/test_precision.py",
                                                 T + "verifier/data/test_precision_mutants.py",
                                                 T + "soundness/test_data_precision.py"]),
    "files": ("verifier/data/files.py", [T + "verifier/data/test_files.py", T + "verifier/data/test_files_mutants.py",
                                         T + "verifier/data/test_instances.py", T + "verifier/cli/test_bad_inputs.py"]),
    "given": ("verifier/data/given.py", [T + "verifier/data/test_precision.py", T + "verifier/data/test_given_mutants.py",
                                         T + "verifier/data/test_instances.py",
                                         T + "proofs/mahdavi2024/test_given_values.py"]),
    "box_rank": ("verifier/arith/box_rank.py", [T + "verifier/arith/test_box_rank_mutants.py",
                                                T + "verifier/arith/test_box_rank_witness_condition.py",
                                                T + "verifier/arith/test_box_rank.py",
                                                T + "verifier/arith/test_box_subsets.py",
                                                T + "soundness/test_data_precision.py"]),
    "box_subsets": ("verifier/arith/box_subsets.py", [T + "verifier/arith/test_box_subsets_fields.py",
                                                      T + "verifier/arith/test_box_subsets.py",
                                                      T + "soundness/test_data_precision.py",
                                                      T + "proofs/mahdavi2024/test_assumption1_query_kruskal_rank.py"]),
    "at_precision": ("verifier/statements/at_precision.py", [T + "verifier/statements/test_at_precision.py",
                                                             T + "proofs/mahdavi2024/test_assumption1_query_kruskal_rank.py",
                                                             T + "proofs/mahdavi2024/test_assumption2_context_rank.py",
                                                             T + "soundness/test_data_precision.py"]),
    # the deciding lines of the proofs (plain functions of these modules)
    "lemma4": ("proofs/mahdavi2024/lemma4_softmax_saturation.py",
               [T + "proofs/mahdavi2024/test_lemma4_softmax_saturation.py"] + SOUND[:1]),
    "appendixB2": ("proofs/mahdavi2024/appendixB2_finite_scaling.py",
                   [T + "proofs/mahdavi2024/test_appendixB2_finite_scaling.py",
                    T + "proofs/mahdavi2024/test_appendixB2_pinned.py"] + SOUND[2:]),
    "proposition1": ("proofs/mahdavi2024/proposition1_rank_induction.py",
                     [DECIDE, T + "proofs/mahdavi2024/test_proposition1_rank_induction.py",
                      T + "proofs/mahdavi2024/test_proposition1_pinned.py"] + SOUND[:2]),
    "theorem1": ("proofs/mahdavi2024/theorem1_memorization.py",
                 [DECIDE, T + "proofs/mahdavi2024/test_theorem1_memorization.py",
                  T + "proofs/mahdavi2024/test_theorem1_pinned.py"] + SOUND),
    "step2": ("proofs/mahdavi2024/step2_linear_readout.py",
              [T + "proofs/mahdavi2024/test_step2_linear_readout.py", T + "proofs/mahdavi2024/test_step2_pinned.py",
               T + "proofs/mahdavi2024/test_appendixC_skip_connection.py"]),
    "proposition2": ("proofs/mahdavi2024/proposition2_shared_context_cap.py",
                     [DECIDE, T + "proofs/mahdavi2024/test_proposition2_shared_context_cap.py",
                              T + "proofs/mahdavi2024/test_proposition2_pinned.py"]),
    "proposition5": ("proofs/mahdavi2024/proposition5_sum_constant_cap.py",
                     [DECIDE, T + "proofs/mahdavi2024/test_proposition5_sum_constant_cap.py",
                      T + "proofs/mahdavi2024/test_proposition5_pinned.py"]),
    # Dana et al.: the checkers registered after their def (plain functions), and the plain deciding steps
    "dana_thm1_eps0": ("proofs/dana2025/thm1_exact_route.py", FLOAT_ORDERS[:1] + [
        T + "proofs/dana2025/test_dana_thm1_exact_route.py", T + "proofs/dana2025/test_dana_mutants.py",
        T + "proofs/dana2025/test_dana_thm1_pinned.py",
        T + "proofs/dana2025/test_dana_thm1_adversarial.py"]),
    "dana_route_steps": ("proofs/dana2025/route_steps.py", FLOAT_ORDERS[:1] + [
        T + "proofs/dana2025/test_dana_thm1_exact_route.py", T + "proofs/dana2025/test_dana_mutants.py"]),
    # issue 38: the sample's draw and float screen prefetched on a second core, and that core's jobs
    "subset_sample": ("verifier/arith/subset_sample.py", [T + "verifier/arith/test_subset_sample.py",
                                                          T + "verifier/arith/test_second_thread.py",
                                                          T + "verifier/arith/test_kruskal.py"]),
    "second_thread": ("verifier/arith/second_thread.py", [T + "verifier/arith/test_second_thread.py",
                                                          T + "verifier/arith/test_subset_sample.py"]),
    # the helper process (issue 38): its protocol, failures, start rule; a prefetch and a check through it
    "second_process": ("verifier/arith/second_process.py", [T + "verifier/arith/test_second_process.py"]),
    # the standalone re-checker of certificate files (issue 33): the forged corpus and its float path in every order
    "recheck": ("verifier/recheck.py", [T + "verifier/test_recheck.py", T + "verifier/test_recheck_float.py",
                                        T + "verifier/test_recheck_limits.py", T + "verifier/test_recheck_kinds.py",
                                        T + "verifier/test_recheck_exact.py"]
                + sorted(T + "verifier/" + p.name for p in (ROOT / T / "verifier").glob("test_recheck_mutants_*.py"))),
    "dana_thm2": ("proofs/dana2025/thm2_entropy_bound.py", FLOAT_ORDERS[:1] + [
        T + "proofs/dana2025/test_dana_thm1_eps_and_thm2.py", T + "proofs/dana2025/test_dana_data_precision.py",
        T + "proofs/dana2025/test_dana_mutants.py", T + "proofs/dana2025/test_dana_thm2_pinned.py",
        T + "proofs/dana2025/test_dana_thm2_adversarial.py", T + "proofs/dana2025/test_dana_issue31.py"]),
    "dana_thm2_terms": ("proofs/dana2025/thm2_terms.py", FLOAT_ORDERS[:1] + [
        T + "proofs/dana2025/test_dana_thm1_eps_and_thm2.py", T + "proofs/dana2025/test_dana_data_precision.py",
        T + "proofs/dana2025/test_dana_mutants.py", T + "proofs/dana2025/test_dana_thm2_pinned.py",
        T + "proofs/dana2025/test_dana_thm2_adversarial.py", T + "proofs/dana2025/test_dana_issue31.py"]),
    # issue 31: what a number of the second paper's data means (intervals, the simplex cut, the hypotheses)
    "sequence_reading": ("verifier/data/sequence_reading.py", [
        T + "verifier/data/test_sequence_reading_texts.py", T + "verifier/data/test_sequence_reading.py",
        T + "verifier/data/test_sequences.py",
        T + "proofs/dana2025/test_dana_data_precision.py", T + "proofs/dana2025/test_dana_issue31.py"]),
    "integers": ("verifier/data/integers.py", [T + "verifier/data/test_integers.py",
                                               T + "proofs/kajitsuka2025/test_ks_paper.py"]),
}

# tests that run the CLI in a subprocess cannot see mutmut's trampolines: deselected by name (pytest args).
# Not "-k 'not cli'": -k matches substrings of test and module names, and that deselected tests that
# merely contain "cli" (test_float_failures_climb.py, "...climbs...", "...declines...").
SUBPROCESS_TESTS = ("test_cli_gives_a_certified_verdict", "test_claim1_float_miss_is_not_a_refutation_cli",
                    "test_exit_codes_in_a_subprocess", "test_the_attack_shapes_in_a_subprocess",
                    "test_each_line_is_flushed_before_the_next_file_is_read")
NO_SUBPROCESS = ["-k", " and ".join(f"not {t}" for t in SUBPROCESS_TESTS)]

STATUS = {1: "killed", 3: "killed", 0: "survived", 5: "no tests", 33: "no tests", 34: "skipped", 35: "suspicious",
          36: "timeout", 24: "timeout", -24: "timeout", 152: "timeout", 255: "timeout", -11: "segfault",
          None: "not checked", 2: "interrupted"}


def _mutmut() -> str:
    exe = shutil.which("mutmut", path=str(Path(sys.executable).parent)) or shutil.which("mutmut")
    if not exe:
        raise SystemExit("mutmut not found: pip install 'mutmut>=3.3,<4'")
    return exe


def _scratch() -> None:
    """A fresh detached worktree of HEAD (the committed tree) at SCRATCH."""
    if SCRATCH.exists():
        subprocess.run(["git", "-C", str(ROOT), "worktree", "remove", "--force", str(SCRATCH)], check=False)
        shutil.rmtree(SCRATCH, ignore_errors=True)
    subprocess.run(["git", "-C", str(ROOT), "worktree", "add", "--detach", str(SCRATCH), "HEAD"], check=True,
                   capture_output=True)


def _config(module: str, tests: list[str]) -> str:
    """[tool.mutmut]: mutate ``module`` only (every other file copied as is)."""
    others = sorted(str(p.relative_to(SCRATCH)) for d in ("verifier", "proofs") for p in (SCRATCH / d).rglob("*.py")
                    if str(p.relative_to(SCRATCH)) != module)
    lines = ["", "[tool.mutmut]", 'paths_to_mutate = ["verifier/", "proofs/"]',
             "do_not_mutate = [" + ", ".join(json.dumps(o) for o in others) + "]",
             "tests_dir = [" + ", ".join(json.dumps(t) for t in tests + NO_SUBPROCESS) + "]", ""]
    return "\n".join(lines)


def _blob(module: str) -> str:
    """The committed module's git blob id (mutant names are stable while it is unchanged)."""
    return subprocess.run(["git", "rev-parse", f"HEAD:{module}"], cwd=ROOT, capture_output=True,
                          text=True).stdout.strip()


def stale(r: dict) -> bool:
    """A stored run whose module has changed since (its blob is not HEAD's): its counts
    describe former code, so the summary marks it and it must be run again."""
    return r.get("module_blob") != _blob(r["module"])


def _mutmut_run(module: str, tests: list[str], max_children: int, names: list[str]):
    """mutmut run in SCRATCH on ``module`` (all its mutants, or only ``names``):
    (exit codes by mutant, seconds, process output, env)."""
    pyproject = SCRATCH / "pyproject.toml"
    base = subprocess.run(["git", "show", "HEAD:pyproject.toml"], cwd=ROOT, capture_output=True, text=True).stdout
    pyproject.write_text(base + _config(module, tests))
    shutil.rmtree(SCRATCH / "mutants", ignore_errors=True)
    env = {k: v for k, v in os.environ.items() if k != "PYTHONPATH"}
    env["HYPOTHESIS_PROFILE"] = "ci"  # derandomized: a mutant's verdict does not depend on the draw
    t0 = time.perf_counter()
    proc = subprocess.run([_mutmut(), "run", "--max-children", str(max_children), *names], cwd=SCRATCH, env=env,
                          capture_output=True, text=True)
    seconds = time.perf_counter() - t0
    meta = SCRATCH / "mutants" / (module + ".meta")
    codes = json.loads(meta.read_text())["exit_code_by_key"] if meta.exists() else {}
    return codes, seconds, proc.stdout[-3000:] + proc.stderr[-3000:], env


def run_target(name: str, max_children: int, only: tuple = ()) -> dict:
    """All mutants of the target's module, or (``only``: function names) the
    mutants of those functions only (recorded as ``only`` in the json)."""
    module, tests = TARGETS[name]
    dotted = module[:-3].replace("/", ".")
    pats = [f"{dotted}.x_{f}__mutmut_*" for f in only]
    codes, seconds, output, env = _mutmut_run(module, tests, max_children, pats)
    return _results(name, codes, seconds, output, env, only)


def _results(name: str, codes: dict, seconds: float, output: str, env: dict, only: tuple = (),
             partial: bool = False) -> dict:
    module, tests = TARGETS[name]
    if only:
        codes = {k: v for k, v in codes.items() if any(k.split(".")[-1].startswith(f"x_{f}__mutmut_") for f in only)}
    if not codes or all(c is None for c in codes.values()):  # e.g. "Failed to run clean test"
        return {"target": name, "module": module, "error": output}
    counts: dict[str, int] = {}
    survivors, unchecked = [], []
    for key, code in sorted(codes.items()):
        status = STATUS.get(code, f"exit {code}")
        counts[status] = counts.get(status, 0) + 1
        if status == "not checked" and partial:
            unchecked.append(key)
        elif status in ("survived", "timeout", "suspicious", "no tests", "not checked"):
            survivors.append({"mutant": key, "status": status, "diff": _diff(module, key, env)})
    by_function: dict[str, dict[str, int]] = {}
    for key, code in codes.items():
        f = by_function.setdefault(key.split(".")[-1].rsplit("__mutmut_", 1)[0], {})
        status = STATUS.get(code, f"exit {code}")
        f[status] = f.get(status, 0) + 1
    out = {"target": name, "module": module, "module_blob": _blob(module), "tests": tests,
           "generated": len(codes), "counts": counts, "survivors": survivors, "seconds": round(seconds, 1),
           "counts_by_function": dict(sorted(by_function.items()))}
    if only:
        out["only"] = sorted(only)
    if partial:
        out["partial"] = "the run was stopped (time budget): 'not checked' mutants were never run"
        out["not_checked"] = unchecked
    return out


def _diff(module: str, key: str, env: dict) -> str:
    """The mutant's diff against the original function, read from the mutated
    module in SCRATCH/mutants (``mutmut show`` starts a process per mutant:
    minutes for a hundred survivors on a loaded machine); ``mutmut show`` if
    the function is not found there."""
    import difflib

    path = SCRATCH / "mutants" / module
    funcs = _mutant_functions(str(path), path.stat().st_mtime) if path.exists() else {}
    name = key.split(".")[-1]
    orig = name.rsplit("__mutmut_", 1)[0] + "__mutmut_orig"
    if name not in funcs or orig not in funcs:
        out = subprocess.run([_mutmut(), "show", key], cwd=SCRATCH, env=env, capture_output=True, text=True)
        return out.stdout.strip()
    a = funcs[orig].splitlines()
    b = [funcs[name].splitlines()[0].replace(name, orig, 1)] + funcs[name].splitlines()[1:]
    body = [ln for ln in difflib.unified_diff(a, b, lineterm="", n=3)][2:]
    return "\n".join([f"# {key}", f"--- {module}", f"+++ {module}", *body])


@functools.lru_cache(maxsize=8)
def _mutant_functions(path: str, mtime: float) -> dict:
    src = Path(path).read_text()
    tree = ast.parse(src)
    # the lines split once (ast.get_source_segment splits the whole file at every call: hours on a
    # module with thousands of mutants); mutmut's functions are whole lines (top level or methods)
    lines = src.splitlines()
    return {n.name: "\n".join(lines[n.lineno - 1:n.end_lineno]) for n in ast.walk(tree)
            if isinstance(n, ast.FunctionDef)}


def collect(name: str, only: tuple = ()) -> dict:
    """The results so far of a run of ``name`` that is still going or was
    stopped: mutmut's meta file in SCRATCH (the run's workdir); seconds from
    the run's start (its pyproject.toml) to the meta file's last write."""
    module, _ = TARGETS[name]
    meta = SCRATCH / "mutants" / (module + ".meta")
    codes = json.loads(meta.read_text())["exit_code_by_key"]
    seconds = meta.stat().st_mtime - (SCRATCH / "pyproject.toml").stat().st_mtime
    env = {k: v for k, v in os.environ.items() if k != "PYTHONPATH"}
    return _results(name, codes, seconds, "", env, only, partial=any(v is None for v in codes.values()))


def _functions_of(source: str) -> dict:
    """Each function's (and method's) source text by mutmut's key name: x_f, or xǁClassǁf."""
    lines = source.splitlines()

    def text(node) -> str:  # whole lines, as _mutant_functions reads them (no re-split per function)
        return "\n".join(lines[node.lineno - 1:node.end_lineno])

    out = {}
    for node in ast.parse(source).body:
        if isinstance(node, ast.FunctionDef):
            out[f"x_{node.name}"] = text(node)
        elif isinstance(node, ast.ClassDef):
            out.update({f"xǁ{node.name}ǁ{f.name}": text(f) for f in node.body if isinstance(f, ast.FunctionDef)})
    return out


def changed_functions(module: str, old_blob: str) -> list[str]:
    """mutmut's names of the functions of ``module`` whose text differs between the blob of a stored run
    and HEAD (added ones included): only their mutants were renamed or changed."""
    old = subprocess.run(["git", "cat-file", "-p", old_blob], cwd=ROOT, capture_output=True, text=True, check=True)
    new = subprocess.run(["git", "show", f"HEAD:{module}"], cwd=ROOT, capture_output=True, text=True, check=True)
    a, b = _functions_of(old.stdout), _functions_of(new.stdout)
    return sorted(f for f in b if a.get(f) != b[f])


def rerun_survivors(name: str, max_children: int, open_only: bool = False, kinds: tuple = ()) -> dict:
    """Rerun only the stored survivors of ``name`` against the committed tests (after
    new tests were written to kill them); killed ones move to the killed count.  When the
    module changed since the stored run, the functions whose text changed are run whole
    (their mutants' names shift: their stored survivors and counts are replaced) and the
    other functions' survivors are rerun as stored (their mutants are the same)."""
    r = json.loads((OUT / f"{name}.json").read_text())
    module, tests = TARGETS[name]
    changed: list[str] = []
    if r.get("module_blob") != _blob(module):
        changed = changed_functions(module, r["module_blob"])
        if r.get("only") or not r.get("module_blob"):
            raise SystemExit(f"{name}: {module} changed since a partial run: run the target again")
    equivalents = json.loads(EQUIVALENT_FILE.read_text()) if EQUIVALENT_FILE.exists() else {}

    def func(key: str) -> str:
        return key.split(".")[-1].rsplit("__mutmut_", 1)[0]

    names = [x["mutant"] for x in r["survivors"] if x["status"] in ("survived", "suspicious", "no tests")
             and func(x["mutant"]) not in changed
             and not (open_only and classify(x) != "open")
             and not (kinds and kind(classify(x, equivalents), equivalents.get(x["mutant"], "")) not in kinds)]
    if changed:
        dotted = module[:-3].replace("/", ".")
        pats = [f"{dotted}.{f}__mutmut_*" for f in changed]
        codes, seconds, output, env = _mutmut_run(module, tests, max_children, names + pats)
        fresh = {k: v for k, v in codes.items() if func(k) in changed}
        if not fresh or all(v is None for v in fresh.values()):
            raise SystemExit(f"{name}: the changed functions' mutants were not run:\n{output}")
        # the changed functions' stored survivors and counts go; their fresh results come in
        by_function = r.get("counts_by_function")
        if by_function is None:
            raise SystemExit(f"{name}: the stored run has no counts by function: run the target again")
        for f in changed:
            for status, n in by_function.pop(f, {}).items():
                r["counts"][status] -= n
                r["generated"] -= n
        r["survivors"] = [x for x in r["survivors"] if func(x["mutant"]) not in changed]
        new = _results(name, fresh, seconds, output, env)
        for status, n in new["counts"].items():
            r["counts"][status] = r["counts"].get(status, 0) + n
        r["generated"] += new["generated"]
        r["survivors"] += new["survivors"]
        r["module_blob"] = _blob(module)
        r["counts_by_function"] = {**by_function, **new["counts_by_function"]}
        r.setdefault("reruns", []).append({"changed functions run whole": changed})
    else:
        if not names:
            return r
        codes, seconds, output, _ = _mutmut_run(module, tests, max_children, names)
    if names and all(codes.get(k) is None for k in names):
        raise SystemExit(f"{name}: the rerun checked nothing:\n{output}")
    keep = []
    for x in r["survivors"]:
        status = STATUS.get(codes.get(x["mutant"]), "not checked") if x["mutant"] in names else x["status"]
        if status != x["status"]:
            r["counts"][x["status"]] -= 1
            r["counts"][status] = r["counts"].get(status, 0) + 1
            f = r.get("counts_by_function", {}).get(func(x["mutant"]))
            if f is not None:
                f[x["status"]] -= 1
                f[status] = f.get(status, 0) + 1
            r.setdefault("rerun", []).append({"mutant": x["mutant"], "was": x["status"], "now": status})
        if status == "killed":
            continue
        keep.append(dict(x, status=status))
    r["survivors"], r["tests"] = keep, tests
    r["counts"] = {k: v for k, v in r["counts"].items() if v}
    r["rerun_seconds"] = round(r.get("rerun_seconds", 0) + seconds, 1)
    return r


def killer_order(tests: list[str]) -> list[str]:
    """A target's tests, the ones written to kill mutants first (adversarial inputs, mutant and
    pinned tests), so that ``killed_by`` names the most specific test that fails."""
    first = [t for t in tests if any(w in t for w in ("adversarial", "mutants", "pinned"))]
    return first + [t for t in tests if t not in first]


def killers(name: str, tests: list[str]) -> dict:
    """For each mutant of ``name`` that a rerun turned from survived to killed:
    the first test of ``tests`` that fails with it (run in the last run's
    mutants/ directory, MUTANT_UNDER_TEST set, as mutmut runs them); stored
    as ``killed_by`` in the target's json (MUTANTS.md's input -> mutants table)."""
    r = json.loads((OUT / f"{name}.json").read_text())
    done = r.setdefault("killed_by", {})
    env = {k: v for k, v in os.environ.items() if k != "PYTHONPATH"}
    env["HYPOTHESIS_PROFILE"] = "ci"
    for x in r.get("rerun", []):
        if x["now"] != "killed" or x["mutant"] in done:
            continue
        env["MUTANT_UNDER_TEST"] = x["mutant"]
        proc = subprocess.run([sys.executable, "-m", "pytest", "-x", "-q", "--tb=no", "-rf", "-p", "no:randomly",
                               "-p", "no:cacheprovider", "--rootdir=.", *tests, *NO_SUBPROCESS],
                              cwd=SCRATCH / "mutants", env=env, capture_output=True, text=True)
        failed = [ln.split(" ", 1)[1].split(" - ")[0] for ln in proc.stdout.splitlines() if ln.startswith("FAILED ")]
        done[x["mutant"]] = failed[0] if failed else f"(not reproduced by these tests: exit {proc.returncode})"
        print(x["mutant"], "->", done[x["mutant"]], flush=True)
    (OUT / f"{name}.json").write_text(json.dumps(r, indent=1, sort_keys=True) + "\n")
    return done


def _changed_lines(diff: str) -> tuple[list[str], list[str]]:
    minus = [ln[1:].strip() for ln in diff.splitlines() if ln.startswith("-") and not ln.startswith("---")]
    plus = [ln[1:].strip() for ln in diff.splitlines() if ln.startswith("+") and not ln.startswith("+++")]
    return minus, plus


EQUIVALENT_FILE = ROOT / "tests" / "soundness" / "mutants_equivalent.json"
RULES = {  # rule -> the one-line reason every mutant it matches shares
    "message-only": "rewrites only the text of a raised exception: no verdict depends on it",
    "arb-none-is-zero": "arb(None) is arb(0) in python-flint: the same number",
    "backend-unused": "up_scale/add_up never read their backend argument b (float_bounds.py): the same floats",
    "evidence-text": "rewrites only evidence wording (a string of a dict literal, of Step / Hypothesis / conclude, or "
                     "of a reason / claim text) that the module never reads back: no verdict or number depends on it",
}


def _in_raise(diff: str) -> bool:
    """Every changed line is a ``raise X(...)`` line or a string continuation of
    one (the lines before it in the hunk, back to a ``raise``, are strings too)."""
    lines = [ln for ln in diff.splitlines() if not ln.startswith(("---", "+++", "@@", "#"))]
    if not any(ln[:1] in "+-" and ln[:1] for ln in lines):
        return False  # no changed line: nothing shown to be a message
    for i, ln in enumerate(lines):
        if ln[:1] not in "+-":
            continue
        j, text = i, ln[1:].strip()
        while not text.startswith("raise "):
            if not text.startswith(('"', "f\"", "'", "f'")) or j == 0:
                return False
            j -= 1
            text = lines[j][1:].strip()
    return True


def _tokens(code: str) -> list[tuple[int, str]]:
    """(type, text) of the tokens of a code fragment (an unclosed bracket at the end is fine)."""
    out = []
    try:
        for tok in tokenize.generate_tokens(io.StringIO(code).readline):
            if tok.type not in (tokenize.NL, tokenize.NEWLINE, tokenize.INDENT, tokenize.DEDENT, tokenize.ENDMARKER,
                                tokenize.COMMENT):
                out.append((tok.type, tok.string))
    except (tokenize.TokenError, IndentationError, SyntaxError):
        pass
    return out


TEXT_CALLS = {"Step", "Hypothesis", "conclude"}  # calls whose string arguments are the evidence's wording
TEXT_NAMES = {"reason", "claimed", "claim_text", "text", "note", "why", "title", "caption"}


def _text_context(tree: ast.AST, parents: dict, node: ast.AST) -> bool:
    """A string node is evidence text: it reaches, through f-strings, +, if-else
    and grouping, a dict literal, an argument of Step / Hypothesis / conclude,
    or an assignment to a text variable (reason, claimed, ...)."""
    while True:
        up = parents.get(node)
        if up is None:
            return False
        if isinstance(up, (ast.JoinedStr, ast.FormattedValue, ast.IfExp)) or (
                isinstance(up, ast.BinOp) and isinstance(up.op, ast.Add)):
            node = up
            continue
        if isinstance(up, ast.Dict):
            return True
        if isinstance(up, ast.keyword):
            up = parents.get(up)
        if isinstance(up, ast.Call):
            f = up.func
            name = f.id if isinstance(f, ast.Name) else f.attr if isinstance(f, ast.Attribute) else ""
            return name in TEXT_CALLS and node is not f
        if isinstance(up, ast.Assign):
            return all(isinstance(t, ast.Name) and t.id in TEXT_NAMES for t in up.targets)
        return False


def _string_only(minus: list[str], plus: list[str], source: str) -> bool:
    """Only string literals differ (token by token), each changed literal is
    evidence text (:func:`_text_context`, located in the module's source) and
    the module never reads it back (a subscript, .get, a comparison, 'in')."""
    a, b = _tokens("\n".join(minus)), _tokens("\n".join(plus))
    if len(a) != len(b) or not a:
        return False
    changed = [x for x, y in zip(a, b) if x != y]
    if not changed or any(x[0] != tokenize.STRING or y[0] != tokenize.STRING for x, y in zip(a, b) if x != y):
        return False
    if any(_fstring_code(x[1]) != _fstring_code(y[1]) for x, y in zip(a, b) if x != y):
        return False  # an f-string's {expression} changed (an operator, a condition): code, not wording
    try:
        tree = ast.parse(source)
    except SyntaxError:
        return False
    parents = {c: n for n in ast.walk(tree) for c in ast.iter_child_nodes(n)}
    lines = source.splitlines()
    where = [i + 1 for i, ln in enumerate(lines) if ln.strip() in minus]
    for _, lit in changed:
        # the literal is one piece of a string node (a piece of an implicitly concatenated string
        # is a token of its own, the node spans every piece and every line of them)
        nodes = [n for n in ast.walk(tree) if isinstance(n, (ast.Constant, ast.JoinedStr))
                 and any(getattr(n, "lineno", 0) <= w <= (getattr(n, "end_lineno", None) or 0) for w in where)
                 and lit in _tokens_of(ast.get_source_segment(source, n) or "")]
        if not nodes or not all(_text_context(tree, parents, n) for n in nodes):
            return False
        for node in nodes:  # the whole string read back anywhere in the module?
            value = node.value if isinstance(node, ast.Constant) else None
            if value is None:
                continue
            for n in ast.walk(tree):
                if isinstance(n, ast.Constant) and n.value == value:
                    up = parents.get(n)
                    if isinstance(up, (ast.Subscript, ast.Compare)) or (
                            isinstance(up, ast.Call) and isinstance(up.func, ast.Attribute) and up.func.attr == "get"):
                        return False
    return True


def _fstring_code(literal: str) -> list[str] | None:
    """The code inside an f-string literal's replacement fields, with every
    string constant in it blanked (a constant there is wording too: ``reason +
    '; '``), as AST dumps; None for a plain string (or one that does not parse
    alone)."""
    try:
        node = ast.parse(literal, mode="eval").body
    except SyntaxError:
        return None
    if not isinstance(node, ast.JoinedStr):
        return None
    out = []
    for v in node.values:
        if isinstance(v, ast.FormattedValue):
            expr = ast.parse(ast.unparse(v.value), mode="eval")  # a copy to blank
            for c in ast.walk(expr):
                if isinstance(c, ast.Constant) and isinstance(c.value, str):
                    c.value = ""
            out.append(ast.dump(expr) + f"!{v.conversion}:" + (ast.dump(v.format_spec) if v.format_spec else ""))
    return out


def _tokens_of(code: str) -> list[str]:
    """The string tokens of a string node's source (its pieces, for an implicit concatenation)."""
    return [t for kind, t in _tokens(code) if kind == tokenize.STRING]


def _rule(minus: list[str], plus: list[str], diff: str = "", source: str = "") -> str | None:
    if not (minus and plus):
        return None
    raises = [x.split("(")[0] for x in minus + plus if x.startswith("raise ")]
    if len(set(raises)) <= 1 and _in_raise(diff):
        return "message-only"
    m, p = " ".join(minus), " ".join(plus)
    if "arb(0)" in m and m.replace("arb(0)", "arb(None)") == p:  # (fmpq(None), fmpz(None) raise)
        return "arb-none-is-zero"
    for f in ("up_scale(", "add_up("):
        at = [i for i in range(len(m)) if m.startswith(f + "b,", i)]
        if any(m[:i] + f + "None," + m[i + len(f) + 2:] == p for i in at):
            return "backend-unused"
    if source and _string_only(minus, plus, source):
        return "evidence-text"
    return None


def _module_source(name: str) -> str:
    """The committed source of the module a mutant name belongs to ('' if not found)."""
    mod = name.split(".x")[0].split(".x\u01c1")[0]
    path = ROOT / (mod.replace(".", "/") + ".py")
    return path.read_text() if path.exists() else ""


def classify(survivor: dict, equivalents: dict | None = None) -> str:
    """A survivor's class: a rule of :data:`RULES`, 'listed' (a one-line reason
    in tests/soundness/mutants_equivalent.json), or 'open' (needs a test or a reason)."""
    minus, plus = _changed_lines(survivor.get("diff", ""))
    rule = _rule(minus, plus, survivor.get("diff", ""), _module_source(survivor["mutant"]))
    if rule:
        return rule
    name = survivor["mutant"]
    if equivalents is None:
        equivalents = json.loads(EQUIVALENT_FILE.read_text()) if EQUIVALENT_FILE.exists() else {}
    return "listed" if name in equivalents else "open"


KINDS = ("equivalent", "sound", "open")  # prefixes of the listed reasons


def kind(cls: str, reason: str) -> str:
    """equivalent (same behaviour: a rule, or a reason starting 'equivalent'),
    sound (behaviour changes, and the reason derives that every certificate
    still holds: for an error term, from the bound's derivation, MUTANTS.md's
    S1/S2/G/St), open (anything else, "precision" included: issue 17 abolished
    that class, a weakened error term is killed or derived sound)."""
    if cls in RULES:
        return "equivalent"
    head = reason.split(":")[0].split(" ")[0].lower()
    return head if cls == "listed" and head in KINDS else "open"


def counts(r: dict, equivalents: dict) -> dict:
    """Per-target counts: generated, killed, timeout, equivalent, sound, open, no tests (and not run)."""
    c = r["counts"]
    out = {"generated": r["generated"], "killed": c.get("killed", 0), "timeout": c.get("timeout", 0),
           **{k: 0 for k in KINDS}, "no tests": c.get("no tests", 0), "not run": c.get("not checked", 0)}
    for x in r["survivors"]:
        if x["status"] in ("survived", "suspicious"):
            cls = classify(x, equivalents)
            out[kind(cls, equivalents.get(x["mutant"], ""))] += 1
    return out


def summary() -> str:
    """Markdown: per target the counts, then every survivor and timeout not killed,
    with its class and reason (the detail behind tests/soundness/MUTANTS.md)."""
    equivalents = json.loads(EQUIVALENT_FILE.read_text()) if EQUIVALENT_FILE.exists() else {}
    cols = ["generated", "killed", "timeout", *KINDS, "no tests", "not run"]
    rows = ["| target | module | " + " | ".join(cols) + " | seconds |", "|---|---|" + "---|" * (len(cols) + 1)]
    detail = []
    for f in sorted(OUT.glob("*.json")):
        r = json.loads(f.read_text())
        if "counts" not in r:
            rows.append(f"| {r['target']} | `{r['module']}` | error |" + " |" * len(cols))
            continue
        n = counts(r, equivalents)
        secs = r["seconds"] + r.get("rerun_seconds", 0)
        scope = ((" (only " + ", ".join(r["only"]) + ")" if r.get("only") else "") + (" (stopped)" if r.get("partial") else "")
                 + (" (STALE: the module changed after this run)" if stale(r) else ""))
        rows.append(f"| {r['target']}{scope} | `{r['module']}` | " + " | ".join(str(n[k]) for k in cols)
                    + f" | {secs:.0f} |")
        for x in r["survivors"]:
            minus, plus = _changed_lines(x["diff"])
            k = classify(x, equivalents)
            if x["status"] == "timeout":
                k, reason = "timeout", "the tests ran past mutmut's CPU limit: detected, not a pass"
            else:
                reason = RULES.get(k) or equivalents.get(x["mutant"], "OPEN: needs a test or a reason")
                k = kind(k, reason)
            detail.append(f"| {r['target']} | {x['status']} | `{x['mutant'].split('.')[-1]}` | "
                          f"`{' / '.join(minus)[:80]}` -> `{' / '.join(plus)[:80]}` | {k} | {reason} |")
    text = "\n".join(rows) + "\n"
    if detail:
        text += ("\n| target | status | mutant | change | class | reason |\n|---|---|---|---|---|---|\n"
                 + "\n".join(d.replace("\n", " ") for d in detail) + "\n")
    return text


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("targets", nargs="*", help=f"default: all of {', '.join(TARGETS)}")
    ap.add_argument("--max-children", type=int, default=1)
    ap.add_argument("--summary", action="store_true", help="only write summary.md from the stored results")
    ap.add_argument("--survivors", action="store_true",
                    help="rerun only the stored survivors of the targets (after tests were added to kill them)")
    ap.add_argument("--open", action="store_true", help="with --survivors: only those not listed as equivalent")
    ap.add_argument("--kinds", default="", help="with --survivors: only survivors of these classes (comma list, "
                    "e.g. open,sound: the listed kind of each survivor before the rerun)")
    ap.add_argument("--only", default="", help="run only the mutants of these functions of the module (comma list "
                    "of function names): a partial run, recorded as such")
    ap.add_argument("--collect", action="store_true",
                    help="write the results so far of a run still going or stopped (MUTATION_WORKDIR: its workdir)")
    ap.add_argument("--killers", action="store_true",
                    help="with --survivors: record which adversarial test kills each newly killed mutant")
    args = ap.parse_args(argv)
    OUT.mkdir(parents=True, exist_ok=True)
    if args.collect:
        for name in args.targets:
            res = collect(name, tuple(args.only.split(",")) if args.only else ())
            (OUT / f"{name}.json").write_text(json.dumps(res, indent=1, sort_keys=True) + "\n")
            print(name, res.get("counts"), flush=True)
    elif not args.summary:
        _scratch()
        for name in args.targets or list(TARGETS):
            res = (rerun_survivors(name, args.max_children, args.open, tuple(args.kinds.split(",")) if args.kinds else ())
                   if args.survivors
                   else run_target(name, args.max_children, tuple(args.only.split(",")) if args.only else ()))
            (OUT / f"{name}.json").write_text(json.dumps(res, indent=1, sort_keys=True) + "\n")
            print(name, res.get("counts", res.get("error", "")[:500]), res.get("seconds"), flush=True)
            if args.survivors and args.killers:
                killers(name, killer_order(TARGETS[name][1]))
    (OUT / "summary.md").write_text(summary())
    print(summary())
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
