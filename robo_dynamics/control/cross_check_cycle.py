"""The live cross-check of the two backends, a step per joint state. No ROS here.

When one is due (`request`, e.g. from a timer) it starts at the next complete state and is
spread over the next 2 len(CROSS_CHECKED) states, one backend's evaluation of one quantity
per state, at the state taken when it began (backends/cross_check.py). `result` holds the
last finished one: {quantity: difference}.
"""

import numpy as np

from ..backends.cross_check import CrossCheckSteps
from .solver_set import CROSS_CHECKED


class CrossCheckCycle:
    def __init__(self):
        self.due = False
        self.result = {}
        self._steps = None

    def request(self):
        self.due = True

    def reset(self):
        """Forget the result and any cross-check under way (the solvers changed)."""
        self.result, self._steps = {}, None

    @property
    def active(self):
        return self.due or self._steps is not None

    def step(self, checker, solver, state, giving_way):
        """One step; a new cross-check starts at `state` (q, q̇) (None: no complete joint
        state yet); giving_way: a context the step runs in (e.g. the normal scheduler). An
        exception ends the cross-check under way and is raised."""
        steps = self._steps
        if steps is None:
            if checker is None or state is None:
                return
            self.due = False
            q, qd = state
            steps = self._steps = CrossCheckSteps(checker, solver, q, qd, np.zeros(len(q)),
                                                  CROSS_CHECKED)
        try:
            with giving_way():
                steps.step()
        except Exception:
            self._steps = None
            raise
        if steps.done:
            self.result, self._steps = steps.report, None
