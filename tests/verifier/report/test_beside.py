"""The paper beside ours (verifier/report/beside.py): Tables 1 and 3 are compared with the
paper's cells - pass / FAIL, and the count of cells as the paper's - only from a run that passed
its own power check; from any other run the comparison is withheld as not decided (issue 35)."""
from __future__ import annotations

import pytest

from verifier.report.beside import PAPER_CELLS, beside_markdown, passed_power


def _row(eid: str, outcome: str | None, *, flip: int = 0) -> dict:
    """A stored table row whose cells are the paper's, the first ``flip`` of them flipped."""
    cells: dict = {}
    for i, ((name, a), theirs) in enumerate(sorted(PAPER_CELLS[eid].items())):
        mine = {"holds": "fails", "fails": "holds"}[theirs] if i < flip else theirs
        cells.setdefault(name, {})[a] = {"status": mine, "basis": "certified exact"}
    row = {"status": "inconclusive" if outcome != "passed" else "not reproduced", "measured": {"cells": cells}}
    if outcome is not None:
        row["power"] = {"outcome": outcome, "checks": []}
    return row


def _table(lines: list[str], eid: str) -> tuple[str, list[str]]:
    summary = next(line for line in lines if line.startswith(f"| `{eid}` |"))
    start = lines.index(f"**{eid}: ours (paper)**")
    end = next(i for i in range(start + 1, len(lines)) if lines[i].startswith(("**", "###")))
    return summary, lines[start:end]


@pytest.mark.parametrize("eid", ["table1", "table3"])
@pytest.mark.parametrize("outcome", ["failed", "not measured", None])
def test_no_pass_fail_from_a_run_that_failed_its_power_check(eid, outcome):
    lines = beside_markdown({eid: _row(eid, outcome, flip=3)})
    summary, grid = _table(lines, eid)
    assert "not decided" in summary and "cells as the paper's" not in summary
    assert "hold" not in summary.split("|")[4]  # no count of holding / failing cells either
    body = "\n".join(grid)
    assert "without a pass/fail mark" in body
    assert ", pass)" not in body and ", FAIL)" not in body
    assert "(paper: " in body  # the cells are still shown beside the paper's


@pytest.mark.parametrize("eid", ["table1", "table3"])
def test_a_powered_run_is_compared_cell_by_cell(eid):
    total = len(PAPER_CELLS[eid])
    lines = beside_markdown({eid: _row(eid, "passed", flip=3)})
    summary, grid = _table(lines, eid)
    assert f"{total - 3} of {total} cells as the paper's, 3 not" in summary
    body = "\n".join(grid)
    assert body.count(", FAIL)") == 3 and body.count(", pass)") == total - 3
    assert "without a pass/fail mark" not in body


def test_only_a_passed_power_check_counts():
    assert passed_power({"power": {"outcome": "passed"}})
    for row in ({}, {"power": None}, {"power": {"outcome": "failed"}}, {"power": {"outcome": "not measured"}}):
        assert not passed_power(row)
