"""The README as a user meets it in a clone: every link it makes points to a
file of the project (nothing outside the repository, e.g. ../shared)."""
import importlib.util
import json
import re
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]


def test_readme_links_only_to_files_in_the_project():
    text = (ROOT / "README.md").read_text()
    assert "../" not in text
    for target in re.findall(r"\]\(([^)#]+)\)", text):
        if not re.match(r"[a-z]+://", target):
            assert (ROOT / target).exists(), target
    for path in re.findall(r"`((?:docs|verifier|proofs|tests|benchmarks)/[\w./-]+\.(?:py|md|json))`", text):
        assert (ROOT / path).exists() or list(ROOT.glob(f"*/{path}")), path


# -- every command line of the README is run (issue 17, item 6) ----------------------------------------------------
#: Each README command (options in [ ] expanded one at a time) and the exit code the README gives it: 0 verified,
#: 1 refuted (the last example is a certified refutation of Dana et al.'s capacity reading on that instance; report
#: --strict exits 1 on the declared findings).
RAY = 0 if importlib.util.find_spec("ray") is not None else 2  # without Ray: one line, exit 2 (README says so)
HF = 0 if importlib.util.find_spec("transformers") is not None else 2  # --hf-model without transformers: exit 2
EXPECTED = {
    "list": 0, "list --long": 0, "list --json": 0, "list --long --markdown": 0, "check --help": 0,
    "check theorem1 --H 3 --n 3 --d 5 --json": 0, "check theorem1 --H 3 --n 3 --d 5": 0, "check theorem1 --certificate c.json": 0,
    "check assumption1 --data mydata.npz": 0,
    "audit theorem1 --H 3 --n 3 --d 5 --dh 3 --seed 0": 0,
    "check dana_lemma2 --N 5 --S 2 --d 4 --H 2 --T0 8": 0,
    "check dana_corollary1 --N 6 --d 2 --dh 1 --H 2 --save-weights w.npz": 0,
    "check dana_thm1_eps0 --N 3 --d 2 --dh 1 --H 1 --dataset shared-last --T0 3 --conditionals positive": 1,
    "report": 0, "report --quick": 0, "report --thorough": 0, "report --out DIR": 0, "report --seed N": 0,
    "report --json": 0, "report --strict": 1,
    "errata dana2025 --out reports": 0, "check ks_contextual_mapping": 0, "check ks_ffn_memorization --N 100000": 0,
    "check ks_ntp_memorization --N 1000": 0, "report --executor ray": RAY,
    "report --executor ray --address ADDR": RAY, "report --executor ray --cache DIR": RAY, "errata mahdavi2024": 0, "errata mahdavi2024 --out DIR": 0,
    "check theorem1 --H 3 --n 3 --d 5 --save-weights saved.npz": 0,
    "check weights_memorize --weights saved.npz --tol 1e-6": 0,
    "check weights_rank --weights layer.pt --data mydata.npz": 0,
    "check weights_rank --hf-model vit-dir --layer 0 --data images.npz": HF,
}


def _expand(line: str) -> list[str]:
    """A synopsis ``cmd [--a] [--b | --c]``: the bare command and each option alone."""
    groups = re.findall(r"\[([^\]]+)\]", line)
    base = " ".join(re.sub(r"\[[^\]]+\]", " ", line).split())
    return [base] + [f"{base} {alt.strip()}" for g in groups for alt in g.split("|")]


def readme_commands() -> list[str]:
    """The ``mha-verify ...`` lines of the README's code blocks and inline code
    (comments dropped; ``...`` placeholders are not commands)."""
    text = (ROOT / "README.md").read_text()
    lines = [m.strip() for m in re.findall(r"^    mha-verify (.+)$", text, flags=re.M)]
    lines += re.findall(r"`mha-verify ([^`]+)`", text)
    out = []
    for line in lines:
        line = line.split("#")[0].strip()
        if "..." not in line:
            out += [c for c in _expand(line) if c not in out]
    return out


def test_every_readme_command_has_an_expected_exit_code():
    assert sorted(readme_commands()) == sorted(EXPECTED)


def _write_data(path):
    import numpy as np

    rng = np.random.default_rng(0)
    np.savez(path, contexts=rng.standard_normal((6, 3, 5)), queries=rng.standard_normal((6, 5)),
             labels=rng.standard_normal((6, 2)))


def _write_model_files(folder):
    """The README's "Your own model" inputs: a torch state dict of one layer
    (d = 5, as mydata.npz), and a ViT built from a config with random weights
    (never downloaded) with images of its size."""
    import numpy as np
    import torch

    rng = np.random.default_rng(1)
    torch.save({k: torch.from_numpy(rng.standard_normal((2, 5, 3)).astype(np.float32)) for k in ("W_Q", "W_K")},
               folder / "layer.pt")
    if importlib.util.find_spec("transformers") is None:
        return
    from transformers import ViTConfig, ViTModel

    torch.manual_seed(0)
    ViTModel(ViTConfig(hidden_size=32, num_hidden_layers=1, num_attention_heads=4, intermediate_size=64,
                       image_size=16, patch_size=8), add_pooling_layer=False).save_pretrained(folder / "vit-dir")
    np.savez(folder / "images.npz", pixel_values=rng.standard_normal((6, 3, 16, 16)).astype(np.float32))


def test_readme_commands_run_with_the_readme_s_exit_codes(tmp_path, monkeypatch, capsys):
    """In-process (``verifier.cli.main``) in a scratch folder, with mydata.npz
    generated.  ``report`` runs the CLI with ``write_report`` stubbed (the quick
    report itself is built, twice, by tests/verifier/report/test_report.py): the
    README's options reach it."""
    import numpy as np

    from verifier.cli import main
    from verifier.report import build

    monkeypatch.chdir(tmp_path)
    _write_data(tmp_path / "mydata.npz")
    _write_model_files(tmp_path)
    capsys.readouterr()
    calls = []

    def fake_report(*, out, mode, seed, argv=None, summary_stream=None, **kw):
        Path(out).mkdir(parents=True, exist_ok=True)
        (Path(out) / "results.json").write_text('{"summary": {}}')
        calls.append((str(out), mode, seed))
        return 1 if kw.get("strict") else 0  # today's committed report: declared findings, refuted as printed

    monkeypatch.setattr(build, "write_report", fake_report)
    for cmd in readme_commands():
        argv = cmd.replace("ADDR", "auto").replace("DIR", str(tmp_path / "out")).replace("--seed N", "--seed 3").split()
        code = main(argv)
        out, err = capsys.readouterr()
        assert code == EXPECTED[cmd], (cmd, code, out, err)
        assert "Traceback" not in out + err, cmd
        if argv[0] == "report":
            where, mode, seed = calls[-1]
            assert mode == ("quick" if "--quick" in argv else "thorough" if "--thorough" in argv else "default")
            assert seed == (3 if "--seed" in argv else 0)
            assert where == (str(tmp_path / "out") if "--out" in argv else "reports")
        if "--json" in argv:  # stdout is one JSON object; a verdict's carries its exit code
            obj = json.loads(out)
            assert argv[0] == "list" or obj["exit_code"] == code, cmd
    saved = np.load(tmp_path / "w.npz")  # Cor. 1 is constructive: its weights are written
    assert {"e", "pos", "W_Q", "W_K", "W_V", "W_O", "W_U", "sequences", "targets"} <= set(saved.files)
