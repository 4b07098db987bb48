"""Constructions the certificate exporters need (:mod:`verifier.report.certificates`),
registered by name: the report layer may not import ``proofs``.  Registered
here, not in the checkers' modules, so that those stay as they are.

* ``proposition2.weight_trials``: the weights Prop. 2 and Prop. 5 try
  (Gaussian, saturated, nearly uniform);
* ``proposition5.zero_sum_instance``: tokens summing to 0 exactly (the
  finding proposition5.zero_sum).
"""
from __future__ import annotations

from verifier.statements.registry import construction

from .proposition2_shared_context_cap import build_weight_trials
from .proposition5_sum_constant_cap import zero_sum_instance

construction("proposition2.weight_trials")(build_weight_trials)
construction("proposition5.zero_sum_instance")(zero_sum_instance)
