"""The README as a user meets it in a clone: every link it makes points to a
file of the project (nothing outside the repository, e.g. ../shared)."""
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
