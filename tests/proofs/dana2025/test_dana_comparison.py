"""The comparison with Mahdavi et al. (DANA2025.md section 3), measured:
deterministic, and the numbers that carry the comparison."""
from proofs.dana2025.comparison import SETTINGS, comparison_rows


def test_small_settings_are_deterministic_and_as_expected():
    small = SETTINGS[1:]
    a, b = comparison_rows(0, settings=small), comparison_rows(0, settings=small)
    assert a == b
    rows = {r[1]: dict(zip(a["columns"], r)) for r in a["rows"]}
    exp6 = rows["Exp. 6 code (all bigrams)"]
    assert exp6["Dana claim H d_h + d"] == exp6["Dana route certified"] == 42
    assert exp6["Mahdavi count H(r-1)+1"] == 1 and exp6["plotted 'previous' H(d_h-1)+1"] == 21
    distinct = rows["distinct last tokens"]
    assert distinct["Dana route certified"] == 24 and distinct["Mahdavi count H(r-1)+1"] == 13
    d2 = rows["common last token (D2)"]
    assert d2["Dana route certified"] == 2 < d2["Dana claim H d_h + d"] == 3
