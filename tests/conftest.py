"""Hypothesis profiles (dev / ci / thorough) and precision reset per test."""
import os
import sys

# Two pytest workers on two cores: one BLAS thread each (before numpy loads).
for _var in ("OPENBLAS_NUM_THREADS", "OMP_NUM_THREADS", "MKL_NUM_THREADS"):
    os.environ.setdefault(_var, "1")
# ... and no helper process each (verifier/arith/second_process.py; its tests start their own)
os.environ.setdefault("MHA_VERIFY_PROCESS", "0")

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


def pytest_addoption(parser):
    parser.addoption("--another-machine", action="store_true", default=False,
                     help="compute the float steps as another CPU/BLAS might: numpy/scipy linalg inputs and "
                          "outputs moved by a few ulps, products in other summation orders "
                          "(tests/another_machine.py)")


def pytest_configure(config):
    if config.getoption("--another-machine", default=False):
        import importlib.util

        spec = importlib.util.spec_from_file_location("another_machine",
                                                      os.path.join(os.path.dirname(__file__), "another_machine.py"))
        module = importlib.util.module_from_spec(spec)
        sys.modules["another_machine"] = module
        spec.loader.exec_module(module)
        module.install()
        config.pluginmanager.register(module.Plugin(), "another-machine")


@pytest.fixture(autouse=True)
def _reset_precision():
    from verifier.arith.float_bounds import clear_constant_caches

    clear_constant_caches()  # each test (and each mutant under mutmut) computes its own constants
    old = ctx.prec
    ctx.prec = 128
    yield
    ctx.prec = old
