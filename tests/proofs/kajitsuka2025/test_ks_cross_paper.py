"""The three-paper table: the Dana/Mahdavi columns are those of their own
comparison on the same settings, and our reconstruction of Kajitsuka & Sato
is certified on all T0 sequences of each setting."""
from proofs.dana2025.comparison import SETTINGS, comparison_rows
from proofs.kajitsuka2025.cross_paper import DANA_KEYS, PARAMETER_CONVENTION, cross_paper_rows


def test_cross_paper_rows_small_settings():
    settings = SETTINGS[1:]
    d = cross_paper_rows(0, settings)
    dana = comparison_rows(0, settings)
    for row, drow, s in zip(d["rows"], dana["rows"], settings):
        assert row[2] == len(s[6]())
        assert row[3:3 + len(DANA_KEYS)] == [drow[dana["columns"].index(k)] for k in DANA_KEYS]
        assert row[-3] == "verified (certified)" and row[-2] > row[-1] > 0


def test_one_parameter_convention_stated_and_applied():
    """Issue 32: the table states its one convention, and each column follows it (dense counts at the
    widths each matrix reads and writes): Dana d(S + 2N + 4 d_h H), Mahdavi H(2 d d_h + d) + H d + d,
    KS with its FFN's first layer reading the D = d + 2 wide stream."""
    settings = SETTINGS[3:]  # common last token: N = 3, S = 2, d = 2, d_h = 1, H = 1
    d = cross_paper_rows(0, settings)
    assert PARAMETER_CONVENTION in d["notes"]
    (_label, H, dd, d_h, S, N, _), row = settings[0], d["rows"][0]
    dana, mahdavi = (int(x) for x in row[d["columns"].index("parameters Dana / Mahdavi")].split(" / "))
    assert dana == dd * (S + 2 * N + 4 * d_h * H) and mahdavi == H * (2 * dd * d_h + dd) + H * dd + dd
    P, beyond = row[-2], row[-1]
    assert P - beyond == N * dd + S  # the token and position tables
    assert beyond > 4 * (dd + 2)  # the attention (4 D) and the FFN lie beyond them
