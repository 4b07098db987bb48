"""The three-paper table: the Dana/Mahdavi columns are those of their own
comparison on the same settings, and our reconstruction of Kajitsuka & Sato
is certified on all T0 sequences of each setting."""
from proofs.dana2025.comparison import SETTINGS, comparison_rows
from proofs.kajitsuka2025.cross_paper import DANA_KEYS, cross_paper_rows


def test_cross_paper_rows_small_settings():
    settings = SETTINGS[1:]
    d = cross_paper_rows(0, settings)
    dana = comparison_rows(0, settings)
    for row, drow, s in zip(d["rows"], dana["rows"], settings):
        assert row[2] == len(s[6]())
        assert row[3:3 + len(DANA_KEYS)] == [drow[dana["columns"].index(k)] for k in DANA_KEYS]
        assert row[-3] == "verified (certified)" and row[-2] > row[-1] > 0
