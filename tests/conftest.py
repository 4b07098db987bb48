"""Hypothesis profiles (dev / ci / thorough) and precision reset per test."""
import os

import pytest
from flint import ctx
from hypothesis import HealthCheck, settings

settings.register_profile("dev", max_examples=10, deadline=None,
                          suppress_health_check=[HealthCheck.too_slow])
settings.register_profile("ci", max_examples=10, deadline=None, derandomize=True, print_blob=True,
                          suppress_health_check=[HealthCheck.too_slow])
settings.register_profile("thorough", max_examples=200, deadline=None, print_blob=True,
                          suppress_health_check=[HealthCheck.too_slow])
settings.load_profile(os.environ.get("HYPOTHESIS_PROFILE", "ci" if os.environ.get("CI") else "dev"))


@pytest.fixture(autouse=True)
def _reset_precision():
    old = ctx.prec
    ctx.prec = 128
    yield
    ctx.prec = old
