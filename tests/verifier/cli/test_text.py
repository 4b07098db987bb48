"""``check`` and ``audit`` as a person reads them: the report's rounding, no JSON quoting or Python reprs,
a list of records as a small aligned table, each certificate under its kind."""
from __future__ import annotations

import json
import re

import pytest

from verifier.cli import main
from verifier.cli.text import MAX_ROWS, certificate_lines, table_lines, value_text


def test_values_without_quotes_rounded_as_the_report_rounds():
    assert value_text(["< 1e-12", "random", True, None]) == "[< 1e-12, random, true, -]"
    assert value_text(0.5161816387744848) == "0.5162"
    assert value_text(7.4e-17, "max |yhat - y| <=") == "< 1e-12"  # rounding noise as its class
    assert value_text("1" * 40 + "/3").startswith("~3.704e+38 (exact rational")
    assert value_text("a reason " * 30) == "a reason " * 30  # a text is never cut
    assert value_text(list(range(100))).endswith("... (100 items: --json)")


def test_records_as_an_aligned_table_with_the_rest_counted():
    rows = [{"eta": 10.0 ** -k, "lambda": 4 * k} for k in range(1, MAX_ROWS + 4)]
    lines = table_lines({"per eta": rows, "grid [H, n]": [[1, 2], [3, 4]]})
    assert lines[0].strip() == "per eta" and lines[1].split() == ["eta", "lambda"]
    assert lines[2].split() == ["0.1", "4"] and lines[MAX_ROWS + 2].strip() == "... 3 more rows (--json)"
    assert lines[MAX_ROWS + 3].strip() == "grid [H, n]" and lines[MAX_ROWS + 4].split() == ["H", "n"]
    assert len({line.index("lambda") for line in lines[1:2]}) == 1


def test_a_certificate_under_its_kind():
    lines = certificate_lines({"kind": "rank(Z) = T: nonsingular minor", "k": 7, "rows": [0, 1, 2]})
    assert lines[0] == "  certificate: rank(Z) = T: nonsingular minor"
    assert [line.split()[0] for line in lines[1:]] == ["k", "rows"]


@pytest.mark.parametrize("sid", ["lemma3", "dana_prop3", "remark2", "theorem1"])
def test_audit_prints_no_json_or_repr(capsys, sid):
    """Every number of the trail and of the certificates reads as the report prints it."""
    code = main(["audit", sid])
    out = capsys.readouterr().out
    assert code == 0 and out.startswith(f"{sid}: VERIFIED")
    assert not re.search(r"""[\[{]["']|np\.|array\(|\d\.\d{9,}""", out), out
    assert "certificate: {" not in out
    main(["audit", sid, "--json"])
    assert "certificates" in json.loads(capsys.readouterr().out)  # the JSON keeps them whole
