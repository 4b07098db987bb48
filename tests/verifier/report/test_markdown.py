"""REPORT.md's table of contents: every section linked by the anchor GitHub gives its heading."""
from __future__ import annotations

import re

from verifier.report.markdown import github_slug, with_contents

DOC = """# Title

**banner**

## Findings

### 1. `dana_lemma2`: Lemma 2 is false for S = 1

### 2. `dana_lemma2`: Lemma 2's proof step (c) is false when S < d

## Statements

### Def. 1: `definition1` (verified)

```text
## not a heading: inside a code fence
```

### Figures

## Figures

### rank(Z) vs n and vs d_h
"""


def anchors(md: str) -> list[str]:
    """Every heading's anchor, as GitHub numbers repeated ones (code fences skipped)."""
    seen, out, fence = {}, [], False
    for line in md.splitlines():
        fence ^= line.startswith("```")
        m = None if fence else re.match(r"^#{1,6} +(.*?)\s*$", line)
        if m:
            out.append(github_slug(m.group(1), seen))
    return out


def test_github_slug_as_github_makes_them():
    seen = {}
    assert github_slug("Thm. 1 (eps = 0), App. A.2: `dana_thm1_eps0` (inconclusive)", seen) == \
        "thm-1-eps--0-app-a2-dana_thm1_eps0-inconclusive"
    assert github_slug("The paper's scale: Theorem 1 on named instances", seen) == \
        "the-papers-scale-theorem-1-on-named-instances"
    assert github_slug("rank(Z) vs n and vs d_h", seen) == "rankz-vs-n-and-vs-d_h"
    assert github_slug("rank(Z) vs n and vs d_h", seen) == "rankz-vs-n-and-vs-d_h-1"  # repeated: numbered


def test_contents_links_every_section_and_resolves():
    md = with_contents(DOC)
    head, _, rest = md.partition("## Contents\n")
    assert head.startswith("# Title") and "**banner**" in head and rest.index("## Findings") > 0
    toc = rest.strip("\n").split("\n\n")[0].splitlines()
    assert [re.match(r"- \[([^\]]+)\]", line).group(1) for line in toc] == ["Findings", "Statements", "Figures"]
    links = re.findall(r"\]\(#([^)]+)\)", "\n".join(toc))
    assert set(links) <= set(anchors(md))  # every link lands on a heading
    assert "#figures-1" in toc[2] and "[Figures](#figures)" in toc[1]  # the "### Figures" came first
    assert "not a heading" not in "\n".join(toc)
    assert "[1. `dana_lemma2`]" in toc[0] and "[2. `dana_lemma2`]" in toc[0] and "[Def. 1]" in toc[1]


def test_a_link_to_a_missing_heading_is_detected():
    """The check above can fail: a link whose heading is gone is not among the anchors."""
    md = with_contents(DOC).replace("### Def. 1: `definition1` (verified)", "### Def. 1 renamed")
    links = re.findall(r"\]\(#([^)]+)\)", md.split("## Contents\n")[1].strip("\n").split("\n\n")[0])
    assert links
    assert not set(links) <= set(anchors(md))


def test_a_document_without_sections_is_left_alone():
    assert with_contents("# Title\n\ntext\n") == "# Title\n\ntext\n"
