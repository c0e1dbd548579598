"""fit_process.run_in_process: the call made in a process of its own, at the priority asked
for (as the operating system reports it from inside that process), its arrays and result
handed over whole, its exception raised in the caller."""

import os

import numpy as np
import pytest

from robo_dynamics.identification.fit_process import BACKGROUND_NICE, run_in_process


def test_the_fit_runs_in_another_process_below_the_callers_priority():
    assert run_in_process(os.getpid) != os.getpid()
    ours = os.getpriority(os.PRIO_PROCESS, 0)
    assert run_in_process(os.getpriority, os.PRIO_PROCESS, 0) == min(ours + BACKGROUND_NICE,
                                                                     19)
    assert run_in_process(os.getpriority, os.PRIO_PROCESS, 0, nice=0) == ours


def test_arrays_go_and_come_back_whole_and_an_exception_is_raised_here():
    a = np.random.default_rng(0).normal(size=(3000, 6))
    b = np.arange(12.0).reshape(2, 6)[:, ::2]          # (2, 3), not contiguous
    np.testing.assert_array_equal(run_in_process(np.matmul, a[:, :2], b, nice=0), a[:, :2] @ b)
    with pytest.raises(ValueError, match="core dimension"):
        run_in_process(np.matmul, a, b, nice=0)
