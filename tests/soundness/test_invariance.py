"""Scale invariance and precision monotonicity of certified verdicts (issue 9,
items 4-5), as property tests over drawn instances, near-degenerate ones
included (near-repeated tokens, near-dependent queries, near-shared contexts).

* contexts, queries, labels times 2^k (|k| <= 200, exact): the same verdict,
  never a refutation -- the statements are scale-invariant, so must the
  checkers be;
* a certified verdict at ``prec`` is the same at 2 prec and 4 prec.
"""
from hypothesis import given, settings
from hypothesis import strategies as st

from verifier.data.near_degenerate import NEAR_KINDS, near_degenerate_instance, scale_instance
from verifier.statements import registry
from verifier.statements.runner import run_check

STATEMENTS = ("claim1", "claim2", "lemma3", "lemma4", "appendixB2", "proposition1", "theorem1", "step2",
              "appendixC")
exponents = st.integers(-200, 200)


def _instance(sid, kind, seed, delta, n):
    H = 3 if sid == "appendixB2" else 2
    context = "shared" if sid == "appendixB2" else "random"
    T = n + 3 if sid == "lemma3" else None
    return near_degenerate_instance(kind, H=H, n=n, d=n + 2, T=T, d_out=2 if sid in ("step2", "appendixC") else 1,
                                    delta=delta, seed=seed, context=context)


@settings(deadline=None)
@given(st.sampled_from(STATEMENTS), st.sampled_from(NEAR_KINDS[:3]), st.integers(0, 2**20),
       st.sampled_from([1e-3, 1e-8]), st.integers(2, 4), exponents, exponents, exponents)
def test_verdicts_are_scale_invariant(sid, kind, seed, delta, n, kc, kq, ky):
    registry.load_all()
    inst = _instance(sid, kind, seed, delta, n)
    ev = run_check(sid, inst, seed=seed % 97)
    ev_scaled = run_check(sid, scale_instance(inst, contexts=kc, queries=kq, labels=ky), seed=seed % 97)
    assert ev_scaled.verdict != "refuted" or ev.verdict == "refuted", ev_scaled.reason
    assert ev_scaled.verdict == ev.verdict, (ev.reason, ev_scaled.reason)


@settings(deadline=None)
@given(st.sampled_from(STATEMENTS[:7]), st.sampled_from(NEAR_KINDS), st.integers(0, 2**20),
       st.sampled_from([1e-4, 1e-9, 1e-12]), st.integers(2, 4))
def test_higher_precision_never_contradicts_a_certified_verdict(sid, kind, seed, delta, n):
    registry.load_all()
    inst = _instance(sid, kind, seed, delta, n)
    ev = run_check(sid, inst, prec=128, seed=seed % 97)
    assert ev.verdict != "error", ev.reason
    if ev.certified:
        for prec in (256, 512):
            ev2 = run_check(sid, inst, prec=prec, seed=seed % 97)
            assert ev2.verdict == ev.verdict, (prec, ev.reason, ev2.reason)
