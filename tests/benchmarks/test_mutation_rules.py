"""The rules of benchmarks/mutation.py that class a surviving mutant without a test: each must
refuse what it does not cover (a string the module reads back is not evidence text)."""
from __future__ import annotations

import importlib.util
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
_spec = importlib.util.spec_from_file_location("mutation_script", ROOT / "benchmarks" / "mutation.py")
mutation = importlib.util.module_from_spec(_spec)
_spec.loader.exec_module(mutation)

def rule(minus: list[str], plus: list[str]):
    """The rule that classes the mutant changing ``minus`` into ``plus`` in SOURCE (None: open)."""
    diff = "\n".join(["-" + m for m in minus] + ["+" + p for p in plus])
    return mutation._rule(minus, plus, diff, SOURCE)


SOURCE = '''
def check(x, trail):
    trail.append(Step("the first piece "
                      "the second piece", x))
    reason = ("read "
              "back")
    if x == "key":
        return {"a": "b"}
    note = f"{x + '; ' if x else ''}the stored {x:.3g} values"
    return reason == "read back"
'''


def test_a_piece_of_an_implicitly_concatenated_step_text_is_evidence_text():
    assert rule(['"the second piece", x))'], ['"XXthe second pieceXX", x))']) == \
        "evidence-text"
    assert rule(['trail.append(Step("the first piece "'], ['trail.append(Step("THE FIRST PIECE "']) == "evidence-text"


def test_a_compared_string_is_not_evidence_text():
    assert rule(['if x == "key":'], ['if x == "XXkeyXX":']) is None


def test_a_text_the_module_reads_back_whole_is_not_evidence_text():
    """``reason`` is a text variable, but its whole value is compared later: a piece of it decides."""
    assert rule(['"back")'], ['"XXbackXX")']) is None


def test_a_dict_value_is_evidence_text_and_code_is_not():
    assert rule(['return {"a": "b"}'], ['return {"a": "XXbXX"}']) == "evidence-text"
    assert rule(['return {"a": "b"}'], ['return {"a": None}']) is None


def test_a_raise_message_is_message_only_and_an_empty_diff_is_not():
    assert mutation._rule(['raise ValueError("bad")'], ['raise ValueError("XXbadXX")'],
                          '-raise ValueError("bad")\n+raise ValueError("XXbadXX")') == "message-only"
    assert not mutation._in_raise("")


def test_a_run_of_a_changed_module_is_stale():
    """The summary marks a stored run whose module is no longer HEAD's: its counts describe former code."""
    module = "verifier/arith/compare.py"
    assert not mutation.stale({"module": module, "module_blob": mutation._blob(module)})
    assert mutation.stale({"module": module, "module_blob": "0" * 40})


def test_an_f_strings_expression_is_code_and_its_wording_is_text():
    """An f-string is one token: a change inside its {expression} (an operator, a condition)
    is code although only a string token differs; its literal parts, and the string
    constants inside the expression, are wording."""
    line = "note = f\"{x + '; ' if x else ''}the stored {x:.3g} values\""
    for code in ("{x - '; ' if x else ''}", "{x + '; ' if (x) or True else ''}", "{x + '; ' if x and False else ''}"):
        assert rule([line], [line.replace("{x + '; ' if x else ''}", code)]) is None
    assert rule([line], [line.replace("{x:.3g}", "{None:.3g}")]) is None
    for text in ("{x + 'XX; XX' if x else ''}", "{x + '; ' if x else 'XXXX'}"):
        assert rule([line], [line.replace("{x + '; ' if x else ''}", text)]) == "evidence-text"
    assert rule([line], [line.replace("the stored", "XXthe storedXX")]) == "evidence-text"


def test_functions_are_named_as_mutmut_names_them_and_a_changed_one_is_found():
    a = "def f(x):\n    return x\n\n\nclass C:\n    def g(self):\n        return 1\n\n\ndef h():\n    return 2\n"
    b = a.replace("return 1", "return 3").replace("return x", "return x") + "\n\ndef k():\n    pass\n"
    fa, fb = mutation._functions_of(a), mutation._functions_of(b)
    assert sorted(fa) == ["x_f", "x_h", "xǁCǁg"]
    assert sorted(f for f in fb if fa.get(f) != fb[f]) == ["x_k", "xǁCǁg"]
