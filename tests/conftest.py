"""Hypothesis profiles (dev / ci / thorough) and precision reset per test."""
import os

# Two pytest workers on two cores: one BLAS thread each (before numpy loads).
for _var in ("OPENBLAS_NUM_THREADS", "OMP_NUM_THREADS", "MKL_NUM_THREADS"):
    os.environ.setdefault(_var, "1")

import pytest  # noqa: E402
from flint import ctx  # noqa: E402
from hypothesis import HealthCheck, settings  # noqa: E402

settings.register_profile("dev", max_examples=10, deadline=None,
                          suppress_health_check=[HealthCheck.too_slow])
settings.register_profile("ci", max_examples=10, deadline=None, derandomize=True, print_blob=True,
                          suppress_health_check=[HealthCheck.too_slow])
settings.register_profile("thorough", max_examples=200, deadline=None, print_blob=True,
                          suppress_health_check=[HealthCheck.too_slow])
settings.load_profile(os.environ.get("HYPOTHESIS_PROFILE", "ci" if os.environ.get("CI") else "dev"))


@pytest.fixture(autouse=True)
def _reset_precision():
    from verifier.arith.float_bounds import _up_constants

    _up_constants.cache_clear()  # each test (and each mutant under mutmut) computes its own constants
    old = ctx.prec
    ctx.prec = 128
    yield
    ctx.prec = old
