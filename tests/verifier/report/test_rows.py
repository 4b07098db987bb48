"""The status of a statement's row: certified, numerical and vacuous passes."""
from verifier.report.rows import is_vacuous, row_status


def _row(*instances):
    return {"id": "appendixB2", "implemented": True, "controls": [{"verdict": "refuted", "rejected": True}],
            "instances": [dict(verdict=v, certified=c, method=m) for v, c, m in instances]}


VACUOUS = ("verified", False, "vacuous: no induction step")


def test_vacuous_passes_count_neither_way():
    assert is_vacuous({"method": VACUOUS[2]}) and not is_vacuous({"method": "arb balls"})
    assert row_status(_row(("verified", True, "arb balls"), VACUOUS)) == "verified"
    assert row_status(_row(("verified", True, "arb balls"), ("verified", False, "float64"))) == "verified (numerical)"
    # only vacuous passes: nothing was certified, so never a plain "verified"
    assert row_status(_row(VACUOUS, VACUOUS)) == "verified (numerical)"
    assert row_status(_row(("verified", True, "arb balls"), ("refuted", True, "arb balls"))) == "refuted"
