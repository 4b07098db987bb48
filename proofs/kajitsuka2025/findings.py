"""Kajitsuka & Sato: no finding is declared (every checker is a reconstruction
of the abstract's claim, so nothing printed can be refuted here); its negative
controls are deliberately wrong variants (:mod:`verifier.statements.findings`)."""
from __future__ import annotations

from verifier.statements.findings import variant

for _sid, _control, _why in (
    ("ks_contextual_mapping", "neg_ks_hardmax_average",
     "the negation of ICLR 2024 Thm. 1 (hardmax is not a contextual mapping): refuting it agrees with the paper"),
    ("ks_contextual_mapping", "neg_ks_hardmax_first", "the same negation with another tie rule (ours)"),
    ("ks_contextual_mapping", "neg_ks_bad_projection", "a projection w outside the construction's hypothesis (ours)"),
    ("ks_ffn_memorization", "neg_ks_ffn_budget", "our construction's own parameter count lowered by one (ours)"),
    ("ks_ffn_memorization", "neg_ks_ffn_flipped_bit", "a corrupted construction (ours)"),
    ("ks_ffn_memorization", "neg_ks_ffn_conflict", "contradictory labels: a broken hypothesis (ours)"),
    ("ks_ntp_memorization", "neg_ks_ntp_no_positions", "the model without positional encodings (ours)"),
    ("ks_ntp_memorization", "neg_ks_ntp_budget", "our construction's own parameter count lowered by one (ours)"),
    ("ks_ntp_memorization", "neg_ks_ntp_conflict", "contradictory labels: a broken hypothesis (ours)"),
    ("ks_s2s_memorization", "neg_ks_s2s_no_positions", "the model without positional encodings (ours)"),
    ("ks_s2s_memorization", "neg_ks_s2s_budget", "our construction's own parameter count lowered by one (ours)"),
    ("ks_s2s_memorization", "neg_ks_s2s_conflict", "contradictory labels: a broken hypothesis (ours)"),
):
    variant(_sid, _control, _why)
