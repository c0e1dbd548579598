"""A node's numbers do not depend on the machine: NumPy's and SciPy's OpenBLAS (SciPy's
serves Clarabel, the semidefinite programs of whole-arm identification) on one thread in
every node process and dynamics_identify (blas_threads.py), whose result equals OpenBLAS
started with one thread bit for bit where two threads give other last bits."""

import os
import subprocess
import sys

from conftest import REPO

PRODUCT = """
import numpy as np
{setup}
rng = np.random.default_rng(0)
A, b = rng.normal(size=(60000, 56)), rng.normal(size=60000)
print(np.linalg.lstsq(A, b, rcond=None)[0].tobytes().hex())
"""
SCIPY = """
import numpy as np
import scipy.linalg
{setup}
rng = np.random.default_rng(0)
A, b = rng.normal(size=(60000, 56)), rng.normal(size=60000)
print(scipy.linalg.lstsq(A, b)[0].tobytes().hex())
"""
SET = "from robo_dynamics.blas_threads import single_threaded_blas; assert single_threaded_blas()"


def run(threads, setup="", product=PRODUCT):
    env = {**os.environ, "OPENBLAS_NUM_THREADS": str(threads)}
    return subprocess.run([sys.executable, "-c", product.format(setup=setup)], cwd=REPO,
                          env=env, capture_output=True, text=True, check=True).stdout


def test_a_node_process_computes_as_one_blas_thread_does():
    """With two cores, two threads give other last bits than one (what makes the setting
    matter); with one (pinned), OpenBLAS uses one thread whatever it is told."""
    one, two = run(1), run(2)
    assert (one != two) == (len(os.sched_getaffinity(0)) > 1)
    assert run(2, SET) == one


def test_scipys_blas_too():
    """SciPy's own OpenBLAS (scipy.linalg, and Clarabel through it) is set as well."""
    one, two = run(1, product=SCIPY), run(2, product=SCIPY)
    assert (one != two) == (len(os.sched_getaffinity(0)) > 1)
    assert run(2, SET, SCIPY) == one
