"""The registry's per-paper instance options, the not-checkable field and
report tables: the first paper's options stay exactly as they were."""
import pytest

from verifier.errors import NotImplementedStatement
from verifier.statements import registry
from verifier.statements.runner import build_instance


def test_first_paper_options_unchanged():
    registry.load_all()
    assert registry.instance_options("theorem1") is None
    opts = registry.REGISTRY["theorem1"].options()
    assert set(opts) == set(registry.DEFAULT_OPTIONS) and opts["n"] == 3


def test_second_paper_has_its_own_options():
    registry.load_all()
    own = registry.instance_options("dana_lemma2")
    assert own is not None and {"N", "S", "d", "H"} <= set(own.defaults)
    inst = build_instance("dana_lemma2", N=4, S=2, d=2, H=1, seed=3)
    assert (inst.N, inst.S, inst.d) == (4, 2, 2)


def test_not_checkable_is_never_a_check():
    registry.load_all()
    st = registry.REGISTRY["dana_lemma1"]
    assert not st.implemented and st.status_word.startswith("not checkable: ")
    with pytest.raises(NotImplementedStatement, match="not checkable"):
        registry.get("dana_lemma1")
    with pytest.raises(KeyError, match="not_checkable ids missing"):
        registry.register_paper("bogus", title="", citation="", catalogue={}, not_checkable={"x": "y"})


def test_table_registration_needs_a_known_statement():
    with pytest.raises(KeyError, match="unknown statement id"):
        registry.table("t", statement="no_such_id", title="", caption="")
